"""Conversation memory as a durable store under a hostile environment (issue 36): several processes
writing one conversation, clear and forget while an ask is held, files over their cap, a full disk,
kill -9 in the middle of a write, and every kind of file or folder that cannot be used. Nothing a
user was told is lost, nothing forgotten comes back, and an ask still answers (exit 0, one warning).

Real processes throughout: the lock is `fcntl.flock`, which only other processes can contend for.
The kill test is randomised: `make fuzz` runs it with ten times the kills.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.infra.config import HdcConfig, MemoryConfig
from core.infra.diagnostics import Code
from core.memory import journal
from core.memory.conversation import Conversation
from core.memory.journal import leftover_temps
from core.memory.records import caller_digest
from core.memory.store import MemoryStore
from core.units import Caller
from tests.support.fuzz_settings import PROFILE, bounded

ROOT = Path(__file__).resolve().parents[2]
FERRIES = ROOT / "tests" / "fixtures" / "ferries"
CALLER = caller_digest(Caller())


def talk(root: Path, name: str | None = "c", config: MemoryConfig | None = None, clock=time.time) -> Conversation:
    config = config or MemoryConfig()
    return Conversation(Caller(), name, config, HdcConfig(), MemoryStore(root, config), clock)


def seeded(root: Path, turns: int, config: MemoryConfig | None = None) -> Conversation:
    conversation = talk(root, config=config)
    for i in range(turns):
        assert conversation.remember(f"What is ferry {i}?", f"ferry {i} is a boat", f"ferry {i}", {}) is not None
    return conversation


def file_of(root: Path, name: str = "c") -> Path:
    return root / CALLER / f"conversation-{name}.jsonl"


def _write(root: str, barrier, turns: int, churn: bool, writer: int) -> None:
    """A process writing conversation `c`: `turns` turns, or (`churn`) turns, forgets and clears
    with compaction every few turns, until it is killed."""
    config = MemoryConfig(compact_after_turns=6, bucket_turns=2) if churn else MemoryConfig()
    conversation = talk(Path(root), config=config)
    barrier.wait()
    for i in range(turns):
        record = conversation.remember(f"What does writer {writer} ask {i}?", f"answer {i}", f"thing {i}", {})
        assert record is not None, conversation.take_warnings()
        if churn and i % 5 == 4:
            conversation.forget(record.id)
        if churn and i % 17 == 16:
            conversation.clear("session")


def writers(root: Path, count: int, turns: int, churn: bool = False) -> list:
    """`count` forked processes writing at once (forked: they start in milliseconds, not seconds)."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(count + 1)
    procs = [context.Process(target=_write, args=(str(root), barrier, turns, churn, n)) for n in range(count)]
    for proc in procs:
        proc.start()
    barrier.wait(timeout=60)  # all have loaded the conversation: now they write at once
    return procs


def test_ten_processes_writing_one_conversation_at_once_record_every_turn(tmp_path):
    seeded(tmp_path, 3)
    procs = writers(tmp_path, 10, 1)
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    turns = talk(tmp_path).turns
    assert len(turns) == 13
    assert sorted(r.turn for r in turns) == list(range(1, 14))  # numbered from the file under its lock
    assert not leftover_temps(file_of(tmp_path))


def mrptui(*argv: str, memory: Path, stdin=subprocess.DEVNULL, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MRPTUI_MEMORY_DIR": str(memory), "MRPTUI_NO_CACHE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "mrptui.cli", *argv],
        env=env,
        cwd=ROOT,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


@pytest.mark.skipif(PROFILE != "fuzz", reason="ten whole CLI asks at once take a minute: `make fuzz` runs it")
def test_ten_concurrent_cli_asks_record_ten_turns(tmp_path):
    seeded(tmp_path, 3)
    asks = [
        mrptui("ask", f"What is Tern? ({n})", "--kb", str(FERRIES), "--session", "c", memory=tmp_path)
        for n in range(10)
    ]
    for proc in asks:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and "passenger ferry" in out and "warning" not in err, err
    assert sorted(r.turn for r in talk(tmp_path).turns) == list(range(1, 14))


def held_ask(memory: Path) -> subprocess.Popen:
    """`ask --session c --step`, holding at its first event: it has read the conversation already."""
    proc = mrptui(
        "ask", "What is Tern?", "--kb", str(FERRIES), "--session", "c", "--step", memory=memory, stdin=subprocess.PIPE
    )
    assert proc.stderr.readline(), "the ask never held"
    return proc


def test_forget_and_clear_while_an_ask_is_held_stick(tmp_path):
    before = seeded(tmp_path, 3).turns
    ask = held_ask(tmp_path)
    assert talk(tmp_path).forget(before[0].id)
    out, err = ask.communicate("", timeout=120)  # end of input: the ask runs to the end and records
    assert ask.returncode == 0 and "Tern" in out, err
    ids = [r.id for r in talk(tmp_path).turns]
    assert before[0].id not in ids and len(ids) == 3  # 2 kept + the held ask's turn

    ask = held_ask(tmp_path)
    assert talk(tmp_path).clear("session") == 3
    out, err = ask.communicate("", timeout=120)
    assert ask.returncode == 0, err
    after = talk(tmp_path).turns
    assert [r.question for r in after] == ["What is Tern?"] and not set(ids) & {r.id for r in after}


