"""Two runs side by side (request, plan, attempts, evidence ids, answer), differences marked."""

from __future__ import annotations

import difflib
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Static

from mrptui.state import RunRecord, ViewState
from mrptui.widgets.keybar import KeyBar


def run_sections(state: ViewState) -> list[tuple[str, list[str]]]:
    """The comparable facts of a finished run, as plain lines per section."""
    pins = ", ".join(f"{stage}={plugin}" for stage, plugin in state.pins) or "none"
    request = [f"question: {state.question}", f"pinned: {pins}", f"excluded: {', '.join(state.excluded) or 'none'}"]
    plan: list[str] = []
    for revision in state.plans:
        plan.append(f"r{revision.revision} {revision.planner}" + (" (superseded)" if revision.superseded else ""))
        plan.extend(f"  {stage.stage}: {', '.join(stage.candidates)}" for stage in revision.stages)
    attempts = [row.label for row in state.rows if row.kind != "plan"]
    evidence: list[str] = []
    for intent, scored in sorted(state.evidence.items()):
        evidence.append(f"intent {intent} via {scored.plugin}:")
        evidence.extend(f"  {unit_id}" for unit_id in scored.evidence_ids)
    answer: list[str] = []
    if state.answer is not None:
        answer.append(f"status: {state.answer.status}")
        answer.append(state.answer.answer)
        answer.extend(f"cites {unit_id}" for unit_id in state.answer.evidence_ids)
    else:
        answer.append(f"no answer (run {state.status})")
    return [("Request", request), ("Plan", plan or ["no plan"]), ("Attempts", attempts or ["none"]),
            ("Evidence (kept ids)", evidence or ["none"]), ("Answer", answer)]


def diff_columns(left: ViewState, right: ViewState) -> tuple[str, str, int, str]:
    """Markup for both columns (aligned line by line), the number of differing lines, and a plain diff."""
    left_lines: list[str] = []
    right_lines: list[str] = []
    plain: list[str] = []
    changes = 0
    for (title, a), (_, b) in zip(run_sections(left), run_sections(right), strict=True):
        left_lines.append(f"[b]{title}[/b]")
        right_lines.append(f"[b]{title}[/b]")
        plain.append(f"## {title}")
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if tag == "equal":
                for line in a[i1:i2]:
                    left_lines.append(f"  {escape(line)}")
                    right_lines.append(f"  {escape(line)}")
                    plain.append(f"  {line}")
                continue
            old, new = a[i1:i2], b[j1:j2]
            mark_old, mark_new = ("~", "~") if tag == "replace" else ("-", "+")
            tone_old = "$warning" if tag == "replace" else "$error"
            tone_new = "$warning" if tag == "replace" else "$success"
            for position in range(max(len(old), len(new))):
                changes += 1
                if position < len(old):
                    left_lines.append(f"[{tone_old}]{mark_old} {escape(old[position])}[/]")
                    plain.append(f"- {old[position]}")
                else:
                    left_lines.append("")
                if position < len(new):
                    right_lines.append(f"[{tone_new}]{mark_new} {escape(new[position])}[/]")
                    plain.append(f"+ {new[position]}")
                else:
                    right_lines.append("")
        left_lines.append("")
        right_lines.append("")
    return "\n".join(left_lines), "\n".join(right_lines), changes, "\n".join(plain)


class DiffScreen(Screen[None]):
    """The previous run on the left, the latest on the right; both scroll together."""

    HELP = """\
## Run diff
The previous run (left) and the latest run (right): request (pins, exclusions), plan, attempts,
kept evidence ids and the answer. Lines only on the left are marked `-`, only on the right `+`,
and changed lines `~`. `c` copies the diff as text; `escape` goes back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back", id="diff.back", tooltip="Back to the explorer"),
        Binding("c", "copy", "Copy", id="diff.copy", tooltip="Copy the diff as text"),
    ]

    def __init__(self, left: RunRecord, right: RunRecord) -> None:
        super().__init__()
        self.left = left
        self.right = right
        self.left_markup, self.right_markup, self.changes, self.plain = diff_columns(left.final, right.final)

    def compose(self) -> ComposeResult:
        summary = "identical" if not self.changes else f"{self.changes} differing line(s)"
        yield Static(f"Diff · run {self.left.run_id} (left) vs run {self.right.run_id} (right) · {summary}",
                     id="diff-title", classes="screen-title")
        with VerticalScroll(id="diff-columns"):
            with Horizontal(id="diff-row"):
                left = Static(self.left_markup, id="diff-left", classes="diff-side")
                left.border_title = f"run {self.left.run_id}"
                yield left
                right = Static(self.right_markup, id="diff-right", classes="diff-side")
                right.border_title = f"run {self.right.run_id}"
                yield right
        yield KeyBar()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.plain)
        self.notify("copied the diff")
