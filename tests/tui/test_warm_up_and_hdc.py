"""Pilot tests: warming the session's indexes after mount, and building HDC (after a reload too)."""

from __future__ import annotations

import threading

from conftest import make_app
from fake_kb import CALLER
from fakes import FakeSession
from helpers import QUESTION, record_notifications, settle, text_of, until
from textual.widgets import Static


async def test_the_session_is_warmed_up_for_the_caller_after_mount(session) -> None:
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: session.warmed)
        await app.workers.wait_for_complete()
        assert session.warmed == [app.caller]


class SlowHdcSession(FakeSession):
    """HDC not built yet; building it waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.hdc_built = False

    def hdc_ready(self, caller) -> bool:
        return self.hdc_built

    def warm_up_hdc(self, caller) -> None:
        assert self.release.wait(10)
        self.hdc_built = True


async def test_hdc_builds_after_first_paint_and_the_status_line_says_when_it_is_ready() -> None:
    session = SlowHdcSession()
    now = [0.0]
    app = make_app(session, clock=lambda: now[0])
    notes = record_notifications(app)
    async with app.run_test(size=(160, 45)) as pilot:
        # The worker waits in warm_up_hdc until released, so this state lasts; allow a slow machine.
        for _ in range(500):
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building" and "HDC" in text_of(app.screen.query_one("#status", Static)):
                break
        assert "HDC index building…" in text_of(app.screen.query_one("#status", Static))
        now[0] = 2.5  # the build took 2.5 s: long enough to say it is ready
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.hdc_built and app.kb_state.hdc != "building"
        assert "HDC" not in text_of(app.screen.query_one("#status", Static))
        assert "HDC index ready (2.5 s)" in notes


class RebuildingHdcSession(FakeSession):
    """HDC ready, until a reload makes a new view whose HDC index is built on request."""

    def __init__(self) -> None:
        super().__init__()
        self.hdc_built = True
        self.hdc_builds = 0
        self.release = threading.Event()

    def hdc_ready(self, caller) -> bool:
        return self.hdc_built

    def reload(self):
        self.hdc_built = False
        return super().reload()

    def warm_up_hdc(self, caller) -> None:
        assert self.release.wait(10)
        self.hdc_builds += 1
        self.hdc_built = True


async def test_a_reload_rebuilds_the_hdc_index_in_the_background_without_a_toast() -> None:
    session = RebuildingHdcSession()
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        notes = record_notifications(app)
        session.touch()
        app.lifecycle.poll()
        for _ in range(500):  # the rebuild waits in warm_up_hdc until released
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building":
                break
        assert "HDC index building…" in text_of(app.screen.query_one("#status", Static))
        # A question meanwhile runs to its answer while the rebuild is still held.
        query = app.screen.query_one("#query")
        query.focus()
        query.value = QUESTION  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(500):
            await pilot.pause(0.02)
            if app.current is not None and app.current.done:
                break
        assert app.current is not None and app.current.done and session.hdc_builds == 0
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.hdc_builds == 1 and app.kb_state.hdc != "building"
        assert "HDC" not in text_of(app.screen.query_one("#status", Static))
        assert not any("HDC" in note for note in notes)


class PerViewHdcSession(FakeSession):
    """HDC indexes per view version, as the engine keeps them: a reload makes a new view."""

    def __init__(self) -> None:
        super().__init__()
        self.view_version = 0
        self.built: set[int] = set()
        self.release = threading.Event()

    def hdc_ready(self, caller) -> bool:
        return self.view_version in self.built

    def reload(self):
        self.view_version += 1
        return super().reload()

    def warm_up_hdc(self, caller) -> None:
        version = self.view_version
        assert self.release.wait(10)
        self.built.add(version)


async def test_a_reload_during_the_first_hdc_build_leaves_no_building_status_behind() -> None:
    session = PerViewHdcSession()
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(500):  # the first build waits in warm_up_hdc until released
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building":
                break
        session.touch()
        app.lifecycle.poll()
        await until(pilot, lambda: session.reloads and all(w.name != "reload" or w.is_finished for w in app.workers))
        await pilot.pause()  # the app takes in the reload: the new view's HDC build starts, held
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.reloads == 1 and session.hdc_ready(CALLER)  # the new view's index was built
        assert app.kb_state.hdc != "building" and "HDC" not in text_of(app.screen.query_one("#status", Static))
