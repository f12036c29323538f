"""The explorer paints before the KB is read: the session opens in a worker, the screen shows how
far the load is, questions asked meanwhile wait for it, quitting stops it, and a load that fails
is shown in the app. Loads are held at chosen progress points by the test (tests/tui/loading.py)."""

from __future__ import annotations

import shutil
import threading
from functools import partial
from pathlib import Path

import pytest
from conftest import make_app
from fakes import FakeSession
from helpers import record_notifications, settle
from loading import HeldLoad, at, never, past, until
from textual.widgets import Static

from core.infra.diagnostics import Code
from core.infra.resources import config_dir
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.store import SegmentStore, pool
from mrptui.commands.explore import start_pool_helpers
from mrptui.messages import KBWork
from mrptui.screens.main import MainScreen
from mrptui.session_seam import NullSession
from mrptui.widgets.loading import LoadingBanner
from tests.support.store_kb import write_kb

SIZE = (150, 42)
QUESTION = "when does the neap tide reach the harbour bar"


def status(app) -> str:
    return str(app.screen.query_one("#status", Static).render())


def banner(app) -> str:
    return str(app.screen.query_one("#loading-text", Static).render())


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    write_kb(tmp_path / "kb", files=3, per_file=20)
    return tmp_path / "kb"


def held_app(kb: Path, hold=at("scanning"), **options) -> tuple:
    load = HeldLoad(partial(Session.open, [kb], config_dir()), hold)
    return make_app(None, opener=load.opener, **options), load


def _units(kb: KnowledgeBase) -> list[str]:
    return [unit.model_dump_json() for unit in kb.units]


async def test_the_screen_shows_the_load_before_the_session_exists_and_follows_its_progress(kb):
    app, load = held_app(kb)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: load.holds == 1, "the load to start")
        assert isinstance(app.screen, MainScreen) and isinstance(app.session, NullSession) and load.outcome == ""
        await until(pilot, lambda: "finding files (3 found)" in status(app), "the scan in the status line")
        assert app.screen.query_one("#loading").display and "Loading KB sample_kb" in banner(app)
        load.step(at("reading", 2))
        await until(pilot, lambda: load.holds == 2, "the second file")
        await until(pilot, lambda: "loading KB (2/3 files" in status(app), "2 of 3 files in the status line")
        # Issue 23: units read include restricted ones, so their number is not shown.
        assert "2/3 files" in banner(app) and load.at.units > 0 and "unit" not in banner(app) + status(app)
        load.step()
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        assert load.outcome == "opened" and app.session.kb.unit_count == 60
        assert app.control.session() is app.kb.session  # held once: runs start on the session the load opened
        assert not app.screen.query_one("#loading").display
        assert "ready" in status(app) and "loading" not in status(app) and "indexes building" not in status(app)


async def test_typing_works_while_loading_and_a_question_asked_then_runs_when_the_kb_is_ready(kb):
    app, load = held_app(kb, hold=at("reading", 1))
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: load.holds == 1, "the first file")
        await pilot.press(*"neap tide")
        box = app.screen.query_one("#query")
        assert box.value == "neap tide"
        box.value = QUESTION
        await pilot.press("enter")
        assert app.current is None and app.lifecycle.queued is not None
        assert any("still loading (1/3 files" in note and "runs as soon as it is ready" in note for note in notes)
        await until(pilot, lambda: "1 question queued" in status(app), "the queued question in the status line")
        load.step()
        await until(pilot, lambda: app.current is not None, "the queued run")
        await settle(pilot)
        assert app.current.question == QUESTION and app.current.done and not app.current.error
        assert "queued" not in status(app)


async def test_screens_that_need_the_kb_wait_for_it(kb):
    app, load = held_app(kb)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: load.holds == 1, "the load to start")
        await pilot.press("escape", "k", "f8")
        assert isinstance(app.screen, MainScreen)
        assert any("the KB screen opens when it is ready" in note for note in notes)
        assert any("the problems list opens when it is ready" in note for note in notes)
        load.step()
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        await pilot.press("k")
        assert not isinstance(app.screen, MainScreen)


