"""What the store knows of a KB source before it reads it (its stat, to tell an unchanged file
without reading it) and the bytes it keys a segment by.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from core.store.groups import FileGroup, Source, members

# A file's (mtime_ns, size, inode, ctime_ns); a group's, one per member.
SourceStat = list[int] | list[list[int]]


def source_stat(source: Source, stats: Mapping[str, Sequence[int]]) -> SourceStat | None:
    """A source's stat from a scan's (`stats` by file name), as the store compares it (core/store/key_records.py: `known_key`); None
    when a member is not there (the store then takes its own)."""
    lists = []
    for file in members(source):
        found = stats.get(str(file))
        if found is None or found[1] < 0:
            return None
        lists.append(list(found))
    return lists if isinstance(source, FileGroup) else lists[0]


def newest_mtime(stat: SourceStat) -> int:
    """The latest mtime of a source's stat."""
    first = stat[0]
    # A group's stat holds only lists (one per member), a file's only ints.
    return max(member[0] for member in cast(list[list[int]], stat)) if isinstance(first, list) else first


def stat_of(file: Source) -> SourceStat:
    return [_file_stat(member) for member in file.files] if isinstance(file, FileGroup) else _file_stat(file)


def _file_stat(file: Path) -> list[int]:
    info = os.stat(file)
    return [info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns]


def stat_or_none(file: Source) -> SourceStat | None:
    try:
        return stat_of(file)
    except OSError:
        return None


def file_content(file: Source) -> bytes | None:
    """The file's bytes when it is a regular file small enough to be read (a group's: each
    member's name, size and bytes in turn); None means "do not cache"."""
    if isinstance(file, FileGroup):
        parts = []
        for member in file.files:
            data = file_content(member)
            if data is None:
                return None
            parts += [os.fsencode(str(member)), b"\0%d\0" % len(data), data]
        return b"".join(parts)
    from core.cnl.source import read_cap  # with the readers: only when a file is read

    try:
        info = os.stat(file)
        cap = read_cap(file)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        with open(file, "rb") as handle:
            return handle.read(cap + 1)
    except OSError:
        return None
