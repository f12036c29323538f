"""Tables as a permission reader sees them (docs/security.md, "The permission-label grammar"): a
row's cells, and whether a first row is a header naming columns (`Region | Population | Area` over
rows of numbers, whose field names are the columns') or a name and its value (`| Region | EU |`),
in Markdown, tab-separated text and HTML (`<th>` cells, rendered by core/cnl/permission_readings.py
with a delimiter row under them, as Markdown writes one)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import takewhile

from core.cnl.canonical import canonical_forms
from core.cnl.permission_names import MAX_VALUE_WORDS, PREFIX_CHARS, ends_with_date, permission_label
from core.cnl.permission_readings import BLOCK_LINES

CELL_BARS = ("|", "\uff5c")
CELL_SPLIT = re.compile("[|\uff5c]")
# A sentence's end: its mark, then any blank (a no-break or an em space too), or a capital right
# after it (`… 4471.Region: EU`); a semicolon goes on with the sentence.
SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?:\s+|(?=[A-Z]))")


# A Markdown table's delimiter row (`|---|:--:|`), which makes the row above it the header.
_DELIMITER_ROW = re.compile(r"\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?")


def header_row(line: str, below: str | None, rows: Sequence[str] = ()) -> bool:
    """Whether `line` is a table's header row, with `below` the line under it and `rows` up to
    `TABLE_ROWS` lines under that: a row of cells (between tabs, or bars) followed by a Markdown
    delimiter row (`|---|---|`) or, for a tab-separated table, by a row of as many tabs, and
    unlike its rows of data in type (`_unlike`). A header names columns (`Region<TAB>Population`
    over `Finland<TAB>5.5`): a field's name there is a column's, whose values are the rows below.
    A column's name is short and no sentence; a row with a longer cell, or a date (a value), is
    read as any line."""
    if below is None or not below.strip() or len(line) > PREFIX_CHARS:
        return False
    cells, under = line.strip(), below.strip()
    if "\t" in cells:
        if under.count("\t") != cells.count("\t"):
            return False
        data = [under, *(row.strip() for row in rows)]
        data = data[: next((i for i, row in enumerate(data) if row.count("\t") != cells.count("\t")), len(data))]
    elif cells.startswith(CELL_BARS) and _DELIMITER_ROW.fullmatch(under):
        data = list(takewhile(lambda row: row.startswith(CELL_BARS), (row.strip() for row in rows)))
    else:
        return False
    if len(data) < 2:
        # Nothing tells a header from a first row of data but how it differs from the rows under
        # it, and a Markdown delimiter row only says a renderer shows the first row in bold: over
        # one row (or none), a name over a number is a pair of a name and its value as often as a
        # column's name (`| Region | EU |` over `| Code | 4471 |`), so the row is read as any
        # line (fail closed: `Region<TAB>Population` over one `Finland<TAB>5.5` is withdrawn,
        # named by `mrptui check`).
        return False
    header = row_cells(cells)
    return (
        not _pair_shaped(header)
        and _unlike(header, [row_cells(row) for row in data])
        and all(_column_name(cell.strip(" \t*_`~")) for cell in header)
    )


def pair_row(line: str) -> bool:
    """Whether `line` is a table row of two cells whose first is a permission field's name: the
    rows `header_row` reads as a name and its value (`_pair_shaped`)."""
    row = line.strip()
    return (row.startswith(CELL_BARS) or "\t" in row) and _pair_shaped(row_cells(row))


def _pair_shaped(header: list[str]) -> bool:
    """Whether a first row of two cells starts with a permission field's name: a name and its
    value (`| Region | EU |` over `| Code | 4471 |` and `| Floor | 3 |`) as often as two columns'
    names (`Region<TAB>Population` over numbers), whatever the rows under it hold, so it is read
    as any line (fail closed)."""
    written = [cell.strip(" \t*_`~") for cell in header if cell.strip(" \t*_`~")]
    return len(written) == 2 and permission_label(written[0]) is not None


# The rows of data under a header read to tell it from them (`header_row`).
TABLE_ROWS = 4
_DIGIT = re.compile(r"\d")


def _unlike(header: list[str], data: list[list[str]]) -> bool:
    """Whether a table's first row differs in type from its rows of data, as a header does
    (csv.Sniffer's test): some column holds a number or a date in every row under a cell with no
    digit (`Region<TAB>Population` over `Finland<TAB>5.5`). A row like the rows under it is data
    (`Region<TAB>EU` over `Owner<TAB>Ops`, or over `Code<TAB>4471` and `Owner<TAB>Ops`; `| Region |
    EU |` over `|---|---|` and `| Owner | Ops |`): a two-column table of names and values, whose
    first row a renderer shows in bold."""
    return any(
        _DIGIT.search(cell) is None and all(column < len(row) and _DIGIT.search(row[column]) for row in data)
        for column, cell in enumerate(header)
    )


def _column_name(cell: str) -> bool:
    return (
        len(cell.split()) <= MAX_VALUE_WORDS
        and SENTENCE_END.search(cell) is None
        and not ends_with_date(canonical_forms(cell)[0], 0)
    )


def row_cells(row: str) -> list[str]:
    return CELL_SPLIT.split(row.replace("\t", "|"))


def header_blocks(texts: Sequence[str]) -> frozenset[int]:
    """The indices of a line's rendered blocks (`readings`, from `BLOCK_LINES` on) that are a
    table's header over the blocks under it: an HTML `<th>` row over its delimiter row and rows of
    values (`Region | Population | Area` over numbers) names columns, as in Markdown."""
    return frozenset(
        index
        for index in range(BLOCK_LINES, len(texts) - 1)
        if header_row(texts[index], texts[index + 1], texts[index + 2 : index + 2 + TABLE_ROWS])
    )