def test_a_file_over_its_cap_keeps_its_newest_records(tmp_path):
    big = MemoryConfig(max_file_bytes=1_000_000)
    seeded(tmp_path, 0)
    conversation = talk(tmp_path, config=big.model_copy(update={"compact_after_turns": 10_000}))
    for i in range(60):
        conversation.remember(f"What is ferry {i}?", "a boat " * 20, f"ferry {i}", {})
        conversation.note(f"note {i}")
    size = file_of(tmp_path).stat().st_size
    small = MemoryConfig(max_file_bytes=size // 3, compact_after_turns=10_000)
    capped = talk(tmp_path, config=small)
    kept = capped.turns
    assert 10 < len(kept) < 30 and kept[-1].question == "What is ferry 59?"  # the newest, not none
    assert any(p.code is Code.FILE_TOO_LARGE for p in capped.problems)
    assert any("over maxFileBytes" in w for w in capped.take_warnings())
    assert capped.remember("What is ferry 60?", "a boat", "ferry 60", {}) is not None
    assert file_of(tmp_path).stat().st_size <= small.max_file_bytes  # rewritten within the cap
    again = talk(tmp_path, config=small).turns
    assert again[-1].question == "What is ferry 60?" and again[-2].question == "What is ferry 59?"
    notes = talk(tmp_path, config=MemoryConfig(max_file_bytes=1_000, compact_after_turns=10_000)).notes
    assert notes and notes[-1].question == "note 59"  # user.jsonl too: the newest that fit


def test_a_turn_after_a_writer_killed_mid_append_is_kept(tmp_path):
    """The unfinished line a kill -9 leaves is cut before the next append, even when the same
    process read the file first (its cached read must not skip the cut)."""
    seeded(tmp_path, 3)
    data = file_of(tmp_path).read_bytes()
    file_of(tmp_path).write_bytes(data[:-40])  # turn 3 cut mid-line, as by a kill during its write
    after = talk(tmp_path)
    assert [t.question for t in after.turns] == ["What is ferry 0?", "What is ferry 1?"]
    assert after.remember("What is Tern?", "a ferry", "Tern", {}) is not None
    again = talk(tmp_path)
    assert [t.question for t in again.turns] == ["What is ferry 0?", "What is ferry 1?", "What is Tern?"]
    assert not again.problems


def test_a_full_disk_at_the_write_seam_keeps_the_file_as_it_was(tmp_path, monkeypatch):
    conversation = seeded(tmp_path, 2)
    before = file_of(tmp_path).read_bytes()

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal, "write_all", half_then_full)
    assert conversation.remember("What is Tern?", "a ferry", "Tern", {}) is None
    (warning,) = conversation.take_warnings()
    assert "No space left on device" in warning and str(file_of(tmp_path)) in warning
    assert file_of(tmp_path).read_bytes() == before  # the half line was cut back
    assert conversation.forget(conversation.turns[0].id) is False  # a forget that cannot be written says so
    monkeypatch.undo()
    assert conversation.remember("What is Tern?", "a ferry", "Tern", {}) is not None
    assert [r.turn for r in talk(tmp_path).turns] == [1, 2, 3]


def test_an_ask_over_its_file_size_limit_prints_the_answer_and_one_warning(tmp_path):
    seeded(tmp_path, 2)
    limit = file_of(tmp_path).stat().st_size + 64  # the appended turn crosses it: EFBIG, as a full disk

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = mrptui("ask", "What is Tern?", "--kb", str(FERRIES), "--session", "c", memory=tmp_path, preexec_fn=limited)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "passenger ferry" in out, err
    assert err.count("\n") == 1 and "memory not saved" in err and "Traceback" not in err
    assert len(talk(tmp_path).turns) == 2 and not leftover_temps(file_of(tmp_path))


def _broken(kind: str, root: Path) -> tuple[Path, Path | None]:
    """A memory folder with `kind` in the way; returns MRPTUI_MEMORY_DIR and the file that must survive."""
    if kind == "read-only memory folder":  # no caller folder yet: making one would be writing there
        (root / "mem").mkdir(mode=0o500)
        return root / "mem", root / "mem" / CALLER
    folder = root / "mem" / CALLER
    folder.mkdir(parents=True)
    target = folder / "conversation-s.jsonl"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        (root / "elsewhere.jsonl").write_text("{}\n")
        target.symlink_to(root / "elsewhere.jsonl")
    elif kind == "memory dir is a file":
        (root / "afile").write_text("mine\n")
        return root / "afile", root / "afile"
    elif kind in ("mode 000", "read-only folder"):
        conversation = talk(root / "mem", name="s")
        conversation.remember("What is Petrel?", "a car ferry", "Petrel", {})
        if kind == "mode 000":
            target.chmod(0)
        else:
            folder.chmod(0o500)
    return root / "mem", target


