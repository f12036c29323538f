"""The LLM endpoint: its configuration and a small client for OpenAI-compatible chat completions.

Only the stdlib talks HTTP here (http.client), and only to the one configured endpoint: no proxies
and no redirects are followed, so a request can never reach another host.
"""

import json
import os
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar, cast
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from core.infra.cancel import CancelToken
from core.infra.config import ConfigError, validated
from core.infra.diagnostics import Code, Diagnostic
from core.infra.json_limits import TooDeep, check_depth, long_number
from core.infra.resources import config_dir
from core.infra.terminal_text import terminal_safe

ENV_BASE_URL = "MRPTUI_LLM_BASE_URL"
ENV_MODEL = "MRPTUI_LLM_MODEL"
ENV_API_KEY = "MRPTUI_LLM_API_KEY"
_ENV_FIELDS = {ENV_BASE_URL: "base_url", ENV_MODEL: "model", ENV_API_KEY: "api_key"}

# A chat reply is a few kilobytes; the cap keeps a misbehaving endpoint from filling memory.
_MAX_REPLY_BYTES = 4 * 1024 * 1024
# Error reasons quote the start of a bad body: enough to recognise it, short enough for one line.
_EXCERPT_CHARS = 200
# How often a call's watchdog checks its deadline and cancel token.
_WATCH_INTERVAL_S = 0.02


class LlmConfig(BaseModel):
    """`config/llm.json`; `base_url` None means no endpoint, and then no LLM plugin connects anywhere."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid", allow_inf_nan=False
    )

    base_url: str | None = Field(default=None, max_length=2_000)
    model: str = Field(default="gpt-4o-mini", min_length=1, max_length=200)
    # Model per plugin role ("fast", "deep"); a role not listed uses `model`.
    models: dict[str, str] = {}
    # SecretStr keeps the key out of repr(), str() and model dumps, so it cannot reach logs or traces.
    api_key: SecretStr | None = None
    # Each call; the request's own LLM deadline (engine.json `budgets.llmDeadlineMs`) also applies.
    timeout_s: float = Field(default=20.0, gt=0, le=600, alias="timeoutSeconds")
    temperature: float = Field(default=0.0, ge=0, le=2)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return check_http_url(value)

    def model_for(self, role: str | None) -> str:
        return self.models.get(role, self.model) if role else self.model


def check_http_url(value: str | None) -> str | None:
    """An endpoint base URL: http(s), a host, a valid port if any, no query or fragment."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(f"expected an http:// or https:// URL with a host and no query, got {value!r}")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        # urlsplit only checks the port when asked; unchecked, every call would raise instead.
        raise ValueError(f"the port must be a number from 1 to 65535, got {value!r}")
    return value


_Endpoint = TypeVar("_Endpoint", bound=BaseModel)


def load_llm_config(directory: Path | None = None, environ: Mapping[str, str] | None = None) -> LlmConfig:
    """`llm.json` from the config directory, then the MRPTUI_LLM_* variables (empty ones are ignored).

    A missing file means defaults (no endpoint): the LLM is optional, unlike the other configs.
    """
    return load_endpoint_config(LlmConfig, (directory or config_dir()) / "llm.json", _ENV_FIELDS, environ)


