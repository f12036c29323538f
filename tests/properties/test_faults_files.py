"""The file-side fault list: what a careless author or a hostile file can put in a KB folder or
name on the command line. Nothing hangs, nothing is silently dropped, nothing is overwritten.

CLI runs that used to hang run in a subprocess with a timeout, so a regression fails the test
instead of freezing the suite.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import core.cnl.source as source
import core.kernel.events as events_module
from core.cnl import read_file, read_text
from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.events import RunFinished, RunStarted, read_trace, write_trace
from core.kernel.session import Session
from mrptui.commands import UsageError
from mrptui.commands.replay import load as load_replay
from tests.support.time_limits import HANG_SECONDS, time_limit

ROOT = Path(__file__).resolve().parents[2]
HIVES = """# Apiary notes

## Context Unit hives::chunk-000::unit-000
Role: Explanation
Topic: Swarming
Claim: A colony swarms when the brood nest runs out of room in late spring.

## Context Unit hives::chunk-000::unit-001
Role: Explanation
Topic: Varroa
Claim: Varroa mites multiply fastest while the colony raises drone brood.

## Context Unit hives::chunk-000::unit-002
Role: Procedure
Topic: Sugar roll
Procedure: Shake half a cup of bees with powdered sugar and count the mites that fall.
"""
HIVES_CNL = (
    '@k1 ku atomic "hives::chunk-001::unit-000"\n'
    "@k2 set $k1 role Explanation\n"
    '@k3 set $k1 topic "Queen cups"\n'
    '@k4 set $k1 claim "Queen cups along the frame bottom mean the colony prepares to swarm."\n'
)
IDS = ["hives::chunk-000::unit-000", "hives::chunk-000::unit-001", "hives::chunk-000::unit-002"]


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "hives.md").write_text(HIVES, encoding="utf-8")
    return folder


def mrptui(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process; `subprocess.TimeoutExpired` (a test failure) if it hangs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mrptui.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )


# --- non-regular files: skipped with a diagnostic, never opened ------------------------------


def test_check_skips_a_fifo_in_the_kb_folder(kb: Path) -> None:
    os.mkfifo(kb / "pipe.md")
    done = mrptui("check", str(kb), timeout=30)
    assert done.returncode == 1, done.stderr
    assert "pipe.md:1:1: FILE_UNREADABLE is a named pipe (FIFO), not a regular file; skipped" in done.stdout
    assert "hives.md: 3 units" in done.stdout


def test_check_skips_a_fifo_named_explicitly_and_a_fifo_rules_file(kb: Path, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "named.cnl")
    os.mkfifo(tmp_path / "rules.json")
    done = mrptui("check", str(tmp_path / "named.cnl"), str(tmp_path / "rules.json"), timeout=30)
    assert done.returncode == 1
    assert "named.cnl:1:1: FILE_UNREADABLE is a named pipe (FIFO)" in done.stdout
    assert "rules.json:1:1: FILE_UNREADABLE is a named pipe (FIFO)" in done.stdout


def test_check_reports_a_fifo_in_place_of_the_rules_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "thinkingdb.json")
    done = mrptui("check", str(tmp_path), timeout=30)
    assert done.returncode == 1
    assert "thinkingdb.json:1:1: FILE_UNREADABLE is a named pipe (FIFO), not a regular file; skipped" in done.stdout


@pytest.mark.parametrize("command", [["ask", "Why does a colony swarm?"], ["retrieve", "Why does a colony swarm?"]])
def test_ask_and_retrieve_answer_past_a_fifo(kb: Path, command: list[str]) -> None:
    os.mkfifo(kb / "pipe.txt")
    done = mrptui(*command, "--kb", str(kb), "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "hives::chunk-000::unit-000" in done.stdout


def test_ingest_refuses_a_fifo_with_exit_2(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "notes.txt")
    done = mrptui("ingest", str(tmp_path / "notes.txt"), timeout=30)
    assert done.returncode == 2
    assert "notes.txt:1:1: FILE_UNREADABLE is a named pipe (FIFO), not a regular file; skipped" in done.stderr


def test_sockets_devices_and_link_loops_are_diagnostics(kb: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(kb / "sock.md"))
        (kb / "zero.txt").symlink_to("/dev/zero")
        (kb / "loop.md").symlink_to(kb / "loop.md")
        with time_limit(10):
            loaded = KnowledgeBase.load([kb])
    messages = {Path(d.file).name: d.message for d in loaded.diagnostics}
    assert messages == {
        "loop.md": "Too many levels of symbolic links",
        "sock.md": "is a socket, not a regular file; skipped",
        "zero.txt": "is a device, not a regular file; skipped",
    }
    assert [u.id for u in loaded.units] == IDS


def test_reload_polling_and_reload_pass_a_fifo(kb: Path, config_path: Path) -> None:
    """The explorer's poll (a stat fingerprint) and its reload worker, as the app calls them."""
    session = Session.open([kb], config_path)
    before = session.fingerprint()
    os.mkfifo(kb / "pipe.md")
    with time_limit(10):
        assert session.fingerprint() != before
        diagnostics = session.reload()
    assert any(d.file.endswith("pipe.md") and "named pipe" in d.message for d in diagnostics)
    assert len(session.kb.units) == 3