@pytest.mark.parametrize("pooled", [False, True], ids=["serial", "pool"])
async def test_quitting_mid_load_exits_at_once_and_leaves_a_cache_the_next_open_reads_whole(
    kb, tmp_path, monkeypatch, pooled
):
    if pooled:
        # The build pool for three small files: what a cold open of a big KB does.
        monkeypatch.setattr(pool, "MIN_POOL_BYTES", 0)
        monkeypatch.setenv(pool.WORKERS_ENV, "2")
        start_pool_helpers()
    app, load = held_app(kb, hold=past("building", 1) if pooled else at("reading", 1))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: load.holds == 1, "the load to be half way")
        await pilot.press("ctrl+q")
        load.step(hold=at("reading"))  # were the quit not heard, the next file would hold it again
    assert load.done.wait(30) and load.outcome == "cancelled" and load.holds == 1
    assert app.return_code in (0, None)
    store = SegmentStore(tmp_path / "cache")
    reopened = KnowledgeBase.load([kb], store)
    # What was finished is kept: serially the file read when quit was heard; the pool's workers go on
    # building while the test holds the opening thread, so any of the three may be done.
    assert store.loads + store.builds == 3 and (store.loads >= 1 if pooled else store.loads == 2)
    assert not [d for d in reopened.diagnostics if d.code is Code.INDEX_CACHE]
    assert _units(reopened) == _units(KnowledgeBase.load([kb], SegmentStore(tmp_path / "fresh")))


async def test_a_config_error_found_while_opening_is_shown_in_the_app_and_ctrl_r_retries(kb, tmp_path):
    config = tmp_path / "config"
    shutil.copytree(config_dir(), config)
    engine = config / "engine.json"
    good = engine.read_text(encoding="utf-8")
    engine.write_text('{"planners":\n  [1,\n', encoding="utf-8")
    load = HeldLoad(partial(Session.open, [kb], config))
    app = make_app(None, opener=load.opener)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.lifecycle.state.failed, "the load to fail")
        assert f"{engine}:3:" in status(app) and "KB not loaded" in status(app)
        assert "✗ KB sample_kb not loaded" in banner(app) and f"{engine}:3:" in banner(app)
        assert any("KB not loaded" in note and "ctrl+r" in note for note in notes)
        await pilot.press("f8")
        assert f"{engine}:3:" in str(app.screen.query_one("#dialog-text", Static).render())
        await pilot.press("escape", "escape", "f4")
        assert isinstance(app.screen, MainScreen) and any("the eval screen cannot run" in note for note in notes)
        app.screen.query_one("#query").focus()
        app.screen.query_one("#query").value = QUESTION
        await pilot.press("enter")
        assert app.current is None and any("the KB did not load, so nothing can run" in note for note in notes)
        engine.write_text(good, encoding="utf-8")
        await pilot.press("escape", "ctrl+r")
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the retried load")
        await settle(pilot)
        assert "not loaded" not in status(app) and not app.screen.query_one("#loading").display


async def test_a_kb_path_that_vanished_before_the_load_is_a_diagnostic_as_before(kb):
    """The CLI checked the path; it is gone when the worker reads it: the KB opens empty and says why."""
    app, load = held_app(kb, hold=at("never"))
    shutil.rmtree(kb)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        assert [d.code for d in app.session.diagnostics() if d.file == str(kb)] == [Code.PATH_NOT_FOUND]
        assert "1 error" in status(app)


async def test_files_deleted_mid_load_are_diagnostics_naming_them_not_a_crash(kb):
    app, load = held_app(kb, hold=at("reading", 1))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: load.holds == 1, "the first file")
        deleted = sorted(kb.glob("*.md"))[1:]
        for file in deleted:
            file.unlink()
        load.step()
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        assert {d.file for d in app.session.diagnostics() if d.is_error} == {str(file) for file in deleted}
        assert app.session.kb.unit_count == 20 and "2 errors" in status(app)


