"""The main screen's pane layout: column and row weights of its 3×2 grid, presets to cycle, and the
focused pane grown or shrunk. Kept across sessions in `$XDG_DATA_HOME/mrptui/layout.json`, beside
the question history (never in a user's config files)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mrptui.paths import read_only, user_data_dir
from mrptui.widgets.column_fit import fit_to_room

LAYOUT_ENV = "MRPTUI_LAYOUT"
WEIGHT_MIN, WEIGHT_MAX = 1, 12
FIT = "fit"
# In the fitted split no side of the top row gets less than this many cells, whatever it shows.
SIDE_MIN = 24
# The proofs pane's narrowest fitted width where the screen has room: a proof tree nests rule →
# premise → unit, and at 28 columns (120 wide, before) every unit id was cut.
PROOFS_MIN = 50
# ... but the plan/attempts column keeps this many, so the timeline's status words stay whole
# (at 110 columns, the narrowest grid, the proofs pane then has 42).
LEFT_MIN = 40

# Grid cells: plan (column 0, row 0), evidence (columns 1-2, row 0), attempts (0, 1), proofs (1, 1),
# answer (2, 1). A pane grows by its column's and its row's weight.
PLACES: dict[str, tuple[int, int]] = {
    "plan": (0, 0),
    "evidence": (1, 0),
    "attempts": (0, 1),
    "proofs": (1, 1),
    "answer": (2, 1),
}


Weight = Annotated[int, Field(ge=WEIGHT_MIN, le=WEIGHT_MAX)]


class Layout(BaseModel):
    """Weights (fr units) of the grid's three columns and two rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default=FIT, max_length=40)
    columns: tuple[Weight, Weight, Weight] = (3, 3, 2)
    rows: tuple[Weight, Weight] = (1, 1)

    def resized(self, pane: str, step: int) -> Layout:
        """The layout with `pane`'s column and row `step` weights larger (smaller when negative)."""
        column, row = PLACES[pane]

        def clamp(weight: int) -> int:
            return max(WEIGHT_MIN, min(WEIGHT_MAX, weight + step))

        columns = tuple(clamp(w) if i == column else w for i, w in enumerate(self.columns))
        rows = tuple(clamp(w) if i == row else w for i, w in enumerate(self.rows))
        return Layout(name="custom", columns=columns, rows=rows)  # type: ignore[arg-type]

    @property
    def grid_columns(self) -> str:
        return " ".join(f"{w}fr" for w in self.columns)

    @property
    def grid_rows(self) -> str:
        return " ".join(f"{w}fr" for w in self.rows)


PRESETS: tuple[Layout, ...] = (
    Layout(),  # "fit": the columns follow what the panes show (fit_columns); rows as "balanced"
    Layout(name="balanced"),
    Layout(name="debugger", columns=(4, 3, 2), rows=(2, 3)),  # plan and attempts wide, timeline tall
    Layout(name="evidence", columns=(2, 5, 2), rows=(3, 2)),
    Layout(name="answer", columns=(2, 2, 4), rows=(1, 2)),
)


def fit_columns(total: int, left: int, right: int, answer_weight: float) -> tuple[int, int]:
    """The fitted split of `total` cells: (the plan/attempts column, the answer column), from the
    cells the left column (plan, attempts) and the evidence pane (the two right columns) want,
    each with its frame. Room to spare is shared in proportion to what each wants; too little
    room cuts the wider side first (a water level), neither below SIDE_MIN nor its floor, and the
    proofs pane keeps PROOFS_MIN where the width allows."""
    answer = round(total * answer_weight)
    proofs = max(SIDE_MIN, min(PROOFS_MIN, total - answer - SIDE_MIN))
    # Below the evidence pane sit proofs and the answer: the right side never wants less than them.
    left, right = max(left, SIDE_MIN), max(right, answer + proofs)
    if left + right <= total:
        first = left + (total - left - right) * left // (left + right)
    else:
        floors = [min(left, max(SIDE_MIN, total // 4)), min(right, max(SIDE_MIN, total // 3))]
        first = fit_to_room([left, right], total, floors)[0]
    first = max(min(first, total - answer - proofs), min(LEFT_MIN, total // 2))
    # The bottom row's answer keeps its weight's share of the whole width; proofs take the rest.
    return first, max(1, min(answer, total - first - SIDE_MIN))


def next_preset(layout: Layout) -> Layout:
    names = [preset.name for preset in PRESETS]
    index = names.index(layout.name) + 1 if layout.name in names else 0
    return PRESETS[index % len(PRESETS)]


def layout_path() -> Path:
    override = os.environ.get(LAYOUT_ENV)
    return Path(override).expanduser() if override else user_data_dir() / "layout.json"


def load_layout(path: Path | None) -> Layout:
    """The saved layout; the default when there is none or it cannot be read (it is only a preference)."""
    if path is None:
        return Layout()
    try:
        return Layout.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return Layout()


def save_layout(path: Path | None, layout: Layout) -> str:
    """Write the layout (atomically); '' or why it could not be saved."""
    if path is None:
        return ""
    if why := read_only(path):
        return f"layout not saved to {path}: it {why}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(layout.model_dump_json(), encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        return f"layout not saved to {path}: {exc.strerror or exc}"
    return ""
