"""Safe file writes (`core.infra.safe_io`) and `ask --trace PATH`: a bad target is a clear refusal with
nothing written, a good one is replaced atomically, and no temporary file is ever left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.infra.safe_io import UnsafePath, atomic_write_bytes, atomic_write_text, check_target, read_regular
from mrptui.cli import main

ROOT = Path(__file__).resolve().parents[3]


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_writes_a_new_file_with_the_umask_mode(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    atomic_write_text(path, "a,b\n")
    assert path.read_text() == "a,b\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert listing(tmp_path) == ["out.csv"]


def test_replacing_keeps_the_old_mode_and_streams_pieces(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, (f"{n}\n" for n in range(3)))
    assert path.read_text() == "0\n1\n2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_failure_mid_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("good\n")

    def pieces():
        yield b"half"
        raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError):
        atomic_write_bytes(path, pieces())
    assert path.read_text() == "good\n"
    assert listing(tmp_path) == ["trace.jsonl"]


def test_a_full_disk_is_a_refusal_with_the_old_file_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "answer.md"
    path.write_text("old answer")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UnsafePath, match="could not write: No space left on device"):
        atomic_write_text(path, "new answer")
    assert path.read_text() == "old answer"
    assert listing(tmp_path) == ["answer.md"]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.mkdir(), "is a directory; choose a file path"),
        (lambda p: os.mkfifo(p), "is a named pipe (FIFO); choose a file path"),
        (lambda p: p.symlink_to(p.parent / "target.txt"), "is a symbolic link (to "),
        (lambda p: None, None),
    ],
    ids=["directory", "fifo", "symlink", "plain"],
)
def test_refuses_what_is_not_a_plain_file(tmp_path: Path, make, reason: str | None) -> None:
    (tmp_path / "target.txt").write_text("keep me")
    path = tmp_path / "out"
    make(path)
    before = listing(tmp_path)
    if reason is None:
        atomic_write_text(path, "new")
        assert path.read_text() == "new"
        return
    with pytest.raises(UnsafePath) as caught:
        atomic_write_text(path, "new")
    assert caught.value.reason.startswith(reason)
    assert listing(tmp_path) == before
    assert (tmp_path / "target.txt").read_text() == "keep me"


def test_refuses_a_device_a_missing_folder_and_a_protected_file(tmp_path: Path) -> None:
    with pytest.raises(UnsafePath, match="is a device"):
        atomic_write_text(Path("/dev/null"), "x")
    with pytest.raises(UnsafePath, match="folder .*nope does not exist"):
        atomic_write_text(tmp_path / "nope" / "t.jsonl", "x")
    kb_file = tmp_path / "units.md"
    kb_file.write_text("## Context Unit a\n")
    with pytest.raises(UnsafePath, match="KB or config file"):
        atomic_write_text(kb_file, "x", protected=lambda p: p == kb_file)
    assert kb_file.read_text() == "## Context Unit a\n"


def test_read_regular_refuses_a_fifo_and_a_device_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(UnsafePath, match="named pipe"):
        read_regular(tmp_path / "pipe", 100)
    with pytest.raises(UnsafePath, match="is a device"):
        read_regular(Path("/dev/zero"), 100)


# --- `ask --trace PATH` ----------------------------------------------------------------------


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "kilns.md").write_text(
        "## Context Unit kilns::chunk-000::unit-000\nRole: Explanation\nTopic: Bisque firing\n"
        "Claim: A bisque firing drives chemically bound water out of the clay before glazing.\n",
        encoding="utf-8",
    )
    return folder


def _ask(capsys, kb: Path, trace: Path) -> tuple[int, str]:
    code = main(["ask", "Why fire bisque before glazing?", "--kb", str(kb), "--trace", str(trace)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("dir", "is a directory; choose a file path"),
        ("link", "is a symbolic link (to "),
        ("kb-file", "is a KB or config file this session reads"),
        ("new-kb-file", "is a KB or config file this session reads"),
        ("config", "is a KB or config file this session reads"),
    ],
)
def test_ask_trace_to_a_bad_target_is_exit_2_and_writes_nothing(
    tmp_path: Path, kb: Path, capsys, target, message
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "elsewhere.jsonl").write_text("untouched")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere.jsonl")
    paths = {
        "dir": tmp_path / "dir",
        "link": tmp_path / "link",
        "kb-file": kb / "kilns.md",
        "new-kb-file": kb / "notes.txt",
        "config": ROOT / "config" / "engine.json",
    }
    snapshot = {
        p: p.read_bytes() for p in (kb / "kilns.md", ROOT / "config" / "engine.json", tmp_path / "elsewhere.jsonl")
    }
    before = {folder: listing(folder) for folder in (tmp_path, kb, tmp_path / "dir", ROOT / "config")}
    code, err = _ask(capsys, kb, paths[target])
    assert code == 2
    assert f"mrptui: error: --trace {paths[target]}: {message}" in err
    assert {p: p.read_bytes() for p in snapshot} == snapshot
    assert {folder: listing(folder) for folder in before} == before


def test_ask_trace_to_a_device_is_exit_2(kb: Path, capsys) -> None:
    code, err = _ask(capsys, kb, Path("/dev/null"))
    assert code == 2 and "--trace /dev/null: is a device; choose a file path" in err


def test_ask_trace_writes_a_readable_trace(tmp_path: Path, kb: Path, capsys) -> None:
    from core.kernel.events import read_trace

    code, _ = _ask(capsys, kb, tmp_path / "run.jsonl")
    events, problems = read_trace(tmp_path / "run.jsonl")
    assert code == 0 and problems == [] and events[-1].kind == "run_finished"
    assert listing(tmp_path) == ["kb", "run.jsonl"]


def test_check_target_accepts_a_trace_inside_a_kb_folder(kb: Path, config_path: Path) -> None:
    """Only KB-format files are the KB's: a trace or CSV next to them is fine."""
    from core.kernel.session import Session

    session = Session.open([kb], config_path)
    check_target(kb / "run.jsonl", session.owns_file)
    with pytest.raises(UnsafePath):
        check_target(kb / "sub" / ".." / "kilns.md", session.owns_file)


def test_ask_trace_with_undecodable_bytes_in_the_question(tmp_path: Path, kb: Path, capsys) -> None:
    """argv bytes that are not UTF-8 arrive as lone surrogates; the trace writer used to fail on
    them with exit 3. They become U+FFFD at the CLI boundary."""
    from core.kernel.events import read_trace

    code = main(["ask", "Why fire \udcff bisque?", "--kb", str(kb), "--trace", str(tmp_path / "run.jsonl")])
    capsys.readouterr()
    events, problems = read_trace(tmp_path / "run.jsonl")
    assert code == 0 and problems == []
    assert events[0].question == "Why fire \ufffd bisque?"


def test_ask_trace_never_replaces_a_users_file_but_replaces_its_own_trace(tmp_path: Path, kb: Path, capsys) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"my": "own data"}\n')
    code, err = _ask(capsys, kb, notes)
    assert code == 2 and "not written by mrptui" in err and len(err.strip().splitlines()) == 1
    assert notes.read_text() == '{"my": "own data"}\n'
    trace = tmp_path / "trace.jsonl"
    assert _ask(capsys, kb, trace)[0] == 0
    first = trace.read_text()
    assert _ask(capsys, kb, trace)[0] == 0 and trace.read_text().splitlines()[0] == first.splitlines()[0]
