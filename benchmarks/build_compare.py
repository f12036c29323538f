"""Two trees' cold builds of one KB, compared file by file: a change to the build (issue 41's cold
open) must leave every artefact as it was.

    PYTHONPATH=<tree A> python -m benchmarks.build_compare build /tmp/a <kb folder> --key /tmp/k
    PYTHONPATH=<tree B> python -m benchmarks.build_compare build /tmp/b <kb folder> --key /tmp/k
    python -m benchmarks.build_compare compare /tmp/a /tmp/b

`build` writes what a cold open's pool writes for each file (the segment, the whole-file BM25 part,
the HDC vector sets and the block table: core/store/pool.py), in one process, under the MAC key read from `--key`
(32 bytes; made when missing), so that keyed digests depend on the bytes alone. `compare` then
demands the same files with the same bytes in every source's segment folder. The only difference
allowed is the folder's name, the segment key, which hashes the code (any code change moves it)
and which `meta.json` files repeat.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

from core.infra.collector import collector_paused
from core.infra.config import Bm25Config, HdcConfig
from core.store import SegmentStore
from core.store.private import KEY_BYTES, KEY_FILE
from core.store.shared_stems import learn_shared, publish_computed
from core.store.stored import keep_whole_part
from core.store.vectors import hdc_segment_vectors

# Large enough that no file of a benchmark KB is pruned while the cache is built.
MAX_CACHE_BYTES = 1 << 40


def build(cache: Path, folder: Path, key: bytes, pattern: str = "*.md") -> int:
    """Build every file under `folder` matching `pattern` into a new cache at `cache` (which
    must not exist) under MAC `key`; returns how many files were built."""
    cache.mkdir(mode=0o700, parents=True)
    descriptor = os.open(cache / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(key)
    store = SegmentStore(cache, MAX_CACHE_BYTES, defer_blocks=True)
    built = 0
    for file in sorted(folder.rglob(pattern)):
        with collector_paused():
            # As a pool worker does: stems stored by earlier builds are not computed again.
            learn_shared()
            segment = store.segment(file)
            publish_computed()
            if not store.enabled or not segment.key:
                raise RuntimeError(f"{file}: no segment was stored")
            keep_whole_part(store, segment, Bm25Config())
            hdc_segment_vectors(store, segment, HdcConfig())
            # A pool worker saves no block table: the second pass adds it.
            store.add_block_table(file, segment)
        built += 1
    return built


def differences(a: Path, b: Path) -> list[str]:
    """Where cache `b` differs from cache `a` (empty: every artefact is the same)."""
    found: list[str] = []
    sources = sorted({p.name for root in (a, b) for p in (root / "segments").glob("*") if p.is_dir()})
    for source in sources:
        folders = [_segment_folder(root / "segments" / source) for root in (a, b)]
        if None in folders:
            found.append(f"{source}: not one segment in both caches")
            continue
        first, second = (folder for folder in folders if folder is not None)
        names = [{str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} for folder in (first, second)]
        for name in sorted(names[0] ^ names[1]):
            found.append(f"{source}/{name}: in one cache only")
        for name in sorted(names[0] & names[1]):
            left, right = (_comparable(folder, name) for folder in (first, second))
            if left != right:
                found.append(f"{source}/{name}: bytes differ")
    return found


def _segment_folder(source: Path) -> Path | None:
    folders = [p for p in source.glob("*") if p.is_dir() and not p.name.startswith(".")] if source.is_dir() else []
    return folders[0] if len(folders) == 1 else None


def _comparable(folder: Path, name: str) -> bytes:
    data = (folder / name).read_bytes()
    # The segment key hashes the code: the one difference two trees' builds may show.
    return data.replace(folder.name.encode(), b"<key>") if name.endswith("meta.json") else data


def _key(path: Path) -> bytes:
    if not path.exists():
        path.write_bytes(secrets.token_bytes(KEY_BYTES))
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise SystemExit(f"{path}: a MAC key is {KEY_BYTES} bytes, this file holds {len(key)}")
    return key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.build_compare", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="build a KB's files into a new cache")
    build_command.add_argument("cache", type=Path)
    build_command.add_argument("folder", type=Path)
    build_command.add_argument("--key", type=Path, required=True, help="MAC key file (32 bytes; made when missing)")
    build_command.add_argument("--pattern", default="*.md")
    compare_command = commands.add_parser("compare", help="compare two caches built by `build`")
    compare_command.add_argument("a", type=Path)
    compare_command.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build":
        if args.cache.exists():
            raise SystemExit(f"{args.cache}: exists; `build` writes a new cache")
        print(f"built {build(args.cache, args.folder, _key(args.key), args.pattern)} files into {args.cache}")
        return 0
    found = differences(args.a, args.b)
    files = sum(1 for p in (args.a / "segments").rglob("*") if p.is_file())
    print("\n".join(found) if found else f"identical: {files} files")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