# --- silent data loss ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "newline", ["\r", "\r\n", "\u2028", "\u2029"], ids=["cr", "crlf", "line-separator", "paragraph-separator"]
)
@pytest.mark.parametrize(("name", "text"), [("hives.md", HIVES), ("hives.cnl", HIVES_CNL)])
def test_any_line_break_loads_the_same_units(tmp_path: Path, newline: str, name: str, text: str) -> None:
    expected, _ = read_text(text, name)
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    units, diagnostics = read_file(path)
    assert diagnostics == []
    assert [u.model_dump(exclude={"location"}) for u in units] == [u.model_dump(exclude={"location"}) for u in expected]
    assert [u.location.line for u in units] == [u.location.line for u in expected]


def test_one_bad_byte_keeps_every_unit_and_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "hives.md"
    path.write_bytes(HIVES.encode("utf-8").replace(b"drone brood", b"drone \xff brood"))
    units, diagnostics = read_file(path)
    assert [u.id for u in units] == IDS
    assert [(d.code, d.line, d.col, d.message) for d in diagnostics] == [
        (Code.INVALID_ENCODING, 11, 68, "byte 0xff is not valid UTF-8 (save the file as UTF-8); replaced with U+FFFD")
    ]
    assert units[1].claim == "Varroa mites multiply fastest while the colony raises drone \ufffd brood."


def test_ingest_prints_a_file_with_a_bad_byte_and_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Drones leave the hive in the afternoon.\n\nWorkers cap honey at 18 \xb0 moisture.\n")
    done = mrptui("ingest", str(path), timeout=30)
    assert done.returncode == 1
    assert (
        done.stderr
        == f"{path}:3:25: INVALID_ENCODING byte 0xb0 is not valid UTF-8 (save the file as UTF-8); replaced with U+FFFD\n"
    )
    assert "Claim: Drones leave the hive in the afternoon." in done.stdout
    assert "Claim: Workers cap honey at 18 \ufffd moisture." in done.stdout


def test_a_garbled_file_gives_a_screenful_of_diagnostics_not_a_flood(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Bees fan at the entrance \xfe.\n" * 500)
    units, diagnostics = read_file(path)
    # Three sentences a unit, each with its replaced byte: nothing of the file is lost.
    assert len(units) == 167 and sum(u.claim.count("\ufffd") for u in units) == 500
    assert [d.line for d in diagnostics] == list(range(1, 11))
    assert diagnostics[-1].message.endswith("(and more on later lines)")


def test_ten_bad_lines_exactly_are_listed_without_a_more_note() -> None:
    _, diagnostics = read_text("Smoke calms bees \x00.\n" * 9 + "Smoke calms bees \x00.", "notes.txt")
    assert [d.line for d in diagnostics] == list(range(1, 11))
    assert not any("more" in d.message for d in diagnostics)


def test_a_nul_byte_past_the_binary_probe_never_enters_unit_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    filler = "Bees forage within three kilometres of the hive.\n\n" * 200
    path.write_text(filler + "Propolis seals \x00 every crack.\n", encoding="utf-8")
    units, diagnostics = read_file(path)
    assert not any("\x00" in (u.claim or "") + u.topic for u in units)
    assert units[-1].claim == "Propolis seals \ufffd every crack."
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.INVALID_ENCODING, 401, 16)]
    assert "NUL byte" in diagnostics[0].message