def load_endpoint_config(
    model: type[_Endpoint], path: Path, env_fields: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> _Endpoint:
    """An optional endpoint config file (missing = defaults), then its environment variables
    (var → field; empty ones are ignored). Shared by the LLM and the embeddings endpoints."""
    config = validated(model, path) if path.exists() else model()
    env = os.environ if environ is None else environ
    for var, name in env_fields.items():
        value = env.get(var)
        if not value:
            continue
        try:
            config = model.model_validate({**config.model_dump(), name: value})
        except ValidationError as exc:
            # The value itself is not echoed: for the key variable that would print the secret.
            messages = "; ".join(err["msg"] for err in exc.errors(include_input=False))
            raise ConfigError(
                [Diagnostic(code=Code.INVALID_CONFIG, message=f"{var}: {messages}", file=f"${var}")]
            ) from None
    return config


class LlmError(Exception):
    """Any failure to get a usable reply; `reason` is one line fit for a trace event."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# The reply models are built on first use: a run with no LLM endpoint (a plain `mrptui ask`)
# never validates a reply (issue 41).
_REPLY = ConfigDict(defer_build=True)


class _Message(BaseModel):
    model_config = _REPLY

    content: str | None = None


class _Choice(BaseModel):
    model_config = _REPLY

    message: _Message


class _ChatReply(BaseModel):
    """The part of an OpenAI chat-completions reply we read; other fields are ignored."""

    model_config = _REPLY
    choices: list[_Choice] = Field(min_length=1)


def _excerpt(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")[:_EXCERPT_CHARS]


class _Watchdog:
    """Shuts a call's socket down when the deadline passes or the token is cancelled.

    The socket timeout bounds each read, not the call: an endpoint dripping a byte a second never
    trips it. Shutting the socket down from another thread ends any blocked read at once.
    """

    def __init__(self, deadline: float | None, deadline_name: str, cancel: CancelToken | None):
        # The socket itself, not the connection's attribute: http.client drops `connection.sock`
        # as soon as the headers say the server will close, while the body is still being read.
        self._sock: socket.socket | None = None
        self._deadline = deadline
        self._deadline_name = deadline_name
        self._cancel = cancel
        self._done = threading.Event()
        self.reason = ""
        self._thread = threading.Thread(target=self._watch, name="llm-watchdog", daemon=True)

    def expired(self) -> str:
        if self._cancel is not None and self._cancel.cancelled:
            return f"LLM call cancelled: {self._cancel.reason}"
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return f"LLM calls stopped: {self._deadline_name} passed"
        return ""

    def arm(self, sock: socket.socket) -> None:
        """Watch this connected socket (connecting itself is bounded by the socket timeout)."""
        self._sock = sock

    def _watch(self) -> None:
        while not self._done.wait(_WATCH_INTERVAL_S):
            self.reason = self.reason or self.expired()
            sock = self._sock
            if self.reason and sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return

    def __enter__(self) -> "_Watchdog":
        self.reason = self.expired()
        if self.reason:
            raise LlmError(self.reason)
        if self._deadline is not None or self._cancel is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._done.set()


class LlmClient:
    """Sends chat completions to the configured endpoint; every failure becomes an `LlmError`."""

    def __init__(self, config: LlmConfig):
        self.config = config

    @property
    def configured(self) -> bool:
        return self.config.base_url is not None

    @property
    def endpoint(self) -> str:
        """`{base_url}/v1/chat/completions`, whether or not base_url already ends in /v1."""
        if self.config.base_url is None:
            raise LlmError("no LLM endpoint configured")
        base = self.config.base_url.rstrip("/")
        base = base.removesuffix("/v1")
        return f"{base}/v1/chat/completions"

    def chat(
        self,
        messages: list[dict],
        *,
        response_format_json: bool = False,
        role: str | None = None,
        deadline: float | None = None,
        deadline_name: str = "the LLM deadline",
        cancel: CancelToken | None = None,
    ) -> str:
        """POST the messages and return choices[0].message.content.

        `deadline` (time.monotonic()) and `cancel` stop the call wherever it is, even mid-reply.
        """
        payload: dict[str, object] = {
            "model": self.config.model_for(role),
            "messages": messages,
            "temperature": self.config.temperature,
        }
        if response_format_json:
            payload["response_format"] = {"type": "json_object"}
        status, body = self._post(json.dumps(payload).encode("utf-8"), deadline, deadline_name, cancel)
        if not 200 <= status < 300:
            raise LlmError(f"LLM endpoint returned HTTP {status}: {_excerpt(body)}")
        try:
            text = body.decode("utf-8")
            check_depth(text)  # json.loads would recurse once per bracket: RecursionError
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise LlmError(f"LLM endpoint returned a non-JSON body: {_excerpt(body)}") from None
        except TooDeep as exc:
            raise LlmError(f"LLM endpoint returned {exc} (at character {exc.col:,})") from None
        except ValueError as exc:  # an integer past the interpreter's digit limit
            found = long_number(text)
            raise LlmError(f"LLM endpoint returned {found[0] if found else exc}") from None
        try:
            reply = _ChatReply.model_validate(data)
        except ValidationError:
            raise LlmError(f"LLM reply has no choices[0].message: {_excerpt(body)}") from None
        content = reply.choices[0].message.content
        if content is None:
            raise LlmError("LLM reply has no message content")
        # Untrusted bytes: escaped here, so no answer, reason or trace can carry a terminal command
        # into the CLI or the explorer (which draws text as it is).
        return terminal_safe(content)

    def _post(
        self, body: bytes, deadline: float | None, deadline_name: str, cancel: CancelToken | None
    ) -> tuple[int, bytes]:
        import http.client  # only a configured endpoint pays for http/ssl/email at import time

        parts = urlsplit(self.endpoint)
        timeout = self.config.timeout_s
        connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        # The timeout bounds connecting and each read; the watchdog bounds the whole call.
        if deadline is not None:
            timeout = max(0.001, min(timeout, deadline - time.monotonic()))
        connection = connection_class(cast(str, parts.hostname), parts.port, timeout=timeout)  # check_http_url: a host
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key is not None:
            headers["Authorization"] = f"Bearer {self.config.api_key.get_secret_value()}"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        watchdog = _Watchdog(deadline, deadline_name, cancel)
        try:
            with watchdog:
                connection.connect()
                watchdog.arm(connection.sock)
                connection.request("POST", path, body=body, headers=headers)
                response = connection.getresponse()
                reply = response.status, response.read(_MAX_REPLY_BYTES)
            if watchdog.reason:
                raise LlmError(watchdog.reason)
            return reply
        except TimeoutError:
            reason = watchdog.reason or watchdog.expired()
            raise LlmError(reason or f"LLM endpoint timed out after {self.config.timeout_s:g} s") from None
        except ConnectionRefusedError:
            raise LlmError(
                f"LLM endpoint refused the connection ({parts.hostname}:{parts.port or 'default port'})"
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise LlmError(
                watchdog.reason or watchdog.expired() or f"LLM endpoint unreachable: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            connection.close()
