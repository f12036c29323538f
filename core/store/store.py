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
import os
import shutil
import threading
import time
from pathlib import Path

from core.infra.diagnostics import Code, Diagnostic, Severity
from core.store.arrays import INDEX_SUFFIX, folder_bytes
from core.store.atomic import TEMP_FOLDER, is_orphan, publish_dir, remove_orphans
from core.store.contents import cache_refusal, prune_cache
from core.store.groups import FileGroup, Source
from core.store.key_records import known_key, remember_key, segments_folder
from core.store.location import cache_root
from core.store.mapped import npy_array
from core.store.patch import BLOCKS, BlockTable, block_table, patched
from core.store.private import Mac, linked_below, private_dirs
from core.store.segment import Segment, SegmentError
from core.store.shaping import code_digest
from core.store.source_files import SourceStat, file_content, stat_or_none
from core.store.stem_table import read_stems, save_stems
from core.text.tokenizer import add_stem_source, learn_stems

DEFAULT_MAX_BYTES = 4 << 30
MAX_BYTES_ENV = "MRPTUI_CACHE_MAX_MB"
MAX_VIEW_FILES = 4


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
        self._warned: set[str] = set()
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
            self._mac = Mac.of_root(self._cache)
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
        known = known_key(self._cache, file, stat)
        # Stat before reading: a record pairs the key with the stat the read bytes had (see
        # `remember_key`), never with a stat taken after a replace that landed meanwhile.
        before, read_ns = (None, 0) if known is not None else (stat_or_none(file), time.time_ns())
        content = None if known is not None else file_content(file)
        if known is not None:
            key = known
        elif content is not None:
            key = segment_key(file, content, self.root)
        else:
            return self._build(file, "", earlier)[0]
        folder = segments_folder(self._cache, file) / key
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
                    remember_key(self._cache, file, key, before, read_ns)
                return segment
        if content is None:
            before, read_ns = stat_or_none(file), time.time_ns()
            content = file_content(file)
            if content is None:
                return self._build(file, "", earlier)[0]
            key = segment_key(file, content, self.root)
            folder = segments_folder(self._cache, file) / key
        segment, blocks = self._build(file, key, earlier, content)
        # The file may have changed while it was read: then the segment does not match the key.
        if file_content(file) == content:
            if blocks is None and not isinstance(file, FileGroup) and not self.defer_blocks:
                blocks = block_table(content, str(file), segment)
            if self._save(segment, folder, blocks):
                remember_key(self._cache, file, key, before, read_ns)
        return segment

    def add_block_table(self, file: Path, segment: Segment) -> bool:
        """Store the block table of a segment saved without one (`defer_blocks`), made from the
        file's content only while that content is still what the segment was built from. False
        when none was stored: the file's next edit then reads it whole, as with no table."""
        folder = self.folder_of(segment)
        content = file_content(file) if folder is not None else None
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
        return self.enabled and known_key(self._cache, file) is not None

    def is_cached(self, file: Path) -> bool:
        """Whether `segment(file)` would read the cache rather than build (reads and hashes the
        file unless its stat is on record)."""
        if not self.enabled:
            return False
        if known_key(self._cache, file) is not None:
            return True
        folder = segments_folder(self._cache, file)
        if not folder.is_dir():
            return False  # nothing stored for this path (a first open): no need to read and hash it
        content = file_content(file)
        return content is not None and (folder / segment_key(file, content, self.root)).is_dir()

    def note(self, where: str, message: str) -> None:
        """An INDEX_CACHE warning from data kept beside a segment (core/store/vector_sets.py); the
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
        self._pruned_bytes, self._saved_bytes = prune_cache(self.root, self.max_bytes), 0

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
        return segments_folder(self._cache, Path(segment.file)) / segment.key

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
        folder = segments_folder(self._cache, file)
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

    @property
    def _cache(self) -> Path:
        """The cache folder, for code that runs only while the store is on."""
        assert self.root is not None
        return self.root

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

    def warn_once(self, where: str, message: str) -> None:
        """A warning about `where` (a setting read on every open) given once in this process."""
        with self._lock:
            if where in self._warned:
                return
            self._warned.add(where)
        self._note(where, message)

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
                learn_stems(read_stems(root))
                atexit.register(save_stems, root)
        return store


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
