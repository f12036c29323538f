"""Named fields in two columns (a unit's id, role, claim…; why-not's lanes and reasons): a value
that wraps stays in its own column, under its first line, instead of running back under the names."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Grid
from textual.markup import escape
from textual.widgets import Static


def grid_width(rows: Sequence[tuple[str, str]]) -> int:
    """The width the rows take unwrapped: the widest name, the gutter, the widest value line."""
    names = max((cell_len(name) for name, _ in rows), default=0)
    values = max((cell_len(line) for _, value in rows for line in value.splitlines()), default=0)
    return names + 1 + values


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

    def __init__(self, rows: Sequence[tuple[str, str]] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = tuple(rows)

    def compose(self) -> ComposeResult:
        for name, value in self.rows:
            yield from self._pair(name, value)

    @staticmethod
    def _pair(name: str, value: str) -> tuple[Static, Static]:
        return Static(escape(name), classes="field-name"), Static(escape(value), classes="field-value")

    def show(self, rows: Sequence[tuple[str, str]]) -> None:
        """Show `rows` instead. A pane that follows a cursor calls this on every move: the cells
        are updated in place, new ones mounted only past the most shown so far, and the rest hidden
        (removing and mounting cells on every move would let the grid be drawn half-built)."""
        self.rows = tuple(rows)
        cells = list(self.query_children(Static))
        for row, (name, value) in enumerate(self.rows):
            if 2 * row < len(cells):
                for cell, text in zip(cells[2 * row : 2 * row + 2], (name, value), strict=True):
                    cell.update(escape(text))
                    cell.display = True
            else:
                self.mount(*self._pair(name, value))
        for cell in cells[2 * len(self.rows) :]:
            cell.display = False
