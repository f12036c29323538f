"""Small typed messages: the engine worker reports with these, and widgets ask the app with them."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from core.events import Event
from core.plugins.base import Request


@dataclass
class EventsArrived(Message):
    """A batch of trace events pulled from the engine generator for run `run_id`."""

    run_id: int
    events: tuple[Event, ...]


@dataclass
class RunEnded(Message):
    """The engine generator of run `run_id` is exhausted (or was stopped)."""

    run_id: int


@dataclass
class QuerySubmitted(Message):
    """The user asked a question from the query box."""

    question: str


@dataclass
class OpenUnit(Message):
    """A widget wants to show a unit (a proof leaf, a citation, an evidence row)."""

    unit_id: str


@dataclass
class KBReloaded(Message):
    """The KB files changed on disk and were re-read; `errors` counts error diagnostics."""

    errors: int


@dataclass
class RunQuestion(Message):
    """A screen asks the app to run this request and show it in the main screen."""

    request: Request
