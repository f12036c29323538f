"""The app's navigation component: the KB, rules, eval and help screens, the problems list, and
the windows for a unit and an evidence row."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.app import App
from textual.markup import escape
from textual.screen import Screen

from core.infra.config import ConfigError, RetrievalConfig, load_retrieval_config
from core.units import KnowledgeUnit
from mrptui.kb_lifecycle import KBLifecycle
from mrptui.messages import SwitchCaller
from mrptui.open_kb import OpenKB
from mrptui.options import ExplorerOptions
from mrptui.run_control import RunControl
from mrptui.screens.caller import CallerChoice, CallerModal
from mrptui.screens.help import HelpScreen, help_for
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import NO_KB_TEXT, NOT_VISIBLE, TextModal, UnitModal
from mrptui.session_seam import NullSession
from mrptui.widgets.evidence import EvidenceTable


class Failed:
    """What a failed session call gives, told apart from a unit it did not find (None)."""


FAILED = Failed()


class Navigator:
    def __init__(
        self,
        app: App,
        kb: OpenKB,
        lifecycle: KBLifecycle,
        control: RunControl,
        main: MainScreen,
        options: ExplorerOptions,
    ) -> None:
        self.app, self.kb, self.lifecycle, self.control, self.main = app, kb, lifecycle, control, main
        self.options = options
        self.eval_memory: object = None  # the eval screen's last results, across openings

    def pop_secondary(self) -> None:
        app = self.app
        while len(app.screen_stack) > 1 and not isinstance(app.screen, MainScreen):
            app.pop_screen()

    def _open(self, kind: type[Screen], make: Callable[[], Screen]) -> None:
        """Push a secondary screen on top of the one it was opened from, so Esc goes back there.
        If one of its kind is already in the stack, go back to it instead (the screens above are
        closed): switching between KB and rules never grows the stack."""
        app = self.app
        if not any(isinstance(screen, kind) for screen in app.screen_stack):
            app.push_screen(make())
            return
        while not isinstance(app.screen, kind):
            app.pop_screen()

    def kb_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the KB screen"):
            return
        from mrptui.screens.kb import KBScreen

        self._open(KBScreen, KBScreen)

    def caller(self) -> None:
        """The caller window (ctrl+g): the chosen caller goes to the app, which switches to it."""

        def chosen(choice: CallerChoice | None) -> None:
            if choice is not None:
                self.app.post_message(SwitchCaller(choice))

        modal = CallerModal(self.kb.caller, follow_today=self.lifecycle.follow_today, today=self.lifecycle.today)
        self.app.push_screen(modal, callback=chosen)

    def memory_screen(self) -> None:
        from mrptui.screens.memory import MemoryScreen

        self._open(MemoryScreen, MemoryScreen)

    def rules_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the rules screen"):
            return
        from mrptui.screens.rules import RulesScreen

        self._open(RulesScreen, RulesScreen)

    def eval_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the eval screen", needs_engine=True):
            return
        from mrptui.screens.eval import EvalMemory, EvalScreen  # the engine's eval: not before the first frame

        if not isinstance(self.eval_memory, EvalMemory):
            self.eval_memory = EvalMemory()
        self._open(EvalScreen, partial(EvalScreen, self.options.queries_path, self.eval_memory))

    def help(self) -> None:
        app = self.app
        if isinstance(app.screen, HelpScreen):
            app.screen.dismiss()
            return
        text, groups = help_for(app.screen)
        app.push_screen(HelpScreen(text, groups))

    def problems(self) -> None:
        if self.lifecycle.refuse_while_loading("the problems list"):
            return
        problems = self.kb.call("diagnostics", lambda session: session.diagnostics(), []) or []
        count = len(problems)
        plain = "\n".join(d.format() for d in problems) or "no errors or warnings in the KB, rules or plugins"
        markup = "\n".join(
            ("[$error]✗[/] " if d.is_error else "[$warning]⚠[/] ") + escape(d.format()) for d in problems
        ) or escape(plain)
        # The whole KB's problems, restricted units' included: an author surface (docs/security.md).
        self.app.push_screen(TextModal(f"Problems · {count} · author view: whole KB", markup, plain=plain))

    # -- units and evidence rows ------------------------------------------------------------------

    @property
    def missing_unit_text(self) -> str:
        """Why a unit has no text here."""
        if self.replay_without_kb:
            return NO_KB_TEXT
        if self.options.replay:
            return "not in the open KB, or not visible to this caller"
        return NOT_VISIBLE

    @property
    def replay_without_kb(self) -> bool:
        """Replaying a trace with no KB open: units are ids only, and the panes say so."""
        return self.options.replay and isinstance(self.kb.session, NullSession)

    def _unit(self, unit_id: str) -> KnowledgeUnit | None | Failed:
        kb = self.kb
        return kb.call("unit", lambda session: session.unit(unit_id, kb.caller), FAILED)

    def open_unit(self, unit_id: str) -> None:
        unit = self._unit(unit_id)
        if isinstance(unit, Failed):
            return
        self.app.push_screen(UnitModal(unit, unit_id, missing=self.missing_unit_text))

    def evidence_detail(self) -> None:
        app = self.app
        table = self.main.query_one(EvidenceTable)
        candidate, scored = table.selected, table.current
        if candidate is None or scored is None:
            app.notify("no evidence row selected")
            return
        unit = self._unit(candidate.id)
        if isinstance(unit, Failed):
            return
        from mrptui.screens.evidence_detail import EvidenceDetailScreen  # numpy: not before the first frame

        # The breakdown quotes the numbers the run recorded; only a trace from before they were
        # recorded falls back to the config as it is now, and says so.
        config = self.retrieval_config()
        app.push_screen(
            EvidenceDetailScreen(
                candidate,
                scored,
                unit,
                missing=self.missing_unit_text,
                retrieval=config,
                answer=self.control.state.answer,
            )
        )

    def retrieval_config(self) -> RetrievalConfig:
        """The cut-offs and HDC numbers to explain scores with (the trace records the fusion itself)."""
        config = getattr(self.kb.session, "retrieval", None)
        if isinstance(config, RetrievalConfig):
            return config
        try:
            return load_retrieval_config()
        except ConfigError:
            return RetrievalConfig(profiles={})
