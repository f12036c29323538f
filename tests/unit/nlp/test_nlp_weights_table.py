"""core/nlp/weights_table.py: the tagger's weights read in place give every feature's weights as parsed."""

from __future__ import annotations

import numpy as np
import pytest

from core.nlp import tagger
from core.nlp.weights_table import WeightsTable, table_bytes


def _row(table: WeightsTable, feature: str) -> list[float] | None:
    f = table.find(feature)
    if f is None:
        return None
    row = np.zeros(len(table.classes))
    table.fill(f, row)
    return row.tolist()


def _expected(by_class: dict[str, float], classes: tuple[str, ...]) -> list[float]:
    return [by_class.get(c, 0.0) for c in classes]


def test_every_shipped_feature_reads_back_its_weights_bit_for_bit_and_an_unseen_one_none():
    document = tagger.read_weights()
    table = WeightsTable(table_bytes(document["weights"], document["tagdict"], document["classes"]))
    assert table.classes == tuple(sorted(document["classes"])) and table.tagdict == document["tagdict"]
    assert table.features == len(document["weights"])
    for feature, by_class in document["weights"].items():
        assert _row(table, feature) == _expected(by_class, table.classes), feature
    assert _row(table, "i word no-such-word-in-the-treebank") is None


def test_colliding_features_probe_on_and_names_outside_ascii_are_found():
    # 1,000 features in 2,048 slots: some share a slot and are found further on.
    weights = {f"i word w{n}é": {"NOUN": n / 7, "VERB": -n} for n in range(1000)}
    table = WeightsTable(table_bytes(weights, {"the": "DET"}, ["VERB", "NOUN"]))
    for n in range(1000):
        assert _row(table, f"i word w{n}é") == [n / 7, float(-n)]
    assert _row(table, "i word w1000é") is None


def test_bytes_that_are_not_a_whole_table_are_refused():
    raw = table_bytes({"bias": {"NOUN": 1.0}}, {}, ["NOUN"])
    with pytest.raises(ValueError):
        WeightsTable(b'{"format": "other"}\n' + raw.split(b"\n", 1)[1])
    with pytest.raises(ValueError):
        WeightsTable(raw[: len(raw) - 3])
