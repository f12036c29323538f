"""LLM test fixtures: a real OpenAI-compatible HTTP server on 127.0.0.1 that plays scripted replies.

Tests queue replies (status, body, delay) and read back every request the server received, so they
check what actually went over the wire: prompts, headers and how many calls were made.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    delay_s: float = 0.0


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def prompt(self) -> str:
        """All message contents of a chat request, joined: what the model was shown."""
        return "\n".join(message["content"] for message in self.json["messages"])


def chat_body(content: str) -> bytes:
    """An OpenAI chat-completions reply whose first choice says `content`."""
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
    ).encode()


class ScriptedServer:
    """Answers each POST with the next queued reply (HTTP 500 when the script has run out)."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.received: list[Received] = []
        # Set on shutdown so a handler sleeping out a scripted delay stops at once.
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # A short poll interval keeps shutdown, and so each test's teardown, fast.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, content: str, *, delay_s: float = 0.0) -> None:
        self.replies.append(Reply(200, chat_body(content), delay_s))

    def reply_raw(self, status: int, body: bytes, *, delay_s: float = 0.0) -> None:
        self.replies.append(Reply(status, body, delay_s))

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.received.append(Received(self.path, dict(self.headers.items()), body))
                reply = server.replies.popleft() if server.replies else Reply(500, b"script exhausted")
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    return
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout test); nothing is left to answer.
                    pass

            def log_message(self, format: str, *args: object) -> None:
                """Keep test output clean."""

        return Handler


@pytest.fixture
def llm_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def refused_url() -> str:
    """A loopback URL where nothing listens: a port bound and released just now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