def test_lone_surrogates_in_text_never_reach_a_unit() -> None:
    units, diagnostics = read_text("Wax moths \ud800 ruin stored comb.", "notes.txt")
    assert units[0].claim == "Wax moths \ufffd ruin stored comb."
    assert [d.message for d in diagnostics] == ["lone surrogate U+D800 is not valid text; replaced with U+FFFD"]


# --- size caps -------------------------------------------------------------------------------


def test_file_over_the_cap_says_how_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 1_000_000)
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2_500_000)
    [diagnostic] = read_file(path).diagnostics
    assert (diagnostic.code, diagnostic.message) == (Code.FILE_TOO_LARGE, "file too large (2.5 MB > 1 MB cap)")


def test_the_default_cap_refuses_a_20_mb_single_line_text(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    with path.open("wb") as out:
        out.truncate(20_000_000)
    with time_limit(HANG_SECONDS):
        [diagnostic] = read_file(path).diagnostics
    assert diagnostic.message == "file too large (20 MB > 4 MB cap)"


def _trace(tmp_path: Path) -> tuple[Path, list]:
    events = [
        RunStarted(seq=0, question="Why do bees swarm?", as_of="2026-05-01", kb_version="v1"),
        RunFinished(seq=1, status="weak"),
    ]
    path = tmp_path / "run.jsonl"
    write_trace(events, path)
    return path, events


def test_a_trace_over_the_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _trace(tmp_path)
    monkeypatch.setattr(events_module, "MAX_TRACE_BYTES", 100)
    events, problems = read_trace(path)
    assert events == []
    assert [(p.code, p.message) for p in problems] == [
        (Code.FILE_TOO_LARGE, f"trace file too large ({path.stat().st_size} bytes > 100 bytes cap)")
    ]


def test_a_truncated_trace_keeps_its_complete_events_and_says_where_it_stops(tmp_path: Path, capsys) -> None:
    path, events = _trace(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 10])
    loaded, problems = read_trace(path)
    assert loaded == events[:1]
    assert [(p.line, p.is_error) for p in problems] == [(2, False)]
    assert "stops mid-event at line 2" in problems[0].message
    assert load_replay(path) == (events[:1], "trace line 2 is cut mid-event: replaying the 1 complete event before it")
    assert "run.jsonl:2:1: warning: MALFORMED_LINE the trace stops mid-event at line 2" in capsys.readouterr().err


def test_replay_of_a_trace_with_a_bad_line_stops_there_instead_of_refusing_it(tmp_path: Path) -> None:
    path, events = _trace(tmp_path)
    first, rest = path.read_bytes().split(b"\n", 1)
    path.write_bytes(first + b'\n{"kind": "forged"}\n' + rest)
    loaded, note = load_replay(path)
    assert loaded == events[:1]
    assert note == "trace line 2 is not a trace event: replaying the 1 event before it"
    path.write_bytes(b'{"kind": "forged"}\n' + first)
    with pytest.raises(UsageError, match=r"run.jsonl:1:1: MALFORMED_LINE not a trace event"):
        load_replay(path)
    path.write_bytes(first[:20])
    with pytest.raises(UsageError, match=r"run.jsonl: the trace has no complete event to replay \(line 1 is cut"):
        load_replay(path)


def test_a_complete_but_bad_last_line_is_still_an_error(tmp_path: Path) -> None:
    path, events = _trace(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"kind": "forged"}')
    loaded, problems = read_trace(path)
    assert loaded == events
    assert [(p.line, p.is_error) for p in problems] == [(3, True)]


def test_replay_refuses_a_fifo_trace(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "run.jsonl")
    with time_limit(10), pytest.raises(UsageError, match=r"named pipe \(FIFO\), not a regular file"):
        load_replay(tmp_path / "run.jsonl")
