"""Many small KB files of one folder cached as one segment.

A segment per file costs a few opens and checks per file on every open (its source record, its
files, its BM25 part, its vector set): 50 folders of 1,000 one-unit notes took minutes to open
warm. Runs of small files in one folder are read, keyed and cached together instead, so a warm
open costs one `stat` per file (the scan's, compared with the group's record) and a few reads per
group. The price: an edit to one of them re-reads its group (at most `MAX_GROUP_FILES` small
files), not only itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

Stat = tuple[int, int, int, int]  # mtime_ns, size, inode, ctime_ns


class GroupCaps(BaseModel):
    """Which files are grouped. Bigger groups mean fewer opens per open and more re-reading per edit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # A file this small or smaller may join a group (a few dozen units of Markdown).
    max_file_bytes: int = Field(default=16_384, ge=0, le=4_000_000)
    # A folder with fewer small files than this keeps a segment per file.
    min_files: int = Field(default=16, ge=2, le=1_000_000)
    # A group's files; a folder with more is cut into runs of this many (in name order).
    max_files: int = Field(default=500, ge=2, le=1_000_000)


CAPS = GroupCaps()


@dataclass(frozen=True)
class FileGroup:
    """Small files of one folder, in load order, cached as one segment named `name`."""

    name: str
    files: tuple[Path, ...]

    def __str__(self) -> str:
        return self.name


Source = Path | FileGroup


def plan_groups(files: Sequence[Path], stats: Mapping[str, Stat], caps: GroupCaps = CAPS) -> list[Source]:
    """`files` in their order, with each folder's small files (by their scanned size) joined into
    groups of at most `caps.max_files`; a folder with fewer than `caps.min_files` small files, and
    every larger file, stays one source per file."""
    # By name: hashing 50,000 Paths cost more than the rest of the plan.
    small: dict[str, list[Path]] = {}
    for file in files:
        name = str(file)
        stat = stats.get(name)
        if stat is not None and 0 <= stat[1] <= caps.max_file_bytes:
            small.setdefault(os.path.dirname(name), []).append(file)
    group_of: dict[str, FileGroup] = {}
    for folder, members in small.items():
        if len(members) < caps.min_files:
            continue
        for start in range(0, len(members), caps.max_files):
            run = tuple(members[start : start + caps.max_files])
            group = FileGroup(os.path.join(folder, f"[{run[0].name} … {run[-1].name}]"), run)
            group_of.update(dict.fromkeys(map(str, run), group))
    sources: list[Source] = []
    placed: set[str] = set()
    for file in files:
        owner = group_of.get(str(file))
        if owner is None:
            sources.append(file)
        elif owner.name not in placed:
            placed.add(owner.name)
            sources.append(owner)
    return sources


def members(source: Source) -> tuple[Path, ...]:
    return source.files if isinstance(source, FileGroup) else (source,)
