"""The status line: where the cursor is ("event k of N"), the run state (held, running, done) and the breakpoints."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textual.content import Content
from textual.markup import escape
from textual.widgets import Static

from core.kb.health import Health
from mrptui.answer_verdict import UNCHECKED, grounded_head
from mrptui.breakpoints import Breakpoint
from mrptui.kb_state import KBState, progress_text
from mrptui.state import ViewState
from mrptui.widgets.symbols import status_symbol, tone_markup


def status_markup(
    state: ViewState,
    total: int,
    *,
    live: bool,
    paused_at: Breakpoint | None,
    breakpoints: Collection[Breakpoint],
    replay: bool,
    label: str,
    failed: bool = False,
    held: str = "",
    pending: Sequence[str] = (),
    running_ms: float | None = None,
    kb: KBState | None = None,
    health: Health | None = None,
    replay_note: str = "",
) -> str:
    parts = [f"[b]event {state.k} of {total}[/b]"]
    if state.last_event is not None and state.k < total:
        parts[0] += f" [$foreground-muted]({escape(state.last_event.kind)})[/]"
    if state.status == "idle" and total == 0:
        parts = [kb_head_markup(kb)]
    # A run whose engine raised never gets RunFinished: it failed, it is not still running.
    status = "failed" if failed else state.status
    symbol, tone = status_symbol(status)
    run = status if state.k == total or status != "running" else "stepping"
    if status == "grounded" and state.answer is not None and grounded_head(state)[0] != "✓":
        symbol, tone = UNCHECKED
        run = "grounded, not validated"
    if live:
        run = "running" if state.k == total else "running (cursor behind)"
    if replay and status == "running" and state.k == total:
        # A saved trace that stops before RunFinished: nothing is running, the record is cut.
        stop = replay_note or f"it stops after event {total}, before the run finished"
        symbol, tone, run = "✂", "warn", f"incomplete trace: {stop}"
    if held:
        symbol, tone, run = "⏸", "backtrack", f"held {held}"
    # Before any run the head ("ready", loading, not loaded) says it all: no "· idle" after it.
    if total:
        parts.append(tone_markup(f"{symbol} {escape(run)}", tone))
    if replay_note and replay_note not in run:  # next to the run state: a narrow line cuts its end first
        parts.append(tone_markup(f"✂ {escape(replay_note)}", "warn"))
    if running_ms is not None and state.current_plugin:
        parts.append(f"{escape(state.current_plugin)} running {running_ms / 1000:.1f} s · esc cancels")
    if pending:
        parts.append(tone_markup(f"on continue: {escape('; '.join(pending))}", "running"))
    if paused_at is not None:
        parts.append(tone_markup(f"⏸ paused at {escape(paused_at.label)}", "backtrack"))
    if not held and (state.current_stage and state.k < total or (live and state.current_stage)):
        parts.append(f"stage {escape(state.current_stage or '')} {escape(state.current_plugin or '')}".rstrip())
    if breakpoints:
        labels = ", ".join(point.label for point in sorted(breakpoints))
        parts.append(f"[$accent]● {escape(labels)}[/]")
    # The replay command labels the trace "replay run.jsonl": say "replay" once.
    label = label.removeprefix("replay ") if replay else label
    if replay:
        parts.append("[$warning]replay[/]" + (f" [$foreground-muted]{escape(label)}[/]" if label else ""))
    parts.extend(kb_work_markup(kb))
    if kb is not None and kb.cluster:
        parts.append(f"[$accent]{escape(kb.cluster)}[/]")
    if health is not None:
        parts.append(health_markup(health))
    if label and not replay:
        parts.append(f"[$foreground-muted]{escape(label)}[/]")
    return " · ".join(parts)


def kb_head_markup(kb: KBState | None) -> str:
    """What the line starts with before any run: "ready", or the KB loading or failed to load."""
    if kb is not None and kb.loading:
        head = f"[b]◌ loading KB[/b] ({escape(progress_text(kb.progress))})"
        return head + (" · [$accent]1 question queued[/]" if kb.queued else "")
    if kb is not None and kb.failed:
        return f"[$error][b]✗ KB not loaded[/b]: {escape(kb.error.splitlines()[0])}[/] (F8, ctrl+r retries)"
    return "[b]ready[/b]"


def kb_work_markup(kb: KBState | None) -> list[str]:
    """Background work on the open KB, while it lasts: reloading, indexes and HDC building."""
    if kb is None:
        return []
    parts = []
    if kb.reloading:
        parts.append("[$warning]⟳ reloading KB…[/]")
    if kb.indexing:
        parts.append("[$foreground-muted]indexes building…[/]")
    if kb.hdc == "building":
        parts.append("[$foreground-muted]HDC index building…[/]")
    elif kb.hdc == "failed":
        parts.append("[$warning]HDC index failed (see the error)[/]")
    return parts


def health_markup(health: Health) -> str:
    """The KB, rules and plugin problem counts, always shown (F8 lists them), and, until fixed,
    that the KB or the rules run on withdrawn units or last good rules."""
    stale = stale_markup(health)
    counts = _counts_markup(health)
    return f"{counts} · {stale}" if stale else counts


def stale_markup(health: Health) -> str:
    """ "KB: 1 unit withdrawn · rules: 1 invalid edit, last good version kept (F8)", or ""."""
    parts = []
    if health.units_withdrawn:
        parts.append(f"KB: {health.units_withdrawn} unit{'' if health.units_withdrawn == 1 else 's'} withdrawn")
    elif health.files_withdrawn:  # the notes name no unit this caller may see: only the files count
        files = "1 file's" if health.files_withdrawn == 1 else f"{health.files_withdrawn} files'"
        parts.append(f"KB: {files} units withdrawn")
    if health.rules_kept and not health.rules_file_valid:
        parts.append(f"rules: file invalid, last good {health.rules_kept} kept")
    elif health.rules_kept:
        edits = "1 invalid edit" if health.rules_kept == 1 else f"{health.rules_kept} invalid edits"
        parts.append(f"rules: {edits}, last good version kept")
    return f"[$warning]{escape(' · '.join(parts))} (F8)[/]" if parts else ""


def _counts_markup(health: Health) -> str:
    warnings = f"{health.warnings} warning" + ("" if health.warnings == 1 else "s")
    if health.errors:
        errors = f"{health.errors} error" + ("" if health.errors == 1 else "s")
        return f"[$error]✗ {errors}[/]" + (f" [$warning]{warnings}[/]" if health.warnings else "")
    if health.warnings:
        return f"[$warning]⚠ 0 errors, {warnings}[/]"
    return "[$foreground-muted]0 errors[/]"


def banner_markup(health: Health) -> str:
    return f"✗ {escape(health.summary.removesuffix(' — mrptui check for details'))} — F8 lists them"


class StatusLine(Static):
    """One line under the panels (two when it wraps, app.tcss)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._markup = ""
        self._wraps = False

    def show(self, markup: str) -> None:
        """Show `markup`. The view is refreshed per burst of engine events: an unchanged line is
        not drawn again, and the screen is laid out again only when the line starts or stops
        wrapping (its height), not for every new event count (issue 25)."""
        if markup == self._markup:
            return
        self._markup = markup
        wraps = self._wrapped()
        self.update(markup, layout=wraps != self._wraps)
        self._wraps = wraps

    def _wrapped(self) -> bool:
        return Content.from_markup(self._markup).cell_length > self.content_region.width

    def on_resize(self) -> None:
        # A resize lays the screen out again: the height now follows the line at the new width.
        self._wraps = self._wrapped()
