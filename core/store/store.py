"""Finding, building and saving segments under the cache folder, and keeping that folder bounded.

Layout: `<root>/segments/<digest of the file's path>/<key>/`. A key hashes the file's content,
its path (units record it), the segment format and the source of every module that shapes a
segment (readers, tokenizer, stopwords, stemmer mode, BM25 fields, and every core module they
import: `shaping_files`), so any change to those
rebuilds the segment and an edit to one file rebuilds only that file's segment. Only the newest
key of each path is kept. A cache folder that cannot be written (read-only, full), or that may
not be trusted (core/store/private.py), turns the store off for the process, with one warning.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from core.infra.diagnostics import Code, Diagnostic, Severity
from core.store.arrays import INDEX_SUFFIX, folder_bytes
from core.store.atomic import TEMP_FOLDER, is_orphan, publish_dir, remove_orphans, replace_file
from core.store.contents import SOURCES, STEMS_FILE, cache_entries, cache_refusal
from core.store.groups import FileGroup, Source, members
from core.store.location import cache_root
from core.store.mapped import npy_array
from core.store.patch import BLOCKS, BlockTable, block_table, patched
from core.store.private import Mac, linked_below, private_dirs
from core.store.segment import Segment, SegmentError
from core.store.shaping import RACY_NS, code_digest
from core.text.tokenizer import add_stem_source, computed_stems, learn_stems

DEFAULT_MAX_BYTES = 4 << 30
MAX_BYTES_ENV = "MRPTUI_CACHE_MAX_MB"
MAX_VIEW_FILES = 4
MAX_STORED_STEMS = 200_000
# The table records which tokenizer source computed it; a stem table from other code is ignored.
_STEMMER_KEY = "\0stemmer"


def segment_key(file: Source, content: bytes, root: Path | None = None) -> str:
    hasher = hashlib.sha256(code_digest(root).encode())
    hasher.update(os.fsencode(str(file)) + b"\0")
    hasher.update(content)
    return hasher.hexdigest()[:32]


class SegmentStore:
    """Segments of KB files, from the cache when their key matches, else built (and saved)."""

    def __init__(self, root: Path | None, max_bytes: int = DEFAULT_MAX_BYTES, *, defer_blocks: bool = False):
        self.root = root
        self.max_bytes = max_bytes
        # A cold open's build workers save no block table (the first answer never reads one):
        # the second pass adds it (`add_block_table`).
        self.defer_blocks = defer_blocks
        self.builds = 0
        self.loads = 0
        self._saved_since_prune = False
        # The cache's size after this store last pruned, plus what it saved since: while that
        # stays within the bound, a save (every reload) does not walk the whole cache again.
        self._pruned_bytes: int | None = None
        self._saved_bytes = 0
        self._lock = threading.Lock()
        self._notes: list[Diagnostic] = []
        self._disabled_reason: str | None = None
        # Block tables of segments built here (by file, with their segment), so the next edit of
        # a file re-reads only what changed without reading the table back from the cache.
        self._blocks: dict[str, tuple[Segment, BlockTable]] = {}
        self._mac: Mac | None = None
        self._swept = False
        self._checked: set[Path] = set()
        reason = cache_refusal(root) if root is not None else None
        if reason is not None:
            self._disable(reason)

    @property
    def mac(self) -> Mac:
        """The cache's key for segment digests (read, or made, on first use)."""
        if self._mac is None:
            assert self.root is not None
            self._mac = Mac.of_root(self.root)
        return self._mac

    @property
    def enabled(self) -> bool:
        return self.root is not None and self._disabled_reason is None

    def segment(self, file: Source, earlier: Segment | None = None, stat: SourceStat | None = None) -> Segment:
        """The segment of a file (or of a group of small files, core/store/groups.py): read from
        the cache when its key matches, else built (reusing `earlier`'s tokens for unchanged
        units) and saved. `stat`: the source's stat as the caller just took it (`source_stat`),
        so an unchanged source costs no second one."""
        if not self._swept:
            self.temp_folder()
        return self._segment(file, earlier, stat).without_json()

    def temp_folder(self) -> Path | None:
        """Where folders are written before they are published (None without a usable cache); the
        first call removes what writers that no longer run left there (killed mid-build)."""
        if self.root is None or not self.enabled:
            return None
        folder = self.root / TEMP_FOLDER
        if not self._swept:
            self._swept = True
            remove_orphans(folder)
        try:
            private_dirs(folder, self.root)
        except OSError:
            return None
        return folder

    def _segment(self, file: Source, earlier: Segment | None, stat: SourceStat | None = None) -> Segment:
        if not self.enabled or not self._unlinked(file):
            return self._build(file, "", earlier)[0]
        known = self._known_key(file, stat)
        # Stat before reading: a record pairs the key with the stat the read bytes had (see
        # `_remember_key`), never with a stat taken after a replace that landed meanwhile.
        before, read_ns = (None, 0) if known is not None else (_stat_or_none(file), time.time_ns())
        content = None if known is not None else _content(file)
        if known is not None:
            key = known
        elif content is not None:
            key = segment_key(file, content, self.root)
        else:
            return self._build(file, "", earlier)[0]
        folder = self._path_folder(file) / key
        if folder.is_dir():
            try:
                segment = Segment.load(folder, key, self.mac)
            except OSError as exc:
                self._disable(
                    f"cannot read the index cache's key at {self.root} ({exc.strerror or exc}); running without it"
                )
                return self._build(file, "", earlier)[0]
            except SegmentError as exc:
                self._note(str(folder), f"cached segment of {file} was unusable ({exc}); rebuilt it")
                shutil.rmtree(folder, ignore_errors=True)
            else:
                with self._lock:
                    self.loads += 1
                add_stem_source(str(folder), segment.stems)
                if known is None:
                    self._remember_key(file, key, before, read_ns)
                return segment
        if content is None:
            before, read_ns = _stat_or_none(file), time.time_ns()
            content = _content(file)
            if content is None:
                return self._build(file, "", earlier)[0]
            key = segment_key(file, content, self.root)
            folder = self._path_folder(file) / key
        segment, blocks = self._build(file, key, earlier, content)
        # The file may have changed while it was read: then the segment does not match the key.
        if _content(file) == content:
            if blocks is None and not isinstance(file, FileGroup) and not self.defer_blocks:
                blocks = block_table(content, str(file), segment)
            if self._save(segment, folder, blocks):
                self._remember_key(file, key, before, read_ns)
        return segment

    def add_block_table(self, file: Path, segment: Segment) -> bool:
        """Store the block table of a segment saved without one (`defer_blocks`), made from the
        file's content only while that content is still what the segment was built from. False
        when none was stored: the file's next edit then reads it whole, as with no table."""
        folder = self.folder_of(segment)
        content = _content(file) if folder is not None else None
        if folder is None or content is None or segment_key(file, content, self.root) != segment.key:
            return False
        blocks = block_table(content, str(file), segment)
        if blocks is None:
            return False
        try:
            Segment.add_array(folder, segment.key, self.mac, BLOCKS, blocks.rows)
        except (OSError, SegmentError):
            return False
        return True

    def is_recorded(self, file: Path) -> bool:
        """Whether the file's key is on record for its current stat (`is_cached` without reading it)."""
        return self.enabled and self._known_key(file) is not None

    def is_cached(self, file: Path) -> bool:
        """Whether `segment(file)` would read the cache rather than build (reads and hashes the
        file unless its stat is on record)."""
        if not self.enabled:
            return False
        if self._known_key(file) is not None:
            return True
        if not self._path_folder(file).is_dir():
            return False  # nothing stored for this path (a first open): no need to read and hash it
        content = _content(file)
        return content is not None and (self._path_folder(file) / segment_key(file, content, self.root)).is_dir()

    def _known_key(self, file: Source, stat: SourceStat | None = None) -> str | None:
        """The key recorded for the file's current stat, so an unchanged file is not read and
        hashed again (git's index does the same). Trusted only when the file was last modified
        at least `RACY_NS` before it was read: an edit within the same timestamp tick as the
        read could otherwise keep size and mtime. Inode and ctime catch replaced or touched
        files, also a replace that keeps size and mtime (rsync): the stat recorded is the one
        taken before reading (`_remember_key`)."""
        try:
            record = json.loads(self._source_record(file).read_bytes())
            stat = _stat_of(file) if stat is None else stat
            if (
                record["code"] == code_digest(self.root)
                and record["stat"] == stat
                and record["read_ns"] - _newest(stat) >= RACY_NS
                and (self._path_folder(file) / record["key"]).is_dir()
            ):
                return str(record["key"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            pass
        return None

    def _remember_key(self, file: Source, key: str, before: SourceStat | None, read_ns: int) -> None:
        """Record `key` for the stat the file had before it was read, if it still has it now
        that the segment is published: a file replaced meanwhile (even one keeping size and
        mtime) is read and hashed again by the next open instead of served from the old key."""
        try:
            if before is None or _stat_of(file) != before:
                return
            record = {"code": code_digest(self.root), "key": key, "stat": before, "read_ns": read_ns}
            path = self._source_record(file)
            private_dirs(path.parent, self.root)
            replace_file(path, json.dumps(record).encode())
        except OSError:
            pass  # only a shortcut: the next open reads and hashes the file

    def note(self, where: str, message: str) -> None:
        """An INDEX_CACHE warning from data kept beside a segment (core/store/vectors.py); the
        next load or reload reports it with the store's own."""
        self._note(where, message)

    def drop_damaged(self, paths: list[str]) -> None:
        """Cache files truncated or rewritten while mapped (core/store/mapped.py): the folder
        holding each (a segment, an index or a vector set) is removed, so it is rebuilt."""
        for path in paths:
            self._note(path, "a cached file changed under this session (truncated or rewritten); rebuilt its folder")
            shutil.rmtree(Path(path).parent, ignore_errors=True)

    def take_notes(self) -> list[Diagnostic]:
        """Warnings since the last call (unusable segments, a cache turned off), each given once."""
        with self._lock:
            notes, self._notes = self._notes, []
        return notes

    def prune_after_writes(self) -> None:
        """`prune` when this store saved a segment since it last pruned and its saves may have
        pushed the cache past the bound: walking the whole cache costs ~O(files) (at 1M units,
        200 files, most of a reload)."""
        if self._saved_since_prune and (
            self._pruned_bytes is None or self._pruned_bytes + self._saved_bytes > self.max_bytes
        ):
            self.prune()

    def prune(self) -> None:
        """Drop the least recently written paths' segments until the cache fits `max_bytes`."""
        self._saved_since_prune = False
        if not self.enabled:
            return
        entries = cache_entries(self.root)
        total = sum(entry.bytes for entry in entries)
        for entry in sorted(entries, key=lambda e: e.written):
            if total <= self.max_bytes:
                break
            shutil.rmtree(entry.folder, ignore_errors=True)
            total -= entry.bytes
        self._pruned_bytes, self._saved_bytes = total, 0

    def views_folder(self) -> Path | None:
        """Where whole-view (merged) indexes live; None without a usable cache."""
        if self.root is None or not self.enabled:
            return None
        folder = self.root / "views"
        try:
            private_dirs(folder, self.root)
        except OSError:
            return None
        _keep_newest(folder, MAX_VIEW_FILES)
        return folder

    def folder_of(self, segment: Segment) -> Path | None:
        """Where a saved segment lives (None when it was built without the cache)."""
        if not self.enabled or not segment.key:
            return None
        return self._path_folder(Path(segment.file)) / segment.key

    def _build(
        self, file: Source, key: str, earlier: Segment | None, content: bytes | None = None
    ) -> tuple[Segment, BlockTable | None]:
        """A reload (with `earlier`) re-reads an edited Markdown file by its unit blocks
        (core/store/patch.py), from `content` when given (the bytes the key hashed); a first
        read, or any other format, reads the whole file."""
        with self._lock:
            self.builds += 1
        if earlier is None or isinstance(file, FileGroup):
            return Segment.build(file, key, earlier), None
        found = patched(str(file), key, earlier, self._blocks_of(earlier), content)
        if found is None:
            return Segment.build(file, key, earlier), None
        segment, blocks = found
        with self._lock:
            self._blocks[str(file)] = (segment, blocks)
        return segment, blocks

    def _blocks_of(self, segment: Segment) -> BlockTable | None:
        """The block table of a segment built here, or stored beside it in the cache."""
        with self._lock:
            kept = self._blocks.get(segment.file)
        if kept is not None and kept[0] is segment:
            return kept[1]
        folder = self.folder_of(segment)
        if folder is None:
            return None
        try:
            return BlockTable.load(
                npy_array(Segment.stored_file(folder, f"{BLOCKS}.npy", segment.key, self.mac)), segment
            )
        except (SegmentError, OSError, ValueError):
            return None  # none stored (another format, an older cache): the file is read whole

    def _unlinked(self, file: Source) -> bool:
        """Whether the file's segments folder holds no symbolic link (`refusal` checked the
        cache's first two levels; this one is checked when first used). A link turns the store off."""
        folder = self._path_folder(file)
        with self._lock:
            if folder in self._checked:
                return True
        link = linked_below(folder)
        if link is not None:
            self._disable(f"refusing the index cache at {self.root}: {link}; running without it")
            return False
        with self._lock:
            self._checked.add(folder)
        return True

    def _path_folder(self, file: Source) -> Path:
        assert self.root is not None
        return self.root / "segments" / _path_digest(file)

    def _source_record(self, file: Source) -> Path:
        assert self.root is not None
        return self.root / SOURCES / f"{_path_digest(file)}.json"

    def _save(self, segment: Segment, folder: Path, blocks: BlockTable | None) -> bool:
        """Publish the segment; False (the store off, said once) when the cache cannot be written.
        A failed write leaves no temp folder behind (`Segment.save`, `publish_dir`)."""
        try:
            private_dirs(folder.parent, self.root)
            temp = segment.save(
                self.temp_folder() or folder.parent, self.mac, {BLOCKS: blocks.rows} if blocks is not None else None
            )
            saved = folder_bytes(temp)
            publish_dir(temp, folder)
            _remove_other_keys(folder)
            self._saved_since_prune = True
            self._saved_bytes += saved
            return True
        except OSError as exc:
            self._disable(f"cannot write the index cache at {self.root} ({exc.strerror or exc}); running without it")
            return False

    def _disable(self, reason: str) -> None:
        with self._lock:
            first = self._disabled_reason is None
            self._disabled_reason = reason
        if first:
            self._note(str(self.root), reason)

    def _note(self, where: str, message: str) -> None:
        with self._lock:
            self._notes.append(
                Diagnostic(code=Code.INDEX_CACHE, message=message, file=where, severity=Severity.WARNING)
            )


_DEFAULT_STORES: dict[Path | None, SegmentStore] = {}
_DEFAULT_LOCK = threading.Lock()


def default_store() -> SegmentStore:
    """The process's store for the cache folder the environment names."""
    return store_at(cache_root())


def store_at(root: Path | None) -> SegmentStore:
    """The process's store for the cache folder `root` (None: no cache), one per folder.

    It also keeps the stems of words outside every KB (question words, cue words) across
    processes, so a repeated question does not import nltk either.
    """
    with _DEFAULT_LOCK:
        store = _DEFAULT_STORES.get(root)
        if store is None:
            max_bytes, problem = _max_bytes()
            store = _DEFAULT_STORES[root] = SegmentStore(root, max_bytes)
            if problem is not None:
                store._note(MAX_BYTES_ENV, problem)
            if root is not None and store.enabled:
                learn_stems(_read_stems(root))
                atexit.register(_save_stems, root)
        return store


def _read_stems(root: Path) -> dict[str, str]:
    try:
        table = json.loads((root / STEMS_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    valid = isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in table.items())
    return table if valid and table.get(_STEMMER_KEY) == _stemmer_id(root) else {}


def _save_stems(root: Path) -> None:
    """Merge this process's new stems into the cache's table; best effort, bounded."""
    new = computed_stems()
    if not new or not root.is_dir():
        return
    table = {**_read_stems(root), **new, _STEMMER_KEY: _stemmer_id(root)}
    if len(table) > MAX_STORED_STEMS:
        return
    try:
        replace_file(root / STEMS_FILE, json.dumps(table).encode())
    except OSError:
        pass


def _stemmer_id(root: Path) -> str:
    return code_digest(root)[:16]


_MAX_MEGABYTES = 1 << 24


def _max_bytes() -> tuple[int, str | None]:
    """The cache's size bound from `MRPTUI_CACHE_MAX_MB`, and why a value written there is not
    used (a `-1` was read as 1 MB, which evicted every segment on every open, and `4G` as the
    default, both silently)."""
    written = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not written:
        return DEFAULT_MAX_BYTES, None
    if written.isascii() and written.isdigit() and 1 <= int(written) <= _MAX_MEGABYTES:
        return int(written) << 20, None
    return DEFAULT_MAX_BYTES, (
        f"${MAX_BYTES_ENV}={written!r} is not a whole number of megabytes from 1 to {_MAX_MEGABYTES:,}; "
        f"the cache keeps to the default {DEFAULT_MAX_BYTES >> 20:,}"
    )


def _path_digest(file: Source) -> str:
    return hashlib.sha256(os.fsencode(str(Path(str(file)).absolute()))).hexdigest()[:24]


# A file's (mtime_ns, size, inode, ctime_ns); a group's, one per member.
SourceStat = list[int] | list[list[int]]


def source_stat(source: Source, stats: Mapping[str, Sequence[int]]) -> SourceStat | None:
    """A source's stat from a scan's (`stats` by file name), as `_known_key` compares it; None
    when a member is not there (the store then takes its own)."""
    lists = []
    for file in members(source):
        found = stats.get(str(file))
        if found is None or found[1] < 0:
            return None
        lists.append(list(found))
    return lists if isinstance(source, FileGroup) else lists[0]


def _newest(stat: SourceStat) -> int:
    """The latest mtime of a source's stat."""
    first = stat[0]
    # A group's stat holds only lists (one per member), a file's only ints.
    return max(member[0] for member in cast(list[list[int]], stat)) if isinstance(first, list) else first


def _stat_of(file: Source) -> SourceStat:
    return [_file_stat(member) for member in file.files] if isinstance(file, FileGroup) else _file_stat(file)


def _file_stat(file: Path) -> list[int]:
    info = os.stat(file)
    return [info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns]


def _stat_or_none(file: Source) -> SourceStat | None:
    try:
        return _stat_of(file)
    except OSError:
        return None


def _content(file: Source) -> bytes | None:
    """The file's bytes when it is a regular file small enough to be read (a group's: each
    member's name, size and bytes in turn); None means "do not cache"."""
    if isinstance(file, FileGroup):
        parts = []
        for member in file.files:
            data = _content(member)
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


def _keep_newest(folder: Path, count: int) -> None:
    """Merged view indexes are large and per caller: only the `count` newest are kept."""
    try:
        indexes = sorted(folder.glob(f"bm25-*{INDEX_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for stale in indexes[count:]:
        shutil.rmtree(stale, ignore_errors=True)


def _remove_other_keys(folder: Path) -> None:
    """An edited file's older segments are dead weight; so are temp folders of crashed writers
    (written here by earlier versions: now under `TEMP_FOLDER`)."""
    for sibling in folder.parent.iterdir():
        if sibling != folder and (not sibling.name.startswith(".tmp-") or is_orphan(sibling)):
            shutil.rmtree(sibling, ignore_errors=True)
