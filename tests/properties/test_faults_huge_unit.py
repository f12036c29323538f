"""One huge unit cannot make an `ask` huge: HDC encodes a topic or claim window from its first
`hdc.maxUnitTokens` tokens (encoding took 1 KB a token: a 1.3M-token claim peaked at 2.4 GB), the
cap names itself in the attempt's reason when it bites, and it is a ranged config number.
The peak itself is measured by `python -m benchmarks --ops ask_adversarial`."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from core.infra.cancel import Cancelled, CancelToken, bound
from core.infra.config import HdcConfig
from core.kernel.contract import Request
from core.kernel.events import AttemptFinished
from core.kernel.session import Session
from core.retrieval.hdc.encoding import encode_units, encoding_options
from core.retrieval.hdc.vectors import encode_ngrams_batch
from core.units import KnowledgeUnit, Role

WORDS = [f"w{i % 97}x{i % 13}" for i in range(3_000)]


def test_a_sequence_over_the_cap_encodes_as_its_first_tokens():
    whole = encode_ngrams_batch([WORDS, WORDS[:10]], "seed", max_tokens=100)
    first = encode_ngrams_batch([WORDS[:100], WORDS[:10]], "seed")
    np.testing.assert_array_equal(whole, first)
    assert not np.array_equal(encode_ngrams_batch([WORDS], "seed")[0], first[0])


def test_the_cap_is_part_of_the_stored_vectors_key_and_ranged():
    assert encoding_options(HdcConfig(max_unit_tokens=100), None) != encoding_options(HdcConfig(), None)
    with pytest.raises(ValueError, match="max_unit_tokens|maxUnitTokens"):
        HdcConfig(max_unit_tokens=10**7)
    assert HdcConfig.model_validate({"maxUnitTokens": 64}).max_unit_tokens == 64


def test_encoding_polls_the_plugin_token():
    unit = KnowledgeUnit(
        id="huge::chunk-000::unit-000",
        source_id="huge",
        chunk_id="chunk-000",
        role=Role.EXPLANATION,
        topic="huge",
        claim=". ".join(" ".join(WORDS[i : i + 20]) for i in range(0, 3_000, 20)) + ".",
    )
    token = CancelToken()
    token.cancel("maxRequestMemoryMb passed")
    with bound(token), pytest.raises(Cancelled):
        encode_units([unit], HdcConfig())


def test_the_cap_names_itself_in_the_attempt_reason(tmp_path, config_path, monkeypatch):
    monkeypatch.setenv("MRPTUI_NO_CACHE", "1")
    kb = tmp_path / "kb"
    kb.mkdir()
    claim = " ".join(WORDS[:400])
    (kb / "huge.md").write_text(
        f"## Context Unit huge::chunk-000::unit-000\nRole: Explanation\nTopic: a long list\nClaim: {claim}.\n",
        encoding="utf-8",
    )
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    retrieval = json.loads((config / "retrieval.json").read_text())
    retrieval.setdefault("hdc", {})["maxUnitTokens"] = 64
    (config / "retrieval.json").write_text(json.dumps(retrieval))
    session = Session.open([kb], config)
    events = list(session.run(Request(question="How do I use w5x5?", pins={"kb": "kb-balanced"})))
    attempt = next(e for e in events if isinstance(e, AttemptFinished) and e.plugin == "kb-balanced")
    assert "hdc.maxUnitTokens: 1 text(s) encoded from their first 64 tokens" in attempt.reason, attempt
