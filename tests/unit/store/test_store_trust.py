"""The cache's trust boundary (docs/security.md): private files and folders, roots that are
refused, rewritten segments rebuilt, a replace racing a publish, a full disk, `cache clear`."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.store import stem_table
from core.store.contents import STEMS_FILE
from core.store.store import SegmentStore
from core.text.tokenizer import stem
from core.units import Caller
from mrptui.cli import main
from tests.support.store_kb import write_kb


def segment_folders(root: Path) -> list[Path]:
    return sorted(p for p in (root / "segments").glob("*/*") if not p.name.startswith("."))


def cache_notes(kb: KnowledgeBase) -> list[str]:
    return [d.message for d in kb.diagnostics if d.code is Code.INDEX_CACHE]


def public_ids(kb: KnowledgeBase) -> set[str]:
    return {unit.id for unit in kb.view(Caller()).units}


def test_every_cache_file_is_private_whatever_the_umask(tmp_path, monkeypatch, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    trace = tmp_path / "trace.jsonl"
    mask = os.umask(0)
    try:
        assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "ask", "tide hive", "--trace", str(trace)]) == 0
        stem("mrptuiunseenwords")  # a stem this process computed, so there is a table to save
        stem_table.save_stems(cache)  # what the process does at exit: question words' stems
    finally:
        os.umask(mask)
    capsys.readouterr()
    assert (cache / STEMS_FILE).is_file()
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in [cache, *cache.rglob("*")]}
    assert any(path.suffix == ".npy" for path in modes)
    assert {path: mode for path, mode in modes.items() if mode != (0o700 if path.is_dir() else 0o600)} == {}
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


def test_a_cache_others_may_write_is_refused_once_and_never_served(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    cache.chmod(0o777)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    (note,) = cache_notes(kb)
    assert f"refusing the index cache at {cache}" in note and "writable by group or others" in note
    assert (store.loads, store.builds) == (0, 2) and not store.enabled
    assert kb.units == good.units
    assert stat.S_IMODE(cache.stat().st_mode) == 0o777  # left as the user set it


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's needs root")
def test_a_cache_owned_by_another_user_is_refused(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    os.chown(cache, 65534, 65534)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    (note,) = cache_notes(kb)
    assert "owned by uid 65534, not by you" in note and store.loads == 0


def test_a_cache_folder_of_ours_that_others_may_read_is_made_private(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    cache.chmod(0o755)
    assert SegmentStore(cache).enabled
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def _forge(folder: Path, name: str, data: bytes) -> None:
    """What someone who can write the cache but not read its key can do: rewrite a file and fix
    up whatever checksum the meta records for it."""
    (folder / name).write_bytes(data)
    meta = json.loads((folder / "meta.json").read_text())
    if "checksums" in meta:
        meta["checksums"][name] = zlib.crc32(data)
    if "macs" in meta:
        meta["macs"][name] = hashlib.blake2b(data, digest_size=16).hexdigest()
    (folder / "meta.json").write_text(json.dumps(meta))


def test_a_rewritten_permission_column_is_rebuilt_not_served(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    assert len(public_ids(good)) < len(good.units)  # the KB has restricted units
    for folder in segment_folders(cache):
        columns = json.loads((folder / "columns.json").read_bytes())
        columns["perms"] = [[[], None, None, None] for _ in columns["perms"]]  # everyone may see all
        _forge(folder, "columns.json", json.dumps(columns).encode())
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert public_ids(kb) == public_ids(good)
    assert (store.loads, store.builds) == (0, 2)
    assert len(cache_notes(kb)) == 2 and all("columns.json does not match" in n for n in cache_notes(kb))


def test_a_replace_keeping_size_and_mtime_that_lands_during_a_publish_is_not_served_later(tmp_path):
    """rsync replaces a file by a new one with the same size and the old mtime; one that lands
    while the segment of the old text is being published must not pair the old text with the
    new file's stat, or every later open serves the old text."""
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    (path,) = write_kb(kb_dir, files=1)
    old_text = path.read_text(encoding="utf-8")
    at = old_text.index("Topic: ") + len("Topic: ")
    new_text = old_text[:at] + "zz" + old_text[at + 2 :]
    assert len(new_text.encode()) == len(old_text.encode()) and new_text != old_text
    stamp = path.stat().st_mtime - 60
    os.utime(path, (stamp, stamp))

    class ReplacedWhilePublishing(SegmentStore):
        def _save(self, segment, folder, blocks):
            saved = super()._save(segment, folder, blocks)
            incoming = path.with_name(".incoming")
            incoming.write_text(new_text, encoding="utf-8")
            os.utime(incoming, (stamp, stamp))
            os.replace(incoming, path)
            return saved

    KnowledgeBase.load([kb_dir], store=ReplacedWhilePublishing(cache))
    later = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    assert any(unit.topic.startswith("zz") for unit in later.units)


