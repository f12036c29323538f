"""Named fields in two columns (a unit's id, role, claim…; why-not's lanes and reasons): a value
that wraps stays in its own column, under its first line, instead of running back under the names."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Grid
from textual.markup import escape
from textual.widgets import Static


class FieldGrid(Grid):
    DEFAULT_CSS = """
    FieldGrid {
        grid-size: 2;
        grid-columns: auto 1fr;
        grid-gutter: 0 1;
        height: auto;
    }
    FieldGrid > Static {
        height: auto;
    }
    FieldGrid > .field-name {
        text-style: bold;
    }
    """

    def __init__(self, rows: Sequence[tuple[str, str]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = tuple(rows)

    def compose(self) -> ComposeResult:
        for name, value in self.rows:
            yield Static(escape(name), classes="field-name")
            yield Static(escape(value), classes="field-value")
