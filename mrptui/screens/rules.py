"""The rules screen: each ThinkingDB rule, whether it fired in the last run, bindings, derived facts."""

from __future__ import annotations

from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.infra.diagnostics import Diagnostic
from core.kb.health import count_diagnostics, counts_phrase, plural
from core.kernel.events import RuleStat
from mrptui.clipboard import copy_text
from mrptui.explorer import Explorer
from mrptui.messages import OpenInEditor, ReloadKB
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.tables import refill

RULE_COLUMNS = [
    ("id", "rule"),
    ("rule", "premises ⇒ conclusion"),
    ("weight", "weight"),
    ("fired", "fired"),
    ("derived", "derived"),
]


RULE_FLOORS = {"id": 12, "rule": 24}


def is_rule_diagnostic(diagnostic: Diagnostic) -> bool:
    code = diagnostic.code.value
    return code.startswith("RULE_") or code in ("INVALID_JSON", "INVALID_CONFIG") or diagnostic.file.endswith(".json")


def rule_text(rule: dict) -> str:
    premises = ", ".join(rule.get("premises", []))
    return f"{premises} ⇒ {rule.get('conclusion', '?')}"


NO_RULES_TEXT = "rule text unavailable: replaying without the KB; pass --kb PATH"


def rule_detail(rule: dict, stat: RuleStat | None, ran: bool) -> str:
    weight = rule.get("weight")
    where = f"{rule.get('file', '')}:{rule.get('line', '')}".strip(":")
    lines = [
        f"[b]{escape(str(rule.get('id', '?')))}[/b]  weight {weight if weight is not None else '?'}"
        + (f"  [$foreground-muted]{escape(where)}[/]" if where else "")
    ]
    if rule.get("description"):
        lines.append(f"[$foreground-muted]{escape(str(rule['description']))}[/]")
    premises = list(rule.get("premises", []))
    for position, premise in enumerate(premises, start=1):
        lines.append(f"  {position}. {escape(premise)}")
    if "premises" in rule or "conclusion" in rule:
        lines.append(f"  ⇒ {escape(str(rule.get('conclusion', '?')))}")
    lines.append("")
    if not ran:
        lines.append(
            "[$foreground-muted]No ThinkingDB retrieval in the last run: ask a question that reaches kb-thinkingdb.[/]"
        )
    elif stat is None or stat.fired == 0:
        lines.append("[$warning]never fired in the last run[/]")
        index = stat.first_unmatched_premise if stat else None
        if index is not None and 0 <= index < len(premises):
            lines.append(f"  first unmatched premise: {index + 1}. {escape(premises[index])}")
        elif stat is not None:
            lines.append("  every premise matches some fact, but never with shared bindings")
    else:
        lines.append(f"[$success]fired {stat.fired}×[/] in the last run")
        for binding in stat.bindings:
            pairs = " ".join(f"{k}={v}" for k, v in sorted(binding.items()))
            lines.append(f"  bindings: {escape(pairs)}")
        for fact in stat.derived:
            lines.append(f"  derived: {escape(fact)}")
    return "\n".join(lines)


