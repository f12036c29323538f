"""Failing closed on a reload: units a broken file no longer yields are withdrawn for every caller.

Never the last good version: a failed edit may have been the one that restricted a unit (an added
Acl, a narrower Region or date), so serving the old text could widen access. The file's other
units are read afresh and stay served; the reader's own errors tell the author, at file and line,
what to fix. This module writes the notes that say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from core.infra.diagnostics import Code, Diagnostic, Severity
from core.kb.unit_table import PUBLIC, UnitTable

WITHDRAWN_NAMED = 3  # a withdrawal note names at most this many units, then counts the rest


def withdrawn_message(ids: Sequence[str]) -> str:
    """The warning for units a broken file no longer yields, naming them (the author fixes them);
    without ids (none the note's readers may see named) it names none."""
    ids = sorted(ids)
    until = "for every caller until this file's errors are fixed"
    if not ids:
        return f"units this file held before are withdrawn {until}"
    if len(ids) == 1:
        return f"unit {ids[0]} is withdrawn {until}"
    named = ", ".join(ids[:WITHDRAWN_NAMED]) + (
        f" and {len(ids) - WITHDRAWN_NAMED} more" if len(ids) > WITHDRAWN_NAMED else ""
    )
    return f"{len(ids)} units this file held before are withdrawn {until}: {named}"


def withdrawal_notes(
    before: UnitTable, earlier: Sequence[Diagnostic], fresh: Sequence[Diagnostic], fresh_ids: Mapping[str, int]
) -> list[Diagnostic]:
    """The notes for the units of files with errors in `fresh` (a reload's diagnostics) that
    `before` (the previous load's table, whose diagnostics were `earlier`) held and the reload
    no longer yields (`fresh_ids`: the reload's ids), plus the earlier notes still in force."""
    broken = {d.file for d in fresh if d.is_error}
    broken_files = [i for i, name in enumerate(before.files) if name in broken]
    # Every row, not only live ones: a later unit of a clashing id may be the one a caller was served.
    rows: np.ndarray | list[int] = np.flatnonzero(np.isin(before.file, broken_files)) if broken_files else []
    gone: dict[str, list[str]] = {}
    public: dict[str, list[str]] = {}
    lines: dict[str, int] = {}  # each withdrawn unit's line before the edit
    for row in rows:
        if before.ids[row] not in fresh_ids:
            file, unit_id = before.files[before.file[row]], before.ids[row]
            gone.setdefault(file, []).append(unit_id)
            lines[unit_id] = int(before.line[row])
            if before.perms[before.perm[row]] == PUBLIC:
                public.setdefault(file, []).append(unit_id)
    # A note about a file whose withdrawn units were all restricted is the author's only, and a
    # note others may see names only public units (fail closed: a restricted id never shows).
    shown = {d.file for d in earlier if d.code is Code.UNITS_WITHDRAWN and not d.author_only}
    notes = []
    for file, ids in sorted(gone.items()):
        author_only = file not in public and file not in shown
        named = ids if author_only else public.get(file, [])
        # At the first named unit's line (a note naming none points at no unit: line 1).
        notes.append(
            Diagnostic(
                code=Code.UNITS_WITHDRAWN,
                file=file,
                severity=Severity.WARNING,
                line=min((lines[i] for i in named), default=1),
                message=withdrawn_message(named),
                author_only=author_only,
                units=len(named),
            )
        )
    # Until the file is fixed the note stays, across reloads that change other files.
    notes += [d for d in earlier if d.code is Code.UNITS_WITHDRAWN and d.file in broken and d.file not in gone]
    return notes
