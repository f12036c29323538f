"""The eval screen (F4): the labelled queries run against the current KB and rules, in a worker.

One row per question: pass or fail, evidence found, the answer check and each safety gate. The
screen re-runs by itself after every KB or rules reload and marks what changed since the previous
run (newly failing in red). Enter shows that question's run in the main screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.markup import escape
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.kernel.contract import Request
from mrptui.explorer import Explorer
from mrptui.messages import ReloadKB, RunQuestion
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.tables import refill

if TYPE_CHECKING:
    from core.eval.labelled import QuerySpec
    from core.eval.labelled_report import EvalReport, QueryResult

GATES = ("must-not-appear", "view-boundary", "abstention")
# The question comes early and gives way last, so its text shows at every width.
COLUMNS = [
    ("change", "change"),
    ("id", "id"),
    ("result", "result"),
    ("question", "question"),
    ("evidence", "evidence"),
    ("answer", "answer"),
    *((gate, gate) for gate in GATES),
]
FLOORS = {"question": 24, "answer": 12, "id": 8, "change": 6}
NEWLY_FAILING = "newly failing"
NEWLY_PASSING = "newly passing"
NEW = "new"
NO_QUERIES = (
    "no queries file: put a queries.json beside the KB (mrptui init writes one) "
    "or pass --queries FILE (docs/queries.md)"
)


def shown_path(path: Path) -> str:
    """A path as the title shows it: relative to the working folder when inside it, `~` for home."""
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


@dataclass(frozen=True)
class QuestionRow:
    """One question's outcome: what each column shows."""

    id: str
    question: str
    passed: bool
    evidence: str
    answer: str
    gates: dict[str, str]


def question_row(spec: QuerySpec, result: QueryResult) -> QuestionRow:
    """Pass means: every expected unit kept by some kb plugin, the answer check and every gate pass."""
    expected = set(result.expect_evidence)
    found = max((len(expected & set(run.kept)) for run in result.retrieval), default=0)
    evidence_ok = found == len(expected)
    evidence = f"{found}/{len(expected)}" if expected else "—"
    if not result.answer_checked:
        answer = "—"
    elif result.answer_problems:
        answer = "✗ " + "; ".join(result.answer_problems)
    else:
        answer = f"✓ {result.status}"
    gates = {
        "must-not-appear": "FAIL" if result.forbidden_seen else "pass",
        "view-boundary": "FAIL" if result.hidden_seen else "pass",
        "abstention": "—"
        if result.expect_status != "no-context"
        else ("FAIL" if result.status == "grounded" else "pass"),
    }
    passed = evidence_ok and not result.answer_problems and "FAIL" not in gates.values()
    return QuestionRow(spec.id, spec.question, passed, evidence, answer, gates)


def question_rows(queries: Sequence[QuerySpec], report: EvalReport) -> list[QuestionRow]:
    results = {result.id: result for result in report.queries}
    return [question_row(spec, results[spec.id]) for spec in queries if spec.id in results]


def changes(previous: dict[str, bool] | None, rows: Sequence[QuestionRow]) -> dict[str, str]:
    """What changed since the previous run, by question id (nothing on the first run)."""
    if previous is None:
        return {}
    marks = {}
    for row in rows:
        before = previous.get(row.id)
        if before is None:
            marks[row.id] = NEW
        elif before and not row.passed:
            marks[row.id] = NEWLY_FAILING
        elif row.passed and not before:
            marks[row.id] = NEWLY_PASSING
    return marks


@dataclass
class EvalMemory:
    """The last eval results per queries file and the KB generation they ran on, kept by the app."""

    results: dict[Path, tuple[int, dict[str, bool], dict[str, str]]] = field(default_factory=dict)

    def remember(self, path: Path, kb_generation: int, rows: Sequence[QuestionRow], *, again: bool) -> dict[str, str]:
        """The change marks of `rows`: against the last results when the KB changed since (a reload,
        seen or not) or the user ran them `again`; reopened on the same KB, the marks stay."""
        generation, passes, marks = self.results.get(path, (-1, None, {}))
        if generation != kb_generation or again:
            marks = changes(passes, rows)
        self.results[path] = (kb_generation, {row.id: row.passed for row in rows}, marks)
        return marks


