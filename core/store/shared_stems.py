"""Porter stems shared by every build worker and KB build of an install (issue 41, cold open).

A cold open's build workers each stem the ~50k distinct words they meet with nltk's Porter
(~16% of a worker's CPU), mostly the same words in both workers, and every later cold open (a
new cache, another KB) stems them again. Here a worker learns the stems already stored before
each file it builds, and stores the ones it computed after it: the other worker picks them up
before its next file, and later builds stem only words no earlier build met. A stem is a pure
function of the word, nltk's Porter code and its mode, so where it comes from changes no
artefact (`python -m benchmarks.build_compare`).

Layout: `<folder>/<key>/<pid>-<random>.stems`, one file per worker and built file that computed
new stems; `key` names the stemmer's mode, nltk's version and the size of its Porter module, so another nltk gets
a new folder (and the old ones are removed). Each file is one JSON header line (format, CRC-32
of the body, as core/nlp/unpacked.py keeps the install's unpacked data) and a JSON body
{word: stem}. Files are written atomically (0600 in 0700 folders); one that fails its check or
does not parse is skipped. Bounded: past MAX_FILES files a writer merges them into one; past
MAX_WORDS words read, or MAX_FILE_BYTES in a file, nothing more is read or written.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import zlib
from pathlib import Path

from core.store.contents import ClearResult
from core.store.private import private_dirs, refusal, write_private
from core.text.tokenizer import STEMMER_MODE, computed_stems, learn_stems

FORMAT = "mrptui-stems/1"
SUFFIX = ".stems"
# The install's NLP data folder (core/nlp/unpacked.py's INSTALL_ROOT, which this layer may not
# import; a test holds them equal): not shipped in the wheel, ignored by git in a checkout.
INSTALL_FOLDER: Path | None = Path(__file__).resolve().parents[1] / "nlp" / "data" / "unpacked"
MAX_FILES = 64
# A worker holds what it learned (~150 bytes a word), as its tokenizer's caches hold 256k words.
MAX_WORDS = 300_000
MAX_FILE_BYTES = 64 << 20

# What this process has read (file names) and stored (how many of its computed stems).
_read: set[str] = set()
_words_read = 0
_published = 0


def learn_shared() -> None:
    """Learn the stems of the files this process has not read yet (best effort)."""
    global _words_read
    folder = _folder()
    if folder is None:
        return
    for path in _files(folder):
        if _words_read >= MAX_WORDS:
            return
        if path.name in _read:
            continue
        _read.add(path.name)
        table = _load(path)
        if table:
            _words_read += len(table)
            learn_stems(table)


def publish_computed() -> None:
    """Store the stems this process computed since its last call (best effort): a full or
    unwritable folder only means stemming them again."""
    global _published
    computed = computed_stems()
    new = dict(list(computed.items())[_published:])
    _published = len(computed)
    folder = _folder()
    if not new or folder is None or _words_read + len(new) > MAX_WORDS:
        return
    try:
        private_dirs(folder, folder.parent)
        files = _files(folder)
        if len(files) >= MAX_FILES:
            new = _merged(files, new)
            if len(new) > MAX_WORDS:  # full: what is stored stays, nothing is added
                return
        name = _store(folder, new)
    except OSError:
        return
    _read.add(name)  # its stems are this process's own already
    if len(files) >= MAX_FILES:
        for path in files:
            path.unlink(missing_ok=True)


def _merged(files: list[Path], new: dict[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in files:
        merged.update(_load(path) or {})
    merged.update(new)
    return merged


def _store(folder: Path, table: dict[str, str]) -> str:
    body = json.dumps(table, ensure_ascii=False).encode()
    name = f"{os.getpid()}-{secrets.token_hex(6)}{SUFFIX}"
    temp = folder / f".{name}.tmp"
    try:
        header = json.dumps({"format": FORMAT, "crc32": zlib.crc32(body)}).encode()
        write_private(temp, [header, b"\n", body])
        os.replace(temp, folder / name)
    finally:
        temp.unlink(missing_ok=True)
    return name


def _load(path: Path) -> dict[str, str] | None:
    """A file's table, or None when it is missing, too large, damaged or not a stem table."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        with path.open("rb") as stream:
            first, body = stream.readline(), stream.read()
        header = json.loads(first)
        if header.get("format") != FORMAT or header.get("crc32") != zlib.crc32(body):
            return None
        table = json.loads(body)
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        return None
    return table


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(path for path in folder.iterdir() if path.name.endswith(SUFFIX))
    except OSError:
        return []


_FOLDER: list[Path | None] = []


def _folder() -> Path | None:
    """This nltk's folder (None: no usable install folder, or nltk is missing); older nltks'
    folders are removed when it is first made."""
    if not _FOLDER:
        _FOLDER.append(_make_folder())
    return _FOLDER[0]


def _make_folder() -> Path | None:
    if INSTALL_FOLDER is None or refusal(INSTALL_FOLDER) is not None:
        return None
    key = _nltk_key()
    if key is None:
        return None
    folder = INSTALL_FOLDER / f"porter-stems-{key}"
    if not folder.is_dir():
        for old in INSTALL_FOLDER.glob("porter-stems-*"):
            shutil.rmtree(old, ignore_errors=True)
    return folder


def _nltk_key() -> str | None:
    """nltk's version and its Porter module's size, read without importing nltk (its
    `__init__` imports nearly all of it), and the tokenizer's stemmer mode."""
    try:
        spec = importlib.util.find_spec("nltk")
        package = Path(next(iter(spec.submodule_search_locations or ()))) if spec is not None else None
        if package is None:
            return None
        version = (package / "VERSION").read_text(encoding="ascii").strip()
        size = (package / "stem" / "porter.py").stat().st_size
    except (OSError, ValueError, StopIteration):
        return None
    if not version.replace(".", "").isalnum():
        return None
    return f"{STEMMER_MODE.lower()}-{version}-{size}"


def forget_shared() -> ClearResult:
    """Remove every stem table this install stored (`mrptui cache clear`): they hold words of
    every KB built here, restricted units' included. A folder that is not the user's own was
    never written by this process and is left alone."""
    failures: list[tuple[str, str]] = []
    root = INSTALL_FOLDER
    if root is None or not root.is_dir() or refusal(root) is not None:
        return ClearResult(0, failures)

    def failed(_function: object, path: str, exc_info: tuple) -> None:
        failures.append((str(path), exc_info[1].strerror or str(exc_info[1])))

    freed = 0
    for folder in root.glob("porter-stems-*"):
        freed += sum(path.stat().st_size for path in folder.iterdir() if path.is_file())
        shutil.rmtree(folder, onerror=failed)
    _FOLDER.clear()
    return ClearResult(freed, failures)
