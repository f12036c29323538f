"""The optional dense lane against a real embeddings server on 127.0.0.1 that the tests start.

The server computes deterministic vectors: a text's words are mapped to concepts (a few words
share one, the way an embedding model places synonyms together) and hashed into 32 dimensions.
Modes make it down, slow or answer garbage; the lane must say so and the engine fall through.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from core.eval import beir as ireval
from core.infra.config import DenseConfig, Lane, load_retrieval_config
from core.infra.embeddings import EmbeddingClient, EmbeddingConfig, EmbeddingError
from core.infra.resources import config_dir
from core.kb.dense import DenseLane
from core.kernel.contract import PluginType, Request, RunContext, Status
from core.kernel.session import Session
from core.units import Act, Caller, Intent

CONCEPTS = {"notebook": "computer", "laptop": "computer", "portable": "computer", "kettle": "boil", "teapot": "boil"}
DIM = 32


def embed_text(text: str) -> list[float]:
    vector = np.zeros(DIM)
    for word in text.lower().replace(".", " ").replace("\n", " ").split():
        concept = CONCEPTS.get(word, word)
        slot = int.from_bytes(hashlib.blake2b(concept.encode(), digest_size=4).digest(), "little") % DIM
        vector[slot] += 1.0
    if not vector.any():
        vector[0] = 1.0
    return list(vector)


class EmbeddingServer:
    def __init__(self) -> None:
        self.mode = "ok"
        self.inputs: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.inputs.extend(body["input"])
                if server.mode == "slow":
                    time.sleep(1.0)
                if server.mode == "garbage":
                    payload = b"<html>not json</html>"
                elif server.mode == "short":
                    payload = json.dumps({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}).encode()
                elif server.mode == "wide":  # the same model name, now twice the dimensions
                    data = [{"index": i, "embedding": embed_text(t) * 2} for i, t in enumerate(body["input"])]
                    payload = json.dumps({"data": data}).encode()
                elif server.mode == "nan":
                    data = [{"index": i, "embedding": [float("nan")] * DIM} for i in range(len(body["input"]))]
                    payload = json.dumps({"data": data}).encode()
                else:
                    data = [{"index": i, "embedding": embed_text(t)} for i, t in enumerate(body["input"])]
                    payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (the slow mode)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    running = EmbeddingServer()
    yield running
    running.close()


def lane(url: str, tmp_path: Path, timeout: float = 5.0) -> DenseLane:
    config = EmbeddingConfig(base_url=url, timeout_s=timeout, batch_size=4)
    return DenseLane(config, DenseConfig(lane_min_score=0.1))


KB_TEXT = """## Context Unit shop::chunk-000::unit-000
Role: Constraint
Topic: Laptop returns
Claim: A laptop may be returned within 30 days.

## Context Unit shop::chunk-000::unit-001
Role: Constraint
Topic: Kettle returns
Claim: A kettle may be returned within 14 days.

## Context Unit shop::chunk-000::unit-002
Role: Constraint
Topic: Staff laptop discount
Claim: Staff pay half price for a laptop.
Acl: staff
"""


@pytest.fixture
def shop(tmp_path: Path, server: EmbeddingServer) -> Path:
    """A KB plus a config folder whose kb-balanced profile runs the dense lane against the server."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "shop.md").write_text(KB_TEXT, encoding="utf-8")
    config = tmp_path / "config"
    shutil.copytree(config_dir(), config)
    retrieval = json.loads((config / "retrieval.json").read_text())
    retrieval["profiles"]["kb-balanced"]["lanes"] = ["bm25", "dense"]
    (config / "retrieval.json").write_text(json.dumps(retrieval))
    embeddings = {"baseUrl": server.url, "timeoutSeconds": 0.3}
    (config / "embeddings.json").write_text(json.dumps(embeddings))
    return tmp_path