class SlowReloadSession(FakeSession):
    """A session whose reload waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.reloading = threading.Event()
        self.release = threading.Event()

    def reload(self):
        self.reloading.set()
        assert self.release.wait(30)
        return super().reload()


async def test_a_reload_runs_in_a_worker_and_the_status_line_says_so_meanwhile():
    session = SlowReloadSession()
    app = make_app(session)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session.touch()
        app.lifecycle.poll()
        await until(pilot, lambda: "reloading KB…" in status(app), "the reload in the status line")
        assert session.reloading.is_set() and session.reloads == 0
        await pilot.press(*"tide")  # the UI thread is free while the session reloads
        assert app.screen.query_one("#query").value == "tide"
        app.lifecycle.poll()  # a poll during the reload starts no second one
        session.release.set()
        await until(pilot, lambda: "reloading" not in status(app), "the reload to end")
        await settle(pilot)
        assert session.reloads == 1 and app.kb_generation == 1
        assert notes == ["KB files changed: 2 KB errors; units that fail are withdrawn until fixed (see KB screen)"]


class SlowWarmUpSession(FakeSession):
    """BM25/ThinkingDB warm-up that waits for the test and takes 2.5 s by the app's clock."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self.clock = clock
        self.release = threading.Event()

    def warm_up(self, caller) -> None:
        assert self.release.wait(30)
        self.clock[0] += 2.5
        super().warm_up(caller)


async def test_the_status_line_says_indexes_are_building_and_a_slow_build_ends_with_a_toast():
    clock = [100.0]
    session = SlowWarmUpSession(clock)
    app = make_app(session, clock=lambda: clock[0])
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "indexes building…" in status(app), "the index build in the status line")
        session.release.set()
        await until(pilot, lambda: "indexes building" not in status(app), "the index build to end")
        assert notes == ["indexes ready (2.5 s): questions answer at full speed"]


async def test_a_cache_that_cannot_be_written_is_a_warning_toast_once_not_again_on_reload(kb, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(blocker / "cache"))
    app, load = held_app(kb, hold=never)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        told = [note for note in notes if "running without it" in note]
        assert len(told) == 1 and str(blocker / "cache") in told[0]
        assert app.session.kb.unit_count == 60
        app.lifecycle.reload()
        await until(pilot, lambda: any(note.startswith("KB reloaded") for note in notes), "the reload")
        assert [note for note in notes if "running without it" in note] == told


async def test_an_index_build_that_reports_while_the_app_quits_does_not_crash_the_exit(monkeypatch):
    """The HDC build's worker can report after quitting has removed the screen's widgets (seen
    under load as a NoMatches traceback on exit): the report is dropped, the exit stays clean."""
    app = make_app()

    def report_while_unmounting(banner: LoadingBanner) -> None:
        banner.app.post_message(KBWork("hdc_building"))

    monkeypatch.setattr(LoadingBanner, "on_unmount", report_while_unmounting, raising=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert app.return_code in (0, None)


class BusyProbe(FakeSession):
    """Notes, from inside a run, whether the tag warm-up is told to wait."""

    def __init__(self) -> None:
        super().__init__()
        self.busy_seen: list[bool] = []

    def run(self, request, steering=None):
        for event in super().run(request, steering):
            self.busy_seen.append(self.tags_busy())
            yield event


async def test_the_tag_warm_up_waits_while_a_question_runs_but_not_while_it_is_held():
    from helpers import ask, until

    from mrptui.breakpoints import Breakpoint

    session = BusyProbe()
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: session.tags_warmed)
        await app.workers.wait_for_complete()
        assert session.tags_warmed == [app.caller] and not session.tags_busy()
        await ask(pilot, leave=False)
        assert session.busy_seen and all(session.busy_seen) and not session.tags_busy()
        app.control.breakpoints.add(Breakpoint("stage", "gs"))
        await ask(pilot, leave=False)
        assert app.control.held and not session.tags_busy()  # a held engine uses no CPU
