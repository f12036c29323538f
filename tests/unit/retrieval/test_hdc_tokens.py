"""HDC vectors encoded from a segment's own token ids (`encode_tokenised`) equal a from-scratch
encoding of the units' text, bit for bit, for every encoding option: claim windows (including
bodies whose sentences drop a numbered list's markers), character n-grams and learned vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.cnl import to_markdown
from core.infra.config import HdcConfig
from core.kb.knowledge_base import KnowledgeBase
from core.retrieval.hdc.encoding import encode_units, learn_model, unit_windows
from core.retrieval.hdc.tokens import encode_tokenised
from core.store import SegmentStore
from core.text.tokenizer import tokenize
from tests.support.bells_kb import bell_units

ENCODINGS = [
    HdcConfig(),  # sentence windows of one, character 3-grams
    HdcConfig(claim_window=2, char_ngrams=4),
    HdcConfig(claim_window=0, char_ngrams=0),
    HdcConfig(claim_window=1, char_ngrams=5, context_vectors=24),
    HdcConfig(claim_window=0, max_unit_tokens=16),  # long claims cut at hdc.maxUnitTokens
]


@pytest.fixture(scope="module")
def stored_kb(tmp_path_factory) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("bells")
    (root / "kb").mkdir()
    for source, copies in (("foundry", 3), ("tower", 2)):
        (root / "kb" / f"{source}.md").write_text(to_markdown(bell_units(source, copies)), encoding="utf-8")
    store = SegmentStore(root / "cache")
    KnowledgeBase.load([root / "kb"], store)
    kb = KnowledgeBase.load([root / "kb"], store)  # segments read back: mapped terms, stored words
    assert store.loads == 2
    return kb


def test_some_body_has_sentences_that_drop_tokens_of_the_body(stored_kb: KnowledgeBase) -> None:
    """The numbered list's markers ("1.") are tokens of the body but not of its sentences, so
    that body takes the path that encodes each window's own tokens."""
    bodies = [u.body for segment in stored_kb._stored.segments.values() for u in segment.units]
    assert any(len(tokenize(" ".join(unit_windows(b, 1)))) < len(tokenize(b)) for b in bodies)


@pytest.mark.parametrize("config", ENCODINGS, ids=["default", "window2-4grams", "whole-plain", "learned", "capped"])
def test_segment_tokens_encode_the_same_vectors_as_the_text(stored_kb: KnowledgeBase, config: HdcConfig) -> None:
    for segment in stored_kb._stored.segments.values():
        units = list(segment.units)
        model = learn_model(units, config)
        fresh = encode_units(units, config, model)
        stored = encode_tokenised(units, segment.words, segment.terms, segment.lengths, config, model)
        assert len(fresh[2]) == len(units) and int(fresh[2].sum()) == len(fresh[1])
        for expected, got in zip(fresh, stored, strict=True):
            np.testing.assert_array_equal(got, expected)
        if config.claim_window == 1:
            assert int(fresh[2].max()) > 1  # several windows per body were compared


def test_an_empty_segment_encodes_to_empty_arrays() -> None:
    topic, claim, counts = encode_tokenised([], (), np.zeros(0, np.int32), np.zeros((0, 7), np.int32), HdcConfig())
    assert topic.shape == (0, 64) and claim.shape == (0, 64) and counts.shape == (0,)


def test_tokens_outside_a_segment_vocabulary_still_encode(tmp_path: Path) -> None:
    """A window's own tokens that the segment's words lack get ids after them (never seen in
    practice, as sentences only drop words; the encoder must not depend on that)."""
    unit = bell_units("loose", 1)[1]
    config = HdcConfig()
    words = ("tune", "cast", "bell")
    terms = np.array([0, 1, 2], dtype=np.int32)
    lengths = np.zeros((1, 7), dtype=np.int32)
    lengths[0, 0] = 3
    topic, claim, counts = encode_tokenised([unit], words, terms, lengths, config)
    fresh = encode_units([unit], config)
    np.testing.assert_array_equal(topic, fresh[0])
    np.testing.assert_array_equal(claim, fresh[1])
    np.testing.assert_array_equal(counts, fresh[2])
