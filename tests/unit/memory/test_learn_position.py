"""scripts/learn_position.py's fit, on turns made up here: where the right unit sits decides the priors."""

from __future__ import annotations

import json

import numpy as np

from scripts.learn_position import BUCKETS, fit, priors, top1, write_weights


def _turn(right_bucket: str, scores: list[float], buckets: list[str]) -> tuple[str, np.ndarray, np.ndarray]:
    rows = [[score] + [float(b == name) for name in BUCKETS] for score, b in zip(scores, buckets)]
    right = [float(b == right_bucket) for b in buckets]
    return "s", np.array(rows), np.array(right)


def test_the_bucket_the_answer_keeps_being_in_gets_the_largest_prior():
    # The right unit is the one right after the last evidence, though another scores as high.
    data = [_turn("next", [0.5, 0.5, 0.2], ["further", "next", "same"]) for _ in range(30)]
    data += [_turn("further", [0.9, 0.1, 0.1], ["further", "next", "same"]) for _ in range(10)]
    w = fit(data)
    learned = priors(w)
    assert learned["next"] == max(learned.values()) and min(learned.values()) == 0.0
    assert top1(w, data) > top1(np.eye(len(w))[0], data)


def test_a_score_that_tells_nothing_gives_no_priors():
    assert priors(np.array([-1.0, 2.0, 1.0, 0.0, 0.0])) == dict.fromkeys(BUCKETS, 0.0)


def test_writing_the_priors_keeps_what_learn_focus_stored(tmp_path):
    path = tmp_path / "position_weights.json"
    path.write_text(json.dumps({"weights": {"next": 0.1}, "focus": {"min_prior": 0.58}}), encoding="utf-8")
    write_weights(path, {"weights": {"next": 0.3}, "learned_by": "test"})
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "weights": {"next": 0.3},
        "learned_by": "test",
        "focus": {"min_prior": 0.58},
    }
    fresh = tmp_path / "new.json"
    write_weights(fresh, {"weights": {}})
    assert json.loads(fresh.read_text(encoding="utf-8")) == {"weights": {}}