def run_balanced(root: Path, question: str):
    session = Session([root / "kb"], root / "config")
    plugin = session.registry.get("kb-balanced", PluginType.KB)
    context = RunContext(
        request=Request(question=question, caller=Caller()), view=session.view(Caller()), services=None
    )
    return plugin.retrieve(context, Intent(act=Act.VERIFY, target=question, output="text"))


def test_dense_lane_bridges_words_the_kb_does_not_use(shop: Path, server: EmbeddingServer) -> None:
    result = run_balanced(shop, "return my notebook")
    assert result.status is Status.SUCCESS
    laptop = result.outcome.candidate("shop::chunk-000::unit-000")
    assert laptop is not None and laptop.lane(Lane.DENSE) > 0.5 and laptop.kept
    assert result.outcome.evidence_ids[0] == "shop::chunk-000::unit-000"
    assert result.trace[0].candidates[0].dense == laptop.lane(Lane.DENSE)
    # Only the public caller's units were embedded: the staff unit never went over the wire.
    assert not any("Staff" in text for text in server.inputs)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("slow", "embeddings endpoint timed out after 0.3 s"),
        ("garbage", "reply is not an embeddings list"),
        ("short", "returned 1 vectors for"),
        ("nan", "non-finite"),
    ],
)
def test_a_failing_endpoint_is_named_and_the_other_lanes_carry_on(shop, server, mode, reason) -> None:
    server.mode = mode
    result = run_balanced(shop, "laptop returns")
    assert result.status is Status.SUCCESS
    assert "dense lane unsupported" in result.reason and reason in result.reason
    assert result.outcome.evidence_ids[0] == "shop::chunk-000::unit-000"  # BM25 still answers
    assert all(c.lane(Lane.DENSE) is None for c in result.outcome.candidates)


def test_a_server_that_is_down(shop: Path, server: EmbeddingServer) -> None:
    server.close()
    result = run_balanced(shop, "laptop returns")
    assert "dense lane unsupported" in result.reason and "refused the connection" in result.reason
    assert result.outcome.evidence_ids


def test_without_an_endpoint_the_lane_is_unsupported(shop: Path) -> None:
    (shop / "config" / "embeddings.json").unlink()
    result = run_balanced(shop, "laptop returns")
    assert "dense lane unsupported (no embeddings endpoint configured" in result.reason
    with pytest.raises(EmbeddingError, match="no embeddings endpoint"):
        EmbeddingClient(EmbeddingConfig()).embed(["x"])


def test_eval_beir_reports_the_dense_lane_and_fuses_it(
    tmp_path: Path, server: EmbeddingServer, capsys, monkeypatch
) -> None:
    from mrptui.cli import main
    from tests.support.beir_files import write_beir

    docs = [
        ("d1", "Laptop care", "Keep the laptop battery cool."),
        ("d2", "Kettle care", "Descale the kettle monthly."),
    ]
    folder = write_beir(tmp_path / "care", docs, {"q1": "notebook battery"}, {"q1": {"d1": 1}})
    collection = ireval.load_beir(folder)
    runs = ireval.run_systems(collection, load_retrieval_config(), dense=lane(server.url, tmp_path))
    assert set(runs) == {"bm25", "hdc", "dense", "fusion:weighted", "fusion:rrf"}
    assert next(iter(runs["dense"]["q1"])) == "d1"
    monkeypatch.setenv("MRPTUI_EMBED_BASE_URL", server.url)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert main(["eval", "--beir", str(folder), "--json"]) == 0
    systems = json.loads(capsys.readouterr().out)["systems"]
    assert systems["dense"]["mrr@10"] == 1.0
    server.mode = "garbage"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg2"))
    assert main(["eval", "--beir", str(folder)]) == 2
    assert "dense lane: embeddings endpoint reply is not an embeddings list" in capsys.readouterr().err


def _write_kb(tmp_path: Path) -> Path:
    path = tmp_path / "shop.md"
    path.write_text(KB_TEXT, encoding="utf-8")
    return path
