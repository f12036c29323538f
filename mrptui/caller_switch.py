"""Changing who the explorer asks as (the caller window, ctrl+g), without a restart: an author checks
what a caller with tags X in region Y on date Z is shown.

The new caller is `OpenKB.caller`, read by everything that reads the KB: the engine builds that
caller's view before any ranking (core/kb/view.py), so a unit outside it is absent from every pane,
and the KB, rules and Memory screens re-read it. Its indexes are built at once, in a worker
(`KBLifecycle.new_caller`), not by its first question. The last question runs again as the new
caller, with the same pins and exclusions as a re-run, and the panes do not keep the previous
run's content while it starts (`RunControl.previous`): that was another caller's view. Memory is
the new caller's own (mrptui/conversation.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from textual.app import App

from mrptui.conversation import ExplorerMemory
from mrptui.kb_health import KBHealth
from mrptui.kb_lifecycle import KBLifecycle
from mrptui.open_kb import OpenKB
from mrptui.run_driver import RunDriver
from mrptui.screens.caller import CallerChoice
from mrptui.session_seam import caller_phrase


class CallerSwitch:
    def __init__(
        self,
        app: App,
        kb: OpenKB,
        health: KBHealth,
        runner: RunDriver,
        new_view: Callable[[], None],
    ) -> None:
        """`app`: shows the notifications. `runner`: re-asks the last question, through its KB
        lifecycle (whether the date follows the calendar) and memory. `new_view`: the caller's view
        changed (open screens re-read it)."""
        self.app, self.kb, self.health, self.runner, self._new_view = app, kb, health, runner, new_view
        self.lifecycle: KBLifecycle = runner.lifecycle
        self.memory: ExplorerMemory = runner.memory

    def switch(self, choice: CallerChoice) -> None:
        unchanged = choice.caller.key == self.kb.caller.key
        self.lifecycle.follow_today = choice.follow_today
        who = caller_phrase(choice.caller)
        if unchanged:
            self.app.notify(f"already asking as the {who}")
            return
        self.kb.caller = choice.caller
        if not self.runner.options.replay:  # a replay runs no engine, so builds no index
            self.lifecycle.new_caller()
        self.health.refresh(banner=False)  # the counts are the new caller's (docs/security.md)
        self._new_view()
        last = self.runner.control.last_request
        if last is None or self.runner.options.replay:
            self.runner.refresh_view()
            self.app.notify(f"now asking as the {who}")
            return
        # The previous caller's memory is not this one's: offer the new caller's, or none.
        request = dataclasses.replace(last, caller=choice.caller, memory=(), memory_withheld=())
        self.runner.start_run(self.memory.offer(request))
        self.app.notify(f"now asking as the {who}: “{last.question}” runs again")
