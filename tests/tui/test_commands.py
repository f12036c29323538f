"""`mrptui` (explore) and `mrptui replay FILE`: argument handling, without starting a terminal UI."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_kb import CALLER
from fake_runs import thinkingdb_run
from fakes import FakeSession

from core.infra.resources import config_dir
from core.kernel.contract import Request
from core.kernel.events import write_trace
from mrptui import cli
from mrptui.app import ExplorerApp
from mrptui.commands import explore
from mrptui.session_seam import NullSession


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[ExplorerApp]:
    """Capture the app instead of running it."""
    apps: list[ExplorerApp] = []
    monkeypatch.setattr(ExplorerApp, "run", lambda self, *a, **k: apps.append(self))
    return apps


def test_explore_is_the_default_command_and_opens_the_kb_only_after_the_app_starts(monkeypatch, launched):
    fake = FakeSession()
    seen = {}

    def open_later(paths, config, args, progress):
        seen["kb"], seen["progress"] = paths, progress
        return fake

    monkeypatch.setattr(explore, "open_later", open_later)
    monkeypatch.delenv("MRPTUI_THEME", raising=False)
    assert cli.main(["--kb", "sample_kb"]) == 0
    (app,) = launched
    assert seen == {} and isinstance(app.session, NullSession) and app.lifecycle.state.loading
    report = []
    assert app.lifecycle.opener(report.append) is fake
    assert seen["kb"] == [Path("sample_kb")] and seen["progress"] == report.append
    assert app.kb_label == "sample_kb" and app.initial_theme == "textual-dark"
    assert app.caller.tags == frozenset() and not app.replay
    assert app.lifecycle.follow_today  # no --as-of: the date follows the calendar


def test_explore_reads_caller_options_and_theme(monkeypatch, launched):
    monkeypatch.setenv("MRPTUI_THEME", "textual-light")
    args = cli.build_parser().parse_args(["--caller-tags", "staff, ops", "--region", "eu", "--as-of", "2026-01-15"])
    assert explore.run(args) == 0
    (app,) = launched
    assert app.caller.tags == frozenset({"staff", "ops"}) and app.caller.region == "eu"
    assert app.caller.as_of == dt.date(2026, 1, 15) and app.initial_theme == "textual-light"


def test_explore_bad_date_is_a_usage_error(monkeypatch, launched, capsys):
    args = cli.build_parser().parse_args(["--as-of", "soon"])
    with pytest.raises(Exception, match="as-of"):
        explore.run(args)
    assert launched == []


def test_explore_refuses_a_missing_kb_path_and_a_bad_config_before_the_app_starts(tmp_path, launched, capsys):
    """The app paints before reading the KB, but these stay one-line usage errors on the terminal."""
    assert cli.main(["--kb", str(tmp_path / "gone")]) == 2
    assert f"KB path not found: {tmp_path / 'gone'}" in capsys.readouterr().err
    config = tmp_path / "config"
    shutil.copytree(config_dir(), config)
    (config / "engine.json").write_text('{"planners": \n  [1,\n', encoding="utf-8")
    assert cli.main(["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config / 'engine.json'}:" in err and "Traceback" not in err
    assert launched == []


def test_replay_opens_the_trace_without_an_engine(tmp_path: Path, launched):
    events = thinkingdb_run(Request("q", caller=CALLER.model_copy(update={"tags": frozenset({"staff"})})))
    trace = tmp_path / "run.jsonl"
    write_trace(events, trace)
    assert cli.main(["replay", str(trace)]) == 0
    (app,) = launched
    assert app.replay and isinstance(app.session, NullSession)
    assert app._replay_events == events
    # The KB would be read as the replayer (no flags: the public caller); the trace's caller is a record.
    assert app.caller.tags == frozenset() and app.caller.as_of == dt.date.today()
    assert app.recorded_for == "caller staff as of 2026-01-15"
    assert app.kb_label == "replay run.jsonl · recorded for the caller staff as of 2026-01-15"


@pytest.mark.parametrize("flags_first", [True, False])
def test_replay_reads_the_kb_as_the_replayer_not_as_the_caller_the_trace_names(tmp_path: Path, launched, flags_first):
    """Issue 14, leak 2: a forged trace naming a privileged caller opens no restricted unit."""
    vip = "merchant-vip-terms::chunk-000::unit-000"
    privileged = CALLER.model_copy(update={"tags": frozenset({"merchant:vip-ops"})})
    trace = tmp_path / "forged.jsonl"
    write_trace(thinkingdb_run(Request("q", caller=privileged)), trace)
    flags = ["--caller-tags", "public:nobody", "--region", "US"]
    argv = (
        [*flags, "replay", str(trace), "--kb", "sample_kb"]
        if flags_first
        else ["replay", str(trace), "--kb", "sample_kb", *flags]
    )
    assert cli.main(argv) == 0
    (app,) = launched
    assert app.caller.tags == frozenset({"public:nobody"}) and app.caller.region == "US"
    assert app.recorded_for == "caller merchant:vip-ops as of 2026-01-15"
    assert vip in {u.id for u in app.session.kb.units}
    assert vip not in {u.id for u in app.session.units(app.caller)}
    assert app.session.unit(vip, app.caller) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "trace file not found"),
        ("", "the trace has no complete event to replay"),
        ('{"kind": "bogus"}\n', ":1:1: MALFORMED_LINE"),
    ],
)
def test_replay_bad_file_is_one_line_and_exit_2(tmp_path: Path, launched, capsys, content, message):
    trace = tmp_path / "t.jsonl"
    if content is not None:
        trace.write_text(content)
    assert cli.main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and err.startswith("mrptui: error: ")
    assert launched == []


def test_quitting_does_not_wait_for_a_worker_thread_still_building_indexes(tmp_path: Path):
    """A warm-up worker cannot be interrupted; after quit the process leaves without it (bounded
    by the subprocess timeout: waiting for the thread would never end)."""
    script = tmp_path / "busy.py"
    script.write_text(
        "import threading\n"
        "from textual.app import App\n"
        "from mrptui.commands.explore import run_until_quit\n"
        "class Busy(App):\n"
        "    def on_mount(self):\n"
        "        self.run_worker(threading.Event().wait, thread=True)  # never returns on its own\n"
        "        self.call_after_refresh(self.exit, return_code=3)\n"
        "    def run(self, **options):\n"
        "        return super().run(headless=True, **options)\n"
        "if __name__ == '__main__':\n"
        "    raise SystemExit(run_until_quit(Busy()))\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 3 and "Traceback" not in done.stderr
