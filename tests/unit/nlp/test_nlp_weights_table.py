"""core/nlp/weights_table.py: the tagger's weights read in place give every feature's weights as parsed."""

from __future__ import annotations

import pytest

from core.nlp import tagger
from core.nlp.weights_table import WeightsTable, table_bytes


def test_every_shipped_feature_reads_back_its_weights_in_order_and_an_unseen_one_none():
    document = tagger.read_weights()
    table = WeightsTable(table_bytes(document["weights"], document["tagdict"], document["classes"]))
    index = {name: i for i, name in enumerate(sorted(document["classes"]))}
    assert table.classes == tuple(sorted(document["classes"])) and table.tagdict == document["tagdict"]
    for feature, by_class in document["weights"].items():
        assert table.pairs(feature) == tuple((index[c], w) for c, w in by_class.items()), feature
    assert table.pairs("i word no-such-word-in-the-treebank") is None


def test_colliding_features_probe_on_and_names_outside_ascii_are_found():
    # 1,000 features in 2,048 slots: some share a slot and are found further on.
    weights = {f"i word w{n}é": {"NOUN": n / 7, "VERB": -n} for n in range(1000)}
    table = WeightsTable(table_bytes(weights, {"the": "DET"}, ["VERB", "NOUN"]))
    for n in range(1000):
        assert table.pairs(f"i word w{n}é") == ((0, n / 7), (1, float(-n)))
    assert table.pairs("i word w1000é") is None


def test_bytes_that_are_not_a_whole_table_are_refused():
    raw = table_bytes({"bias": {"NOUN": 1.0}}, {}, ["NOUN"])
    with pytest.raises(ValueError):
        WeightsTable(b'{"format": "other"}\n' + raw.split(b"\n", 1)[1])
    with pytest.raises(ValueError):
        WeightsTable(raw[: len(raw) - 3])