@pytest.mark.parametrize(
    "kind",
    ["folder", "fifo", "symlink", "memory dir is a file", "mode 000", "read-only folder", "read-only memory folder"],
)
def test_a_memory_file_that_cannot_be_used_costs_one_warning_never_the_answer(tmp_path, kind, monkeypatch, capsys):
    from mrptui.cli import main

    memory, survivor = _broken(kind, tmp_path)
    before = survivor.read_bytes() if survivor is not None and survivor.is_file() and kind != "mode 000" else None
    mode = stat.S_IMODE(os.lstat(survivor.parent).st_mode) if survivor is not None else None
    monkeypatch.setenv("MRPTUI_MEMORY_DIR", str(memory))
    try:
        assert main(["ask", "What is Tern?", "--kb", str(FERRIES), "--session", "s"]) == 0
        out, err = capsys.readouterr()
        assert "passenger ferry" in out
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mrptui: warning: memory not"), err
        if before is not None:
            assert survivor.read_bytes() == before  # never replaced
        assert stat.S_IMODE(os.lstat(survivor.parent).st_mode) == mode  # never chmod-ed
        if kind == "mode 000":
            assert stat.S_IMODE(survivor.stat().st_mode) == 0 and survivor.stat().st_size > 0
    finally:
        for path in (survivor, survivor.parent if survivor else None):
            if path is not None and path.exists() and not path.is_symlink():
                path.chmod(0o700)


def test_an_empty_session_name_is_a_usage_error_before_the_kb_opens(tmp_path, monkeypatch, capsys):
    from mrptui.cli import main

    monkeypatch.setenv("MRPTUI_MEMORY_DIR", str(tmp_path))
    assert main(["ask", "What is Tern?", "--kb", str(tmp_path / "missing"), "--session", ""]) == 2
    assert "--session: conversation name ''" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_memory_list_prints_what_it_dropped(tmp_path, monkeypatch, capsys):
    from mrptui.cli import main

    seeded(tmp_path, 1)
    with file_of(tmp_path).open("a") as handle:
        handle.write('{"id": "x"}\nnot json\n')
    monkeypatch.setenv("MRPTUI_MEMORY_DIR", str(tmp_path))
    assert main(["memory", "list", "--session", "c", "--kb", str(FERRIES)]) == 0
    out, err = capsys.readouterr()
    assert "What is ferry 0?" in out
    assert re.findall(r":(\d+):1: MALFORMED_LINE", err) == ["2", "3"] and len(err.splitlines()) == 2
    assert main(["memory", "list", "--session", "c", "--kb", str(FERRIES), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["line"] for p in listed["problems"]] == [2, 3] and len(listed["records"]) == 1


def test_temp_files_are_removed_only_when_no_live_writer_holds_the_lock(tmp_path):
    import fcntl

    seeded(tmp_path, 1)
    path = file_of(tmp_path)
    leftover = path.with_name(f".{path.name}.abcd1234.tmp")
    leftover.write_text("half a rewrite")
    lock = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a live writer mid-rewrite (flock: per open file, so in-process works)
    try:
        assert len(talk(tmp_path).turns) == 1  # a read never waits for the writer…
        assert leftover.exists()  # …and leaves its file alone
    finally:
        os.close(lock)
    talk(tmp_path)  # the lock is free at this open: nobody owns the temp file
    assert not leftover.exists()
    # Left by an older mrptui, which took no lock: the next open sweeps it as well.
    path.with_name(f".{path.name}.lock").unlink()
    leftover.write_text("half a rewrite")
    talk(tmp_path)
    assert not leftover.exists()


def _kill_during_writes(root: Path, delay: float) -> None:
    procs = writers(root, 2, 1_000_000, churn=True)
    time.sleep(delay)
    for proc in procs:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)


@bounded(2)
@given(st.floats(min_value=0.05, max_value=1.0))
def test_kill_9_at_any_point_of_a_write_leaves_a_readable_file_and_no_temp_files(delay):
    root = Path(os.environ.get("TMPDIR", "/tmp")) / f"mrptui-kill-{os.getpid()}-{time.monotonic_ns()}"
    try:
        seeded(root, 2)
        _kill_during_writes(root, delay)
        after = talk(root)
        assert not [p for p in after.problems if p.code is Code.MALFORMED_LINE]  # no half line is ever read
        assert not leftover_temps(file_of(root))  # swept at this open: no live writer owns them
        assert after.remember("What is Tern?", "a ferry", "Tern", {}) is not None
        assert talk(root).turns[-1].question == "What is Tern?"
    finally:
        shutil.rmtree(root, ignore_errors=True)