AS_ROOT = os.geteuid() == 0


def _mount_tmpfs(folder: Path, size: str) -> None:
    """Only root may mount; the tests that need it say so with `needs_root`, and as root a failed
    mount fails the test instead of passing it unexercised."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)], capture_output=True, check=True
    )


needs_root = pytest.mark.skipif(not AS_ROOT, reason="mounting the small tmpfs needs root (CI runs as root)")


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KB file system: a real ENOSPC, no disk filled."""
    folder = tmp_path / "tiny"
    _mount_tmpfs(folder, "64k")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


@needs_root
def test_a_full_disk_leaves_no_temp_folders_and_is_said_once(tmp_path, tiny_disk):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=3, per_file=400)
    cache = tiny_disk / "cache"
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    notes = cache_notes(kb)
    assert len(notes) == 1 and "No space left on device" in notes[0] and "running without it" in notes[0]
    assert [p for p in cache.rglob(".tmp-*")] == []
    assert kb.units == KnowledgeBase.load([kb_dir], store=SegmentStore(None)).units
    # The store is off for the process: the next open neither writes nor says it again.
    again = KnowledgeBase.load([kb_dir], store=store)
    assert cache_notes(again) == [] and [p for p in cache.rglob(".tmp-*")] == []


def test_cache_clear_on_a_file_exits_2_with_one_line(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    assert main(["--cache-dir", str(blocker), "cache", "clear"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mrptui: error:") and str(blocker) in err[0]
    assert blocker.read_text(encoding="utf-8") == "x"


def test_cache_clear_on_a_read_only_cache_exits_2_with_one_line(tmp_path, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    if AS_ROOT:
        _mount_tmpfs(cache, "8m")
    try:
        assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "check"]) == 0
        capsys.readouterr()
        if AS_ROOT:
            subprocess.run(["mount", "-o", "remount,ro", str(cache)], check=True)
        else:
            for folder in [cache, *cache.rglob("*")]:
                if folder.is_dir():
                    folder.chmod(0o500)
        assert main(["--cache-dir", str(cache), "cache", "clear"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mrptui: error: cannot clear") and str(cache) in err[0]
    finally:
        if AS_ROOT:
            subprocess.run(["umount", "-l", str(cache)], check=False)
        else:
            for folder in [cache, *cache.rglob("*")]:
                if folder.is_dir():
                    folder.chmod(0o700)


_LIVE_SESSION = """
import sys
from pathlib import Path
from core.kernel.events import AnswerReady
from core.kernel.contract import Request
from core.kernel.session import Session
from core.units import Caller

# Two sessions over the same KB in one process (the second found the damage after the first
# rebuilt and removed the files' folders).
sessions = [Session.open([Path(sys.argv[1])]) for _ in range(2)]

def ask(session, question):
    events = list(session.run(Request(question=question, caller=Caller())))
    return next(e for e in reversed(events) if isinstance(e, AnswerReady)).evidence_ids

print("first", min(len(ask(s, "tide hive")) for s in sessions), flush=True)
sys.stdin.readline()
print("second", min(len(ask(s, "tide hive swarm")) for s in sessions), flush=True)
for number, session in enumerate(sessions):
    print(f"notes{number}", sum("changed under this session" in d.message for d in session.diagnostics()), flush=True)
"""


def test_truncating_a_mapped_cache_file_under_a_live_session_rebuilds_instead_of_sigbus(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2, per_file=700)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache), "PYTHONPATH": str(root)}
    command = [os.sys.executable, "-c", _LIVE_SESSION, str(kb_dir)]
    subprocess.run(command, env=env, input="\n", capture_output=True, text=True, check=True, timeout=300)
    large = [p for p in cache.rglob("units.jsonl") if p.stat().st_size > 256 << 10]
    assert large  # mapped, not copied: the case this test is about
    live = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert live.stdout.readline().startswith("first ")
        for path in large:
            os.truncate(path, 0)
        out, err = live.communicate("\n", timeout=300)
    finally:
        live.kill()
    assert live.returncode == 0, err[-2000:]
    lines = dict(line.split() for line in out.splitlines())
    assert int(lines["second"]) > 0 and int(lines["notes0"]) == len(large)
    assert int(lines["notes1"]) >= 1


def test_a_rewritten_block_table_is_not_used_to_patch_a_reload(tmp_path):
    """A reload re-reads only the blocks whose digest changed: a forged block table could pair
    new text with an old unit, so it is checked like the rest of the segment."""
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    (path,) = write_kb(kb_dir, files=1)
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    (folder,) = segment_folders(cache)
    blocks = (folder / "blocks.npy").read_bytes()
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    (segment,) = kb._stored.segments.values()
    assert store._blocks_of(segment) is not None
    _forge(folder, "blocks.npy", blocks)  # the same table, its checksum fixed up without the key
    assert store._blocks_of(segment) is None


def test_ask_with_a_refused_cache_says_so_in_one_line_and_answers(tmp_path, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    cache.mkdir()
    cache.chmod(0o777)
    assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "ask", "tide hive"]) == 0
    out, err = capsys.readouterr()
    assert out.strip()
    (line,) = [line for line in err.splitlines() if "index cache" in line]
    assert line.startswith(f"mrptui: warning: refusing the index cache at {cache}")
    assert list(cache.iterdir()) == []


_MID_QUESTION = """
import sys
from pathlib import Path
from core.infra import leases
from core.kernel.events import AnswerReady, RetrievalScored
from core.kernel.contract import Request
from core.kernel.session import Session
from core.units import Caller

session = Session.open([Path(sys.argv[1])])
list(session.run(Request(question="tide hive", caller=Caller())))  # every cache file mapped
events = session.run(Request(question="tide hive swarm", caller=Caller()))
seen = []
for event in events:
    seen.append(event)
    if isinstance(event, RetrievalScored):
        break
print("mid", flush=True)
sys.stdin.readline()  # the parent's writers are held on the leases meanwhile
print("broken", len(leases.broken()), flush=True)  # what a check before the next read would see
sys.stdin.readline()  # the parent's truncation is under way meanwhile
seen.extend(events)
answer = next(e for e in reversed(seen) if isinstance(e, AnswerReady))
print("answered", len(answer.evidence_ids), flush=True)
events = list(session.run(Request(question="tide hive swarm", caller=Caller())))
print("again", len(next(e for e in reversed(events) if isinstance(e, AnswerReady)).evidence_ids), flush=True)
print("notes", sum("changed under this session" in d.message for d in session.diagnostics()), flush=True)
"""
_TRUNCATE = "import os, sys\nos.truncate(sys.argv[1], 0)\n"


def _lease_breakers() -> set[int]:
    """Pids the kernel holds until a lease is given up: `/proc/locks` lists each as a `LEASE
    BREAKER` line under the lease it waits on."""
    rows = [line.split() for line in Path("/proc/locks").read_text().splitlines()]
    return {int(row[5]) for row in rows if row[1:4] == ["->", "LEASE", "BREAKER"]}


def _wait_until_each_waits_on_a_lease_or_ends(writers: list[subprocess.Popen], seconds: float = 120) -> None:
    """Until every writer is either held on a lease break or has already ended (a writer that
    truncated freely ends at once): the state the test checks, seen without a fixed sleep."""
    deadline = time.monotonic() + seconds
    while not all(writer.poll() is not None or writer.pid in _lease_breakers() for writer in writers):
        assert time.monotonic() < deadline, f"writers neither held nor ended after {seconds} s"
        time.sleep(0.01)


def test_a_truncation_during_a_question_waits_for_it_to_end_instead_of_sigbus(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2, per_file=700)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache), "PYTHONPATH": str(root)}
    subprocess.run(
        [os.sys.executable, "-c", _MID_QUESTION, str(kb_dir)],
        env=env,
        input="\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    large = [str(p) for p in cache.rglob("units.jsonl") if p.stat().st_size > 256 << 10]
    assert large  # mapped, not copied: the case this test is about
    live = subprocess.Popen(
        [os.sys.executable, "-c", _MID_QUESTION, str(kb_dir)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers = []
    try:
        assert live.stdout.readline().strip() == "mid"
        writers = [subprocess.Popen([os.sys.executable, "-c", _TRUNCATE, path]) for path in large]
        _wait_until_each_waits_on_a_lease_or_ends(writers)
        assert [writer.poll() for writer in writers] == [None] * len(large), "writers wait while the question runs"
        live.stdin.write("\n")
        live.stdin.flush()
        # The session has heard the writers (and made its choice) before it answers; the kernel
        # drops a given-up lease's waiters at once, so they are still listed only if still held.
        assert live.stdout.readline().split() == ["broken", str(len(large))]
        assert {writer.pid for writer in writers} <= _lease_breakers(), "and stay held until it has ended"
        assert all(os.path.getsize(path) > 0 for path in large)
        out, err = live.communicate("\n", timeout=300)
        assert [writer.wait(timeout=60) for writer in writers] == [0] * len(large), "and go ahead once it has ended"
    finally:
        live.kill()
        for writer in writers:
            writer.kill()
    assert live.returncode == 0, f"exit {live.returncode}: {err[-2000:]}"
    lines = dict(line.split() for line in out.splitlines())
    assert int(lines["answered"]) > 0 and int(lines["again"]) > 0
    assert int(lines["notes"]) == len(large), "the next question rebuilt what was truncated"


def test_a_symlink_planted_below_the_cache_root_is_refused(tmp_path):
    """Issue 35, case 12: the root was ownership-checked, but a `segments` link below it was followed."""
    kb_dir, cache, elsewhere = tmp_path / "kb", tmp_path / "cache", tmp_path / "elsewhere"
    write_kb(kb_dir, files=1)
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    planted = next(p for p in cache.iterdir() if p.is_dir())
    os.rename(planted, elsewhere)
    os.symlink(elsewhere, planted)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    (note,) = cache_notes(kb)
    assert f"refusing the index cache at {cache}" in note and f"{planted} is a symbolic link" in note
    assert store.loads == 0 and not store.enabled
    assert kb.units == good.units


def test_a_symlink_planted_deep_in_a_segment_is_refused_when_that_file_is_read(tmp_path):
    """The root's check reads two levels (not the whole cache on every command); the folder of
    a KB file's segments is checked when the store first uses it, with the same refusal."""
    kb_dir, other_dir, cache = tmp_path / "kb", tmp_path / "other", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    write_kb(other_dir, files=1)
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    before = set(segment_folders(cache))
    KnowledgeBase.load([other_dir], store=SegmentStore(cache))
    (other_segment,) = set(segment_folders(cache)) - before
    planted = other_segment / "planted"
    os.symlink(tmp_path / "elsewhere", planted)

    unrelated = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=unrelated)
    assert cache_notes(kb) == [] and unrelated.enabled and unrelated.loads == 1, "another file's folder is not read"
    assert kb.units == good.units

    store = SegmentStore(cache)
    kb = KnowledgeBase.load([other_dir], store=store)
    (note,) = cache_notes(kb)
    assert f"refusing the index cache at {cache}" in note and f"{planted} is a symbolic link" in note
    assert store.loads == 0 and not store.enabled
