"""scripts/learn_referents.py on instances made up here: a story's own labels never decide the
weights or the threshold it is reported with (cross-validation over stories), and a threshold is
only set where held-out precision reaches the target."""

from __future__ import annotations

import numpy as np

from core.memory.referents import FEATURES
from scripts.learn_referents import cross_validated, decide, fit, held_out, thresholds_of

AHEAD = FEATURES.index("ahead")


def _instance(story: str, right_is_near: bool) -> tuple[str, np.ndarray, np.ndarray, str]:
    """Two candidates: one said just after the previous answer (ahead 1), one far back."""
    x = np.zeros((2, len(FEATURES)))
    x[:, FEATURES.index("bias")] = 1.0
    x[0, AHEAD] = 1.0
    y = np.array([1.0, 0.0]) if right_is_near else np.array([0.0, 1.0])
    return story, x, y, "she"


def _data(flip: str = "") -> list:
    return [_instance(f"s{i:02d}", (j % 5 != 0) != (flip == f"s{i:02d}")) for i in range(10) for j in range(10)]


def test_the_feature_that_finds_the_referent_gets_the_weight():
    w = fit(_data())
    assert w[AHEAD] > 1.0
    assert all(p > 0.5 for _, p, _ in decide(w, _data()[:3]))


def test_a_storys_own_labels_never_change_its_held_out_decisions():
    plain = held_out(_data(), 5)
    flipped = held_out(_data(flip="s03"), 5)
    story = [i for i, d in enumerate(_data()) if d[0] == "s03"]
    assert [plain[i][1] for i in story] == [flipped[i][1] for i in story]  # same probabilities
    assert [plain[i][2] for i in story] != [flipped[i][2] for i in story]  # only their rightness differs


def test_outer_fold_thresholds_are_chosen_without_the_fold():
    plain = cross_validated(_data(), 0.7)["thresholds_by_fold"]
    flipped = cross_validated(_data(flip="s03"), 0.7)["thresholds_by_fold"]
    fold = sorted({d[0] for d in _data()}).index("s03") % 5
    assert plain[fold] == flipped[fold]


def test_a_group_whose_precision_never_reaches_the_target_is_never_rewritten():
    decisions = [("she", 0.9, i % 2 == 0) for i in range(40)] + [("it", 0.9, True) for _ in range(40)]
    thresholds = thresholds_of(decisions, 0.7)
    assert thresholds["she"] == 1.0 and thresholds["it"] < 1.0


def test_of_thresholds_with_as_many_right_rewrites_the_stricter_is_chosen():
    # Above 0.5 only the wrong low-confidence rewrites drop out: the same right ones, fewer wrong.
    decisions = [("it", 0.9, True) for _ in range(20)] + [("it", 0.3, False) for _ in range(5)]
    assert thresholds_of(decisions, 0.7)["it"] == 0.9


def test_every_outer_folds_precision_and_rewrites_are_reported():
    report = cross_validated(_data(), 0.7)
    assert len(report["by_fold"]) == 5
    assert sum(fold["rewrites"] for fold in report["by_fold"]) == report["all"]["rewrites"]
    assert sum(fold["right"] for fold in report["by_fold"]) == report["all"]["right"]
