"""`mrptui eval`'s conversations: the queries naming one conversation asked in order, in one
process, each turn offered the memory of the turns before it (per caller, in memory only: an
evaluation never writes the user's memory files)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.kernel.contract import Request
from core.memory.conversation import Conversation
from core.memory.records import caller_digest
from core.memory.turns import remember, with_memory

if TYPE_CHECKING:
    from core.kernel.session import Session


class Conversations:
    def __init__(self, session: Session):
        self.session = session
        self._open: dict[tuple[str, str], Conversation] = {}

    def run(self, name: str | None, request: Request) -> list[object]:
        """The request's events; a turn of conversation `name` (None: none) reads and leaves memory."""
        if name is None:
            return list(self.session.run(request))
        key = (name, caller_digest(request.caller))
        conversation = self._open.get(key)
        if conversation is None:
            conversation = Conversation(
                request.caller, None, self.session.engine_config.memory, self.session.retrieval.hdc
            )
            self._open[key] = conversation
        view = self.session.view(request.caller)
        events = list(self.session.run(with_memory(request, conversation, view)))
        remember(conversation, events, view)
        return events