class RulesScreen(Screen[None]):
    """Rules with their last-run statistics and the rule files' errors."""

    HELP = """\
## Rules
Every ThinkingDB rule (premises ⇒ conclusion, weight). For the last run's kb-thinkingdb retrieval:
how often each rule fired, its variable bindings and the facts it derived; for rules that never
fired, the first premise that matched nothing. Rule-file errors are listed with file:line:col.

- `e` opens the rule file in your editor (`$VISUAL`/`$EDITOR`, `$MRPTUI_EDITOR`) at the rule's line; saved changes reload automatically.
- `c` copies the rule; `ctrl+r` reloads now; `escape` goes back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q", "app.pop_screen", "Back", id="rules.back", tooltip="Back to the screen this one was opened from"
        ),
        Binding("e", "edit", "Edit", id="rules.edit", tooltip="Open the rule file in your editor at this rule"),
        Binding("c", "copy", "Copy", id="rules.copy", tooltip="Copy the selected rule"),
        Binding("ctrl+r", "reload", "Reload", id="rules.reload", tooltip="Re-read the KB and rule files now"),
        Binding("k,f2", "app.open('kb_screen')", "KB", id="rules.kb", tooltip="The KB screen"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rules: list[dict] = []
        self.stats: dict[str, RuleStat] = {}
        self.ran = False

    @property
    def explorer(self) -> Explorer:
        return cast(Explorer, self.app)

    def compose(self) -> ComposeResult:
        # As on the KB screen, the counts sit in their own cell at the right: a narrow terminal cuts
        # the title with an ellipsis, never "rule file: no errors" down to "rule file: no".
        with Horizontal(id="rules-header", classes="screen-title"):
            yield Static("Rules", id="rules-title")
            yield Static("", id="rules-counts")
        table: DataTable[object] = DataTable(id="rules-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Rules"
        yield table
        with Horizontal(id="rules-bottom"):
            with VerticalScroll(id="rules-detail") as detail:
                detail.border_title = "Selected rule · last run"
                yield Static("", id="rules-detail-text")
        yield Static("", id="rules-errors")
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one("#rules-table", DataTable)
        self.watch(self.app, "kb_generation", lambda _: self.load(), init=False)
        self.load()
        table.focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self.load)  # the rule column takes what the new width leaves

    def load(self) -> None:
        app = self.explorer
        self.rules = app.kb.call("rules", lambda session: session.rules(), []) or []
        run = app.current
        proofs = run.final.proofs_all if run else ()
        self.ran = bool(proofs)
        self.stats = {}
        for found in proofs:
            for stat in found.rule_stats:
                self.stats[stat.rule] = stat
        if app.replay_without_kb and not self.rules:
            # No rule file: the rules the trace names, by id (their text is in the KB's config).
            self.rules = [{"id": rule_id} for rule_id in sorted(self.stats)]
        table = self.query_one("#rules-table", DataTable)
        cursor = table.cursor_row
        rows = []
        fired_style = app.current_theme.success or "green"
        never_style = app.current_theme.warning or "yellow"
        for rule in self.rules:
            shown = self.stats.get(str(rule.get("id")))
            if not self.ran:
                fired = Text("—", style="dim")
            elif shown and shown.fired:
                fired = Text(f"✓ {shown.fired}", style=fired_style)
            else:
                fired = Text("✗ 0", style=never_style)
            derived = str(len(shown.derived)) if shown and self.ran else ""
            weight = rule.get("weight")
            rows.append(
                [
                    str(rule.get("id", "?")),
                    rule_text(rule) if "premises" in rule else "",
                    f"{weight:g}" if isinstance(weight, float | int) else "?",
                    fired,
                    derived,
                ]
            )
        # The rule text gives way (cut with "…", whole in the detail pane) so fired and derived stay
        # in view; rule ids are cut only to a form that keeps them distinct.
        refill(table, RULE_COLUMNS, rows, floors=RULE_FLOORS, middle={"id"})
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        problems = [
            d
            for d in app.kb.call("diagnostics", lambda session: session.diagnostics(), []) or []
            if is_rule_diagnostic(d)
        ]
        error_box = self.query_one("#rules-errors", Static)
        error_box.update("\n".join(("✗ " if d.is_error else "⚠ ") + escape(d.format()) for d in problems))
        error_box.display = bool(problems)
        fired_count = sum(1 for s in self.stats.values() if s.fired)
        summary = [f"Rules · {plural(len(self.rules), 'rule')}"]
        if app.replay_without_kb:
            summary = [
                f"Rules · no rule file (replaying a saved trace): the {plural(len(self.rules), 'rule')} it names"
            ]
        if self.ran:
            summary.append(f"last run: {fired_count} fired, {len(self.rules) - fired_count} never fired")
        else:
            summary.append("no ThinkingDB retrieval in the last run")
        # Counted as the KB screen and the status line count (core.kb.health), warnings apart from errors.
        errors, warnings = count_diagnostics(problems)
        tone = "$error" if errors else "$warning" if warnings else "$success"
        self.query_one("#rules-title", Static).update(" · ".join(summary))
        self.query_one("#rules-counts", Static).update(f"[{tone}]rule file: {counts_phrase(errors, warnings)}[/]")
        self._render_detail()

    @property
    def selected(self) -> dict | None:
        table = self.query_one("#rules-table", DataTable)
        if not self.rules or not (0 <= table.cursor_row < len(self.rules)):
            return None
        return self.rules[table.cursor_row]

    def _render_detail(self) -> None:
        rule = self.selected
        if rule is not None:
            text = rule_detail(rule, self.stats.get(str(rule.get("id"))), self.ran)
        else:
            text = "[$foreground-muted]no rules[/]"
        if self.explorer.replay_without_kb:
            text = f"[$warning]{escape(NO_RULES_TEXT)}[/]" + (f"\n\n{text}" if rule else "")
        self.query_one("#rules-detail-text", Static).update(text)

    @on(DataTable.RowHighlighted, "#rules-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._render_detail()

    def action_edit(self) -> None:
        rule = self.selected
        if rule is None or not rule.get("file"):
            self.notify("this rule has no file location", severity="warning")
            return
        self.post_message(OpenInEditor(str(rule["file"]), int(rule.get("line") or 1)))

    def action_copy(self) -> None:
        rule = self.selected
        if rule is None:
            self.notify("nothing to copy here", severity="warning")
            return
        text = f"{rule.get('id')}: {rule_text(rule)} (weight {rule.get('weight')})"
        copy_text(self, text)

    def action_reload(self) -> None:
        self.post_message(ReloadKB())
