"""The plan panel: planner, ordered candidates per stage with reasons, replans, and the parsed intents."""

from __future__ import annotations

from rich.cells import cell_len
from textual.containers import VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.widgets import Static

from core.kernel.events import PlanStage
from mrptui.state import PlanView, ViewState
from mrptui.widgets.kept_lines import KeptLines
from mrptui.widgets.kept_static import KeptStatic
from mrptui.widgets.laid_out import LaidOutOnce
from mrptui.widgets.quiet_scrollbars import QuietScrollbars
from mrptui.widgets.symbols import status_symbol, tone_markup
from mrptui.widgets.tables import report_natural_width


def _fit(text: str, room: int) -> str:
    """`text` cut to `room` cells with an ellipsis (room <= 0 means no limit)."""
    if room <= 0 or len(text) <= room:
        return text
    return text[: max(0, room - 1)] + "…"


def plan_lines(plan: PlanView, state: ViewState, width: int = 0, held: bool = False) -> list[str]:
    """Markup lines for one plan revision; candidates carry the status of their last attempt, and
    the call the engine is held before is marked as the next call."""
    head = f"[b]r{plan.revision}[/b] {escape(plan.planner)}"
    if plan.superseded:
        head = f"[$foreground-muted][s]r{plan.revision} {escape(plan.planner)}[/s][/] " + tone_markup(
            "⟲ superseded", "backtrack"
        )
    lines = [head]
    if plan.superseded and plan.superseded_reason:
        lines.append("  " + tone_markup(escape(_fit(plan.superseded_reason, width * 2 - 4)), "backtrack"))
    if plan.reasons:
        lines.append(f"  [$foreground-muted]{escape(_fit('; '.join(plan.reasons), width - 2))}[/]")
    for stage in plan.stages:
        lines.extend(_stage_lines(plan, stage, state, width, held))
    return lines


def _stage_lines(plan: PlanView, stage: PlanStage, state: ViewState, width: int, held: bool) -> list[str]:
    """The stage line with the planner's reasons for the stage's order, then one line per candidate
    with the reason from that candidate's own last attempt (or why it was not called)."""
    label = f"  [b]{stage.stage:<4}[/b]"
    reasons = _fit("; ".join(stage.reasons), width - 7) if width else "; ".join(stage.reasons)
    lines = [label + (f" [$foreground-muted]{escape(reasons)}[/]" if reasons else "")]
    for position, candidate in enumerate(stage.candidates):
        row = state.attempt_row(plan.revision, stage.stage, candidate)
        status = row.status if row else None
        next_call = held and status == "running" and not plan.superseded
        if status is None:
            mark = "[$foreground-muted]·[/]"
        elif next_call:
            mark = tone_markup("▶", "backtrack")
        else:
            symbol, tone = status_symbol(status)
            mark = tone_markup(symbol, tone)
        reason = row.outcome if row and status != "running" else ""
        reason = "next call (held)" if next_call else reason
        used = 7 + len(f"{position + 1}. ") + 2 + len(candidate) + 2
        reason = _fit(reason, width - used) if width else reason
        reason_markup = (
            f"  [$foreground-muted]{escape(reason)}[/]" if reason and (not width or width - used > 3) else ""
        )
        lines.append(f"       {position + 1}. {mark} {escape(candidate)}{reason_markup}")
    return lines


def render_plan(state: ViewState, width: int = 0, held: bool = False) -> str:
    if not state.plans:
        if state.status == "idle":
            return "[$foreground-muted]No run yet. Type a question above and press Enter.[/]"
        return "[$foreground-muted]Waiting for the planner…[/]"
    lines: list[str] = []
    for plan in reversed(state.plans):  # newest first: the current plan is on top
        lines.extend(plan_lines(plan, state, width, held))
    if state.pins or state.excluded:
        pins = ", ".join(f"{stage}={plugin}" for stage, plugin in state.pins) or "none"
        excluded = ", ".join(state.excluded) or "none"
        lines.append(f"[$accent]pinned: {escape(pins)} · excluded: {escape(excluded)}[/]")
    if state.intent_cnl:
        lines.append("")
        lines.append(f"[b]Intents[/b] [$foreground-muted]from {escape(state.intent_plugin)}[/]")
        for index, intent in enumerate(state.intents):
            extra = "".join(
                f" · {name} “{escape(value)}”"
                for name, value in (("context", intent.context), ("criterion", intent.criterion))
                if value
            )
            target = " ".join(intent.target.split())  # a multi-line question's target stays on one line
            lines.append(f"  #{index} {escape(intent.act)} “{escape(target)}” → {escape(intent.output)}{extra}")
        for line in state.intent_cnl.splitlines():
            lines.append(f"  [$foreground-muted]{escape(line)}[/]")
        if state.context_unit_ids:
            lines.append(f"  [$foreground-muted]current-turn units: {escape(', '.join(state.context_unit_ids))}[/]")
    return "\n".join(lines)


class PlanPanel(KeptLines, LaidOutOnce, QuietScrollbars, VerticalScroll, can_focus=True):
    """Shows every plan revision (the newest on top; old ones kept and marked superseded)."""

    HELP = """\
## Plan
The planner's plan: for each stage (sd → kb → gs → val) the planner's reasons for the stage's
order on the stage line, then the ordered candidate plugins. Each candidate shows the status and
reason of its own last attempt (✓ ✗ ↷ ⋯, · not tried yet), or why it was not called
(`skipped: excluded by the user`, `not reached: kb-balanced was sufficient`).
A replan (level-2 backtrack) adds a new revision on top and keeps the old one, struck through and
marked superseded with the reason. Below: the Intent CNL the seed detector produced.
"""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._markup = ""
        self._state = ViewState()
        self._held = False

    def _text_width(self) -> int:
        # The body has one cell of padding each side, and a cell is always kept for the scrollbar:
        # measuring with or without it would cut the same plan differently from frame to frame.
        return max(0, self.content_region.width - self.styles.scrollbar_size_vertical - 2)

    def on_resize(self) -> None:
        self._draw()

    def compose(self):
        yield KeptStatic(render_plan(ViewState()), id="plan-body")

    def show(self, state: ViewState, *, held: bool = False) -> None:
        # A state is never changed in place: the same one held the same way draws the same plan
        # (the view is refreshed per burst of engine events, most of which leave the plan as it was).
        if state is self._state and held == self._held:
            return
        self._state, self._held = state, held
        self._draw()

    def _draw(self) -> None:
        state, held = self._state, self._held
        uncut = Content.from_markup(render_plan(state, 0, held)).plain.splitlines()
        report_natural_width(self, max((cell_len(line) for line in uncut), default=0) + 2)
        markup = render_plan(state, self._text_width(), held)
        if markup == self._markup:
            return
        self._markup = markup
        self.query_one("#plan-body", Static).update(markup)

    def copy_text(self) -> str | None:
        return Content.from_markup(self._markup).plain if self._markup else None