class EvalScreen(Screen[None]):
    """Pass/fail per labelled question and per gate, re-run after every reload."""

    HELP = """\
## Eval
The labelled queries run against the KB and rules as they are now, in the background: the file
`mrptui --queries FILE` names, else `queries.json` beside the `--kb` path (the bundled sample
queries without `--kb`); with neither the screen says "no queries file". The title shows its path. A question passes when some kb plugin keeps every
expected unit, the answer check (status, mentions) passes and no safety gate fails.

After every reload (a saved edit, `ctrl+r`) the queries run again, and the *change* column marks
what changed since the previous run: **newly failing** (red), newly passing, new.

- `enter` shows the selected question's run in the main screen.
- `r` runs the queries again; `ctrl+r` reloads the KB and rules now; `escape` goes back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back", id="eval.back", tooltip="Back to the explorer"),
        Binding("r", "rerun", "Run again", id="eval.rerun", tooltip="Run the labelled queries again"),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            id="eval.reload",
            tooltip="Re-read the KB and rule files now (the queries then run again)",
        ),
    ]

    class Finished(Message):
        """A worker finished one eval run (generation `generation`)."""

        def __init__(self, generation: int, queries: list, report: EvalReport | None, error: str = "") -> None:
            super().__init__()
            self.generation = generation
            self.queries = queries
            self.report = report
            self.error = error

    def __init__(self, queries_path: Path | None = None, memory: EvalMemory | None = None) -> None:
        """`memory`: the last results, kept by the app across openings, so a reload made while the
        screen was closed is still marked when it opens."""
        super().__init__()
        self.queries_path = queries_path  # None: there is no queries file for this KB
        self.memory = memory if memory is not None else EvalMemory()
        self.generation = 0
        self.runs = 0
        self.rows: list[QuestionRow] = []
        self.specs: dict[str, QuerySpec] = {}
        self.marks: dict[str, str] = {}
        self.again = False  # the running eval was asked for with `r` (not opened, not a reload)
        self.kb_generation = 0
        self.running = False
        self.error = ""

    @property
    def explorer(self) -> Explorer:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("Eval", id="eval-title", classes="screen-title")
        table: DataTable[object] = DataTable(id="eval-table", cursor_type="row", zebra_stripes=True)
        table.border_title = f"Questions · {self.queries_path.name}" if self.queries_path else "Questions"
        yield table
        yield Static("", id="eval-gates")
        yield KeyBar()

    def on_mount(self) -> None:
        self.watch(self.app, "kb_generation", lambda _: self.start(), init=False)
        self.start()
        self.query_one("#eval-table", DataTable).focus()

    def on_resize(self) -> None:
        if self.rows:  # the question column takes what the new width leaves
            self.call_after_refresh(self._render_table)

    # -- running ------------------------------------------------------------------------------

    def start(self, *, again: bool = False) -> None:
        if self.queries_path is None:
            self.error = NO_QUERIES
            self._render_title()
            return
        self.generation += 1
        self.again = again
        self.kb_generation = self.explorer.kb_generation
        self.running = True
        self._render_title()
        generation, session, path = self.generation, self.explorer.session, self.queries_path
        self.run_worker(
            lambda: self._evaluate(generation, session, path),
            thread=True,
            exclusive=True,
            group="eval",
            description="Eval",
            exit_on_error=False,
        )

    def _evaluate(self, generation: int, session, path: Path) -> None:
        from core.eval.labelled import evaluate, load_queries
        from core.infra.config import ConfigError
        from core.kernel.contract import PluginType

        try:
            queries = load_queries(path)
            plugins = [plugin.id for plugin in session.registry.of_type(PluginType.KB)]
            report = evaluate(session, queries, plugins, ("weighted",))
        except ConfigError as exc:
            self.post_message(self.Finished(generation, [], None, "\n".join(d.format() for d in exc.diagnostics)))
        except Exception as exc:  # noqa: BLE001 - shown on the screen, never a crash
            self.post_message(self.Finished(generation, [], None, f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Finished(generation, queries, report))

    @on(Finished)
    def _finished(self, message: Finished) -> None:
        if message.generation != self.generation:
            return  # a run overtaken by a newer reload
        self.running = False
        self.error = message.error
        if message.report is not None:
            self.runs += 1
            rows = question_rows(message.queries, message.report)
            # A run starts only with a queries file (`start`); without one there is nothing to mark against.
            path = self.queries_path
            self.marks = self.memory.remember(path, self.kb_generation, rows, again=self.again) if path else {}
            self.rows = rows
            self.specs = {spec.id: spec for spec in message.queries}
        self._render_table()
        self._render_title()

    # -- rendering ----------------------------------------------------------------------------

    def _render_title(self) -> None:
        parts = ["Eval", escape(shown_path(self.queries_path))] if self.queries_path else ["Eval"]
        if self.rows:
            passed = sum(row.passed for row in self.rows)
            parts.append(f"{passed}/{len(self.rows)} pass")
        if self.runs:
            parts.append(f"run {self.runs}")
        failing = sum(1 for mark in self.marks.values() if mark == NEWLY_FAILING)
        if failing:
            parts.append(f"[$error]{failing} newly failing[/]")
        if self.running:
            parts.append("[$warning]running…[/]")
        if self.error:
            parts.append(f"[$error]✗ {escape(self.error.splitlines()[0])}[/]")
        self.query_one("#eval-title", Static).update(" · ".join(parts))

    def _render_table(self) -> None:
        theme = self.app.current_theme
        error, success, muted = theme.error or "red", theme.success or "green", "dim"
        table = self.query_one("#eval-table", DataTable)
        cursor = table.cursor_row
        rows = []
        for row in self.rows:
            mark = self.marks.get(row.id, "")
            mark_style = {NEWLY_FAILING: f"bold {error}", NEWLY_PASSING: success}.get(mark, muted)
            result = Text("pass", style=success) if row.passed else Text("FAIL", style=f"bold {error}")
            gates = [Text(row.gates[g], style=f"bold {error}" if row.gates[g] == "FAIL" else muted) for g in GATES]
            answer = Text(row.answer, style=error if row.answer.startswith("✗") else "")
            rows.append(
                [
                    Text(mark, style=mark_style),
                    Text(row.id, style=mark_style if mark == NEWLY_FAILING else ""),
                    result,
                    row.question,
                    row.evidence,
                    answer,
                    *gates,
                ]
            )
        refill(table, COLUMNS, rows, floors=FLOORS)
        if table.row_count:
            table.move_cursor(row=min(max(cursor, 0), table.row_count - 1), animate=False)
        self._render_gates()

    def _render_gates(self) -> None:
        parts = []
        for gate in GATES:
            failing = [row.id for row in self.rows if row.gates[gate] == "FAIL"]
            checked = sum(1 for row in self.rows if row.gates[gate] != "—")
            status = f"[$error]FAIL {escape(', '.join(failing))}[/]" if failing else "[$success]pass[/]"
            parts.append(f"{gate} ({checked}): {status}")
        self.query_one("#eval-gates", Static).update("Gates · " + " · ".join(parts))

    # -- actions ------------------------------------------------------------------------------

    def action_rerun(self) -> None:
        self.start(again=True)

    def action_reload(self) -> None:
        self.post_message(ReloadKB())

    @on(DataTable.RowSelected, "#eval-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if not (0 <= event.cursor_row < len(self.rows)):
            return
        spec = self.specs[self.rows[event.cursor_row].id]
        self.post_message(RunQuestion(Request(question=spec.question, caller=spec.as_caller())))
