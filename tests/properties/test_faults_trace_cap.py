"""`trace.maxAnswerChars` cuts the trace's copy of an answer, never the answer validators read:
the cap cannot change an answer's status (the cut marker was once read as a citation, and a
grounded answer became weak)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.kernel.contract import Request
from core.kernel.events import AnswerReady, IntentDetected
from core.kernel.session import Session

QUESTIONS = ["What is Helix?", "How do I deploy Orion?"]


def capped_config(tmp_path: Path, config_path: Path, limit: int) -> Path:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine.setdefault("trace", {})["maxAnswerChars"] = limit
    (config / "engine.json").write_text(json.dumps(engine))
    return config


def answer_of(session: Session, question: str) -> tuple[AnswerReady, list]:
    events = list(session.run(Request(question=question)))
    return next(e for e in events if isinstance(e, AnswerReady)), events


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_answer_cap_cuts_the_trace_copy_and_keeps_the_status(tmp_path, config_path, question):
    whole, _ = answer_of(Session.open(None, config_path), question)
    assert whole.status == "grounded" and len(whole.answer) > 200
    cut, events = answer_of(Session.open(None, capped_config(tmp_path, config_path, 80)), question)
    assert cut.status == whole.status
    assert cut.evidence_ids == whole.evidence_ids
    assert "cut by trace.maxAnswerChars" in cut.answer and len(cut.answer) < 200
    assert all(len(part.answer) < 200 for part in cut.parts)
    assert all(len(e.cnl) < 200 for e in events if isinstance(e, IntentDetected))
