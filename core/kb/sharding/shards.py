"""A KB's units partitioned by a stable hash of their id into N shard folders, with a manifest.

Each shard is an ordinary KB folder (Markdown files written by the Markdown writer, read back
unchanged) whose index store sits in its hidden `.index` folder, so a worker opens it with the
same `KnowledgeBase.load` as any KB. The manifest names the shards and the KB's digest: a
coordinator refuses shards cut from another version of its KB.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.cnl.markdown import to_markdown
from core.infra.config import RetrievalConfig
from core.infra.diagnostics import Code, Diagnostic
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.origins import OriginsError, ShardOrigins, read_origins, write_origins
from core.store.atomic import replace_file
from core.store.private import linked_below
from core.units import Caller, KnowledgeUnit

MANIFEST = "manifest.json"
INDEX_FOLDER = ".index"
# 2: each shard keeps its units' first places (origins.py); 3: the manifest keeps the KB's
# diagnostics (a coordinator that opens only the manifest reports them). Older cuts are cut again.
FORMAT = 3


class ShardManifest(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: int = Field(default=1, ge=1, le=FORMAT)
    kb_digest: str = Field(min_length=1, max_length=200)
    shards: int = Field(ge=1, le=1024)
    folders: tuple[str, ...]
    units: tuple[int, ...]
    # What reading the KB's files found (index-cache notes left out: they were the cut's own).
    diagnostics: tuple[Diagnostic, ...] = ()


class ShardError(Exception):
    """Shards that cannot be used (missing, damaged, or cut from another KB version)."""


def shard_of(unit_id: str, shards: int) -> int:
    """The shard of a unit id: stable across processes and machines (not Python's salted hash)."""
    digest = hashlib.blake2b(unit_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def partition(units: Iterable[KnowledgeUnit], shards: int) -> list[list[KnowledgeUnit]]:
    parts: list[list[KnowledgeUnit]] = [[] for _ in range(shards)]
    for unit in units:
        parts[shard_of(unit.id, shards)].append(unit)
    return parts


def write_shards(
    units: Iterable[KnowledgeUnit],
    kb_digest: str,
    shards: int,
    folder: Path,
    units_per_file: int,
    diagnostics: Iterable[Diagnostic] = (),
) -> ShardManifest:
    """Writes each shard's units in Markdown files of at most `units_per_file` units as they come
    (at most one file's units a shard held at a time), each with its units' first places, then
    the manifest (last: a folder without it was never finished)."""
    names = [f"shard-{number:04d}" for number in range(shards)]
    pending: list[list[KnowledgeUnit]] = [[] for _ in range(shards)]
    written = [0] * shards  # files written per shard
    counts = [0] * shards
    for unit in units:
        number = shard_of(unit.id, shards)
        pending[number].append(unit)
        counts[number] += 1
        if len(pending[number]) == units_per_file:
            _write_file(folder / names[number], written[number], pending[number])
            written[number] += 1
            pending[number] = []
    for number, piece in enumerate(pending):
        if piece or not written[number]:  # an empty shard is one empty file
            _write_file(folder / names[number], written[number], piece)
    manifest = ShardManifest(
        format=FORMAT,
        kb_digest=kb_digest,
        shards=shards,
        folders=tuple(names),
        units=tuple(counts),
        diagnostics=tuple(d for d in diagnostics if d.code is not Code.INDEX_CACHE),
    )
    replace_file(folder / MANIFEST, manifest.model_dump_json(indent=2).encode("utf-8"))
    return manifest


def _write_file(target: Path, number: int, units: list[KnowledgeUnit]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    replace_file(target / f"units-{number:05d}.md", to_markdown(units).encode("utf-8"))
    write_origins(target, number, units)


def read_manifest(folder: Path) -> ShardManifest:
    try:
        return ShardManifest.model_validate_json((folder / MANIFEST).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShardError(f"{folder / MANIFEST}: {exc.strerror or exc}") from None
    except (ValidationError, json.JSONDecodeError) as exc:
        raise ShardError(f"{folder / MANIFEST}: not a shard manifest ({exc.__class__.__name__})") from None


def kb_digest(kb: KnowledgeBase) -> str:
    """What the shards must have been cut from: the KB's version (its files' stats)."""
    return kb.version


def ensure_shards(kb: KnowledgeBase, root: Path, shards: int, units_per_file: int) -> tuple[Path, ShardManifest]:
    """The folder of `kb`'s shards under `root` (one folder per KB version and shard count, so
    no file of another cut is ever read with them), cut now unless its manifest is there."""
    digest = kb_digest(kb)
    folder, manifest = find_shards(root, digest, shards)
    if manifest is not None:
        return folder, manifest
    return folder, write_shards(kb.each_unit(), digest, shards, folder, units_per_file, kb.diagnostics)


def cut(
    paths: Sequence[str], root: str, shards: int, units_per_file: int, config: RetrievalConfig, cache: str | None
) -> tuple[str, ShardManifest]:
    """Runs on a worker: reads the KB at `paths` (with the index cache folder `cache`, None: none)
    and cuts it into shards under `root` unless they are there (`ensure_shards`), so the
    coordinator never reads the KB. A path this worker cannot find fails the cut, never cuts
    an empty KB."""
    from core.store import store_at

    missing = [path for path in paths if not os.path.lexists(path)]
    if missing:
        raise ShardError(f"{missing[0]}: not found on the worker that cuts the KB (every worker must see it)")
    store = store_at(Path(cache) if cache else None)
    kb = KnowledgeBase.load(
        [Path(path) for path in paths], store, hdc=config.hdc, bm25=config.bm25, budgets=config.inputs
    )
    folder, manifest = ensure_shards(kb, Path(root), shards, units_per_file)
    return str(folder), manifest


def find_shards(root: Path, digest: str, shards: int) -> tuple[Path, ShardManifest | None]:
    """The folder of the shards of the KB whose version is `digest` under `root`, and its
    manifest when a finished cut of this format is there (None: it must be cut). A folder that is
    a link or holds one is refused (ShardError): the cut would be written, and the shards read,
    wherever it points, and the index cache's own check (core/store/private.py) never covered it."""
    folder = root / f"{digest[:32]}-{shards}"
    link = f"{folder} is a symbolic link" if folder.is_symlink() else linked_below(folder)
    if link is not None:
        raise ShardError(f"refusing the shards at {folder}: {link}")
    if (folder / MANIFEST).exists():
        manifest = read_manifest(folder)
        if manifest.kb_digest == digest and manifest.shards == shards and manifest.format == FORMAT:
            return folder, manifest
    return folder, None


def open_shard(folder: Path, config: RetrievalConfig) -> tuple[KnowledgeBase, ShardOrigins]:
    """A shard's KB, its index store in the shard's own `.index` folder (built on first open),
    and its units' first places. Raises ShardError unless it holds the units its manifest counts:
    a worker that cannot read the shard folder (another machine, another mount) must fail, not
    answer from nothing."""
    from core.store import store_at

    manifest = read_manifest(folder.parent)
    if folder.name not in manifest.folders:
        raise ShardError(f"{folder}: not a shard of {folder.parent / MANIFEST}")
    expected = manifest.units[manifest.folders.index(folder.name)]
    kb = KnowledgeBase.load(
        [folder], store=store_at(folder / INDEX_FOLDER), bm25=config.bm25, hdc=config.hdc, budgets=config.inputs
    )
    if kb.unit_count != expected:
        raise ShardError(f"{folder}: {kb.unit_count} units read, its manifest says {expected}")
    try:
        return kb, read_origins(folder, kb.view(Caller()).table.ids)  # every row, in load order
    except OriginsError as exc:
        raise ShardError(str(exc)) from None
