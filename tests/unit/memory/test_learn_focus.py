"""scripts/learn_focus.py on rows made up here: each fold's value is the best on the other folds,
the strictest on a tie, and its held-out F1 is reported beside the baseline's."""

from __future__ import annotations

import json

from core.answer.support import SUPPORT_THRESHOLD
from scripts.learn_focus import main


def _rows(path, f1_of) -> str:
    stories = [f"story-{i:02d}" for i in range(10)]
    rows = [
        {"story": story, "turn": turn, "f1": f1_of(story, turn), "context_dependent": turn > 1}
        for story in stories
        for turn in (1, 2)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_every_fold_picks_the_value_that_wins_on_the_other_stories(tmp_path, capsys):
    general = _rows(tmp_path / "general.jsonl", lambda story, turn: 0.5 if turn == 1 else 0.0)
    lenient = _rows(tmp_path / "lenient.jsonl", lambda story, turn: 0.5)
    tied = _rows(tmp_path / "tied.jsonl", lambda story, turn: 0.5 if turn == 1 else 0.0)
    assert main(["--key", "min_support", f"{SUPPORT_THRESHOLD}={general}", f"0={lenient}", f"0.5={tied}"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["min_support"] == 0.0 and len(out["cross_validated"]) == 5
    for fold in out["cross_validated"]:
        assert fold["threshold"] == 0.0 and fold["f1"] == 50.0 and fold["f1_general"] == 25.0
        assert fold["f1_context_dependent"] == 50.0 and fold["f1_context_dependent_general"] == 0.0


def test_on_a_tie_the_strictest_value_is_kept(tmp_path, capsys):
    same = [_rows(tmp_path / f"{t}.jsonl", lambda story, turn: 0.5) for t in ("a", "b")]
    assert main(["--key", "min_support", f"0={same[0]}", f"{SUPPORT_THRESHOLD}={same[1]}"]) == 0
    assert json.loads(capsys.readouterr().out)["min_support"] == SUPPORT_THRESHOLD
