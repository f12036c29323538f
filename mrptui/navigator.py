"""The app's navigation component: the KB, rules, eval and help screens, the problems list, and
the windows for a unit and an evidence row."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.markup import escape
from textual.screen import Screen

from core.infra.config import ConfigError, RetrievalConfig, load_retrieval_config
from mrptui.host import Host
from mrptui.screens.help import HelpScreen, help_for
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import NO_KB_TEXT, NOT_VISIBLE, TextModal, UnitModal
from mrptui.widgets.evidence import EvidenceTable

FAILED = object()  # what ask_session returns (when asked to) for a failed call


class Navigator:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.eval_memory: object = None  # the eval screen's last results, across openings

    def pop_secondary(self) -> None:
        host = self.host
        while len(host.screen_stack) > 1 and not isinstance(host.screen, MainScreen):
            host.pop_screen()

    def _open(self, kind: type[Screen], make: Callable[[], Screen]) -> None:
        """Push a secondary screen on top of the one it was opened from, so Esc goes back there.
        If one of its kind is already in the stack, go back to it instead (the screens above are
        closed): switching between KB and rules never grows the stack."""
        host = self.host
        if not any(isinstance(screen, kind) for screen in host.screen_stack):
            host.push_screen(make())
            return
        while not isinstance(host.screen, kind):
            host.pop_screen()

    def kb_screen(self) -> None:
        if self.host.lifecycle.refuse_while_loading("the KB screen"):
            return
        from mrptui.screens.kb import KBScreen

        self._open(KBScreen, KBScreen)

    def memory_screen(self) -> None:
        from mrptui.screens.memory import MemoryScreen

        self._open(MemoryScreen, MemoryScreen)

    def rules_screen(self) -> None:
        if self.host.lifecycle.refuse_while_loading("the rules screen"):
            return
        from mrptui.screens.rules import RulesScreen

        self._open(RulesScreen, RulesScreen)

    def eval_screen(self) -> None:
        if self.host.lifecycle.refuse_while_loading("the eval screen", needs_engine=True):
            return
        from mrptui.screens.eval import EvalMemory, EvalScreen  # the engine's eval: not before the first frame

        if not isinstance(self.eval_memory, EvalMemory):
            self.eval_memory = EvalMemory()
        self._open(EvalScreen, partial(EvalScreen, self.host.queries_path, self.eval_memory))

    def help(self) -> None:
        host = self.host
        if isinstance(host.screen, HelpScreen):
            host.screen.dismiss()
            return
        text, groups = help_for(host.screen)
        host.push_screen(HelpScreen(text, groups))

    def problems(self) -> None:
        host = self.host
        if host.lifecycle.refuse_while_loading("the problems list"):
            return
        problems = host.ask_session("diagnostics", default=[]) or []
        count = len(problems)
        plain = "\n".join(d.format() for d in problems) or "no errors or warnings in the KB, rules or plugins"
        markup = "\n".join(
            ("[$error]✗[/] " if d.is_error else "[$warning]⚠[/] ") + escape(d.format()) for d in problems
        ) or escape(plain)
        # The whole KB's problems, restricted units' included: an author surface (docs/security.md).
        host.push_screen(TextModal(f"Problems · {count} · author view: whole KB", markup, plain=plain))

    # -- units and evidence rows ------------------------------------------------------------------

    @property
    def missing_unit_text(self) -> str:
        """Why a unit has no text here."""
        host = self.host
        if host.replay_without_kb:
            return NO_KB_TEXT
        if host.replay:
            return "not in the open KB, or not visible to this caller"
        return NOT_VISIBLE

    def open_unit(self, unit_id: str) -> None:
        unit = self.host.ask_session("unit", unit_id, self.host.caller, default=FAILED)
        if unit is FAILED:
            return
        self.host.push_screen(UnitModal(unit, unit_id, missing=self.missing_unit_text))

    def evidence_detail(self) -> None:
        host = self.host
        table = host.main.query_one(EvidenceTable)
        candidate, scored = table.selected, table.current
        if candidate is None or scored is None:
            host.notify("no evidence row selected")
            return
        unit = host.ask_session("unit", candidate.id, host.caller, default=FAILED)
        if unit is FAILED:
            return
        from mrptui.screens.evidence_detail import EvidenceDetailScreen  # numpy: not before the first frame

        config, source = self.retrieval_config()
        host.push_screen(
            EvidenceDetailScreen(
                candidate,
                scored,
                unit,
                missing=self.missing_unit_text,
                retrieval=config,
                retrieval_source=source,
                answer=host.state.answer,
            )
        )

    def retrieval_config(self) -> tuple[RetrievalConfig, str]:
        """The fusion weights to explain scores with, and where they come from."""
        host = self.host
        config = getattr(host.session, "retrieval", None)
        if isinstance(config, RetrievalConfig):
            return config, "the session's retrieval config" + (", as it is now" if host.replay else "")
        try:
            return load_retrieval_config(), "config/retrieval.json as it is now; the trace does not record it"
        except ConfigError:
            return RetrievalConfig(profiles={}), "built-in defaults; config/retrieval.json is unusable"
