"""A session over plain-text files written for a test module, opened once per module, and what
it answers."""

from __future__ import annotations

import pytest

from core.kernel.contract import Request
from core.kernel.events import AnswerReady
from core.kernel.session import Session
from core.units import Caller


def open_texts(factory: pytest.TempPathFactory, name: str, texts: dict[str, str]) -> Session:
    folder = factory.mktemp(name)
    for file_name, text in texts.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return Session.open([folder])


def ask(session: Session, question: str) -> AnswerReady:
    events = list(session.run(Request(question=question, caller=Caller())))
    return next(e for e in reversed(events) if isinstance(e, AnswerReady))


def lead(session: Session, question: str) -> str:
    """The lead the short answer picked (the first part's)."""
    return ask(session, question).parts[0].detail.lead
