"""Where a shard's units were read from: the KB file, line and column of each, as the coordinator's
KB has them. A shard's Markdown gives its units the shard file's place; a unit a shard sends the
coordinator (answer text, a passage's neighbours, an explained candidate) carries its first place
instead, so the answer points at the author's file and reads neighbours as one process does.

Kept beside each of the shard's Markdown files as a hidden file (a KB folder skips hidden
entries), as columns in the file's order; a shard whose units do not match them, in load order,
is refused, never mislabelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from core.store.atomic import replace_file
from core.units import KnowledgeUnit, SourceLocation

ORIGINS = ".origins-*.json"  # one per Markdown file of the shard: units-00003.md, .origins-00003.json


class OriginsError(Exception):
    """The origins file is missing, damaged, or does not list the shard's units."""


class ShardOrigins(BaseModel):
    """Per unit of the shard, in load order: its id, its file (an index into `files`, -1: the
    unit has no location), line, column, and whether it was cut from prose."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[str, ...]
    ids: tuple[str, ...]
    file: tuple[int, ...]
    line: tuple[int, ...]
    col: tuple[int, ...]
    prose: tuple[bool, ...]
    _rows_by_file: dict[int, list[int]] | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, units: Sequence[KnowledgeUnit]) -> ShardOrigins:
        files: dict[str, int] = {}
        places = [unit.location for unit in units]
        file = tuple(-1 if p is None else files.setdefault(p.file, len(files)) for p in places)
        return cls(
            files=tuple(files),
            ids=tuple(unit.id for unit in units),
            file=file,
            line=tuple(p.line if p else 0 for p in places),
            col=tuple(p.col if p else 0 for p in places),
            prose=tuple(bool(p and p.prose) for p in places),
        )

    def location(self, row: int) -> SourceLocation | None:
        """The first place of the shard's unit in load-order row `row`."""
        index = self.file[row]
        if index < 0:
            return None
        return SourceLocation(file=self.files[index], line=self.line[row], col=self.col[row], prose=self.prose[row])

    def rows_in(self, file: str) -> list[int]:
        """The load-order rows of the shard's units first read from `file` (indexed once)."""
        if self._rows_by_file is None:
            by_file: dict[int, list[int]] = {}
            for row, index in enumerate(self.file):
                by_file.setdefault(index, []).append(row)
            self._rows_by_file = by_file
        try:
            return self._rows_by_file.get(self.files.index(file), [])
        except ValueError:
            return []

    def files_of(self, rows: Sequence[int]) -> set[str]:
        """The KB files the units of these rows were first read from."""
        return {self.files[index] for index in {self.file[row] for row in rows} if index >= 0}


def write_origins(folder: Path, number: int, units: Sequence[KnowledgeUnit]) -> None:
    """The origins of the shard's `number`th Markdown file's units."""
    replace_file(folder / f".origins-{number:05d}.json", ShardOrigins.of(units).model_dump_json().encode("utf-8"))


def read_origins(folder: Path, ids: Sequence[str]) -> ShardOrigins:
    """The shard's origins, its files' in order; `ids`: its units' ids in load order, which they
    must list."""
    parts = []
    for path in sorted(folder.glob(ORIGINS)):
        try:
            parts.append(ShardOrigins.model_validate_json(path.read_bytes()))
        except OSError as exc:
            raise OriginsError(f"{path}: {exc.strerror or exc}") from None
        except ValidationError as exc:
            raise OriginsError(f"{path}: not a shard's origins ({exc.error_count()} errors)") from None
    origins = _joined(parts)
    if list(origins.ids) != list(ids):
        raise OriginsError(f"{folder}: its {ORIGINS} files do not list the shard's {len(ids)} units in their order")
    return origins


def _joined(parts: Sequence[ShardOrigins]) -> ShardOrigins:
    files: dict[str, int] = {}
    file: list[int] = []
    for part in parts:
        numbers = [files.setdefault(name, len(files)) for name in part.files]
        file += [numbers[index] if index >= 0 else -1 for index in part.file]
    return ShardOrigins(
        files=tuple(files),
        ids=tuple(uid for part in parts for uid in part.ids),
        file=tuple(file),
        line=tuple(line for part in parts for line in part.line),
        col=tuple(col for part in parts for col in part.col),
        prose=tuple(prose for part in parts for prose in part.prose),
    )
