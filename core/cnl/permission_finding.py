"""A permission label found where no reader reads a field (docs/security.md, "The permission-label
grammar"): the typed decision the label finders (core/cnl/permissions.py,
core/cnl/permission_inline.py) hand the readers, which withdraw its unit with an error saying why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class LabelFinding:
    """`name` as written reads like the permission field `label`, at 1-based `column` of the text
    read. `position` is the label position it stands at (`line start`, `table cell`, `running
    text` …); `reason` what made the name a label there (`separator`, `weak separator and a typed
    value`, `name and a date`, `unambiguous name and a value`, `quoted key`, `name alone in a cell`)."""

    name: str
    label: str
    column: int
    position: str
    reason: str
    shown: bool = False  # found in the line as a screen shows it (core/cnl/permission_readings.py)

    @property
    def span(self) -> tuple[int, int]:
        """1-based columns of the name's first character and just past its last."""
        return self.column, self.column + len(self.name)

    def moved(self, by: int) -> LabelFinding:
        """The same finding in a text that holds the one read at offset `by`."""
        # Not `replace`, which costs ~3 µs a call: every label a line's leader precedes is moved.
        return LabelFinding(self.name, self.label, self.column + by, self.position, self.reason, self.shown)

    def at(self, position: str) -> LabelFinding:
        """The same finding, reached through another label position (`two lines`)."""
        return replace(self, position=position)


def first_reading(findings: Iterable[LabelFinding | None]) -> LabelFinding | None:
    """The first finding among a line's readings (as stored, then as shown)."""
    for index, found in enumerate(findings):
        if found is not None:
            return found if index == 0 else replace(found, shown=True)
    return None


# Reasons of labels read from a form or a value a public text may hold too (fail closed), each
# with how its author keeps such a text public (`unread_message` in core/cnl/permissions.py).
NOTICE = "a restriction notice"
LEVEL = "a confidentiality level"
MARKED = "a name marked by its form"
HEADING_OVER_VALUE = "a heading over its value"
AMBIGUOUS_REASONS = {
    NOTICE: "write the notice inside a sentence",
    LEVEL: "name the field otherwise or give it another value",
    MARKED: "write the name in lower case and unmarked, or with a ':' after it if it is a field",
    HEADING_OVER_VALUE: "give the section a sentence",
}
