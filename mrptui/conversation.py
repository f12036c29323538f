"""The app's conversation component: follow-up questions in the query box use the caller's memory
(core/memory), and the Memory screen (ctrl+o) shows, pins and forgets its records.

Only questions typed in the query box are offered memory and leave a turn; a re-run or what-if reuses
its request as it was. With no session to read (replay, a KB still loading), memory is off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App

from core.kernel.contract import Request
from core.memory.conversation import Conversation
from core.memory.records import caller_digest
from core.memory.scoring import ScoredRecord
from core.memory.store import MemoryStore
from core.memory.turns import pinned, remember, turn_of, with_memory
from mrptui.open_kb import OpenKB
from mrptui.state import RunRecord


class ExplorerMemory:
    def __init__(
        self,
        app: App,
        kb: OpenKB,
        changed: Callable[[], None],
        *,
        replay: bool = False,
        name: str | None = None,
        root: Path | None = None,
    ) -> None:
        """`app`: shows the notifications. `changed`: the records changed (an open Memory screen
        re-reads them). `replay`: a saved trace, so memory is off. `name`: continue the stored
        conversation NAME (`mrptui --session NAME`); None keeps this session's turns in memory only.
        `root`: the memory folder (None: no files at all, and memory lives only as long as the app)."""
        self.app, self.kb = app, kb
        self._changed_records = changed
        self.replay = replay
        self.name = name
        self.root = root
        self._conversation: Conversation | None = None
        self._session: object = None
        self._offered: dict[int, Request] = {}
        self.clock: Callable[[], float] = time.time  # what records are stamped and scored with

    @property
    def conversation(self) -> Conversation | None:
        """The conversation for the current session and caller; rebuilt when a new session opens or
        the caller changes."""
        session = self.kb.session
        engine, retrieval = getattr(session, "engine_config", None), getattr(session, "retrieval", None)
        if engine is None or retrieval is None or self.replay:
            return None
        caller = caller_digest(self.kb.caller)
        if self._conversation is None or self._session is not session or self._conversation.caller != caller:
            store = MemoryStore(self.root, engine.memory) if self.root is not None else None
            previous = self._conversation
            self._conversation = Conversation(
                self.kb.caller, self.name, engine.memory, retrieval.hdc, store, self.clock
            )
            # An unnamed conversation outlives a reload, never a switch to another caller (ctrl+g).
            if previous is not None and previous.caller == caller:
                self._conversation.continues(previous)
            self._session = session
        return self._conversation

    def _view(self):
        kb = self.kb
        return kb.call("view", lambda session: session.view(kb.caller), None)  # type: ignore[attr-defined]

    def offer(self, request: Request) -> Request:
        conversation = self.conversation
        if conversation is None:
            return request
        offered = with_memory(request, conversation, self._view())  # re-reads the files as they are now
        self._offered[id(offered)] = offered
        self._warn(conversation)
        return offered

    def ended(self, run: RunRecord | None) -> None:
        """A run asked from the query box ended: its turn goes into the conversation, once."""
        if run is None or run.request is None or self._offered.pop(id(run.request), None) is None:
            return
        if self.conversation is not None and run.done and not run.error:
            remember(self.conversation, run.events, self._view())
            self._warn(self.conversation)
            self._changed_records()

    def scored(self, question: str) -> list[ScoredRecord]:
        conversation = self.conversation
        scored = conversation.recall(question, self._view()) if conversation is not None else []
        self._warn(conversation)
        return scored

    def withheld(self) -> list[str]:
        """A line for each record no question reuses now (a unit it cites changed or left the view)."""
        conversation = self.conversation
        return conversation.vetted(self._view())[1] if conversation is not None else []

    def pin(self, run: RunRecord | None) -> None:
        """The current run's question and lead as a durable note."""
        conversation = self.conversation
        turn = turn_of(run.events) if run is not None and conversation is not None else None
        if conversation is None:
            self.app.notify("memory is off: no KB is open", severity="warning")
        elif run is None or turn is None:
            self.app.notify("ask a question first: the pinned note is its question and answer", severity="warning")
        else:
            text = f"{turn.question} → {turn.lead}" if turn.lead else turn.question
            noted = conversation.note(text, pinned(turn, run.events, self._view()), turn.entity)
            self._changed(conversation, f"pinned to your notes: {text}" if noted else None)

    def forget(self, record_id: str) -> None:
        conversation = self.conversation
        gone = conversation is not None and conversation.forget(record_id)
        self._changed(conversation, "forgotten" if gone else "that record is already gone")

    def clear(self) -> None:
        conversation = self.conversation
        count = conversation.clear("session") if conversation is not None else 0
        self._changed(conversation, None if count is None else f"cleared {count} turn(s) of this conversation")

    def _changed(self, conversation: Conversation | None, message: str | None) -> None:
        """`message` None: the change could not be saved, and the warning says why."""
        if not self._warn(conversation) and message is not None:
            self.app.notify(message)
        self._changed_records()

    def _warn(self, conversation: Conversation | None) -> bool:
        """A notification for each memory file problem not yet shown (never an error screen: the
        answer stands, only its memory could not be kept)."""
        lines = conversation.take_warnings() if conversation is not None else []
        for line in lines:
            self.app.notify(line, severity="warning", timeout=8, markup=False)
        return bool(lines)
