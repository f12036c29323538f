"""Snapshots of the explorer while its KB loads, and after a load that failed (sync tests:
snap_compare runs the app itself). The opener reports a fixed progress and waits until the app
quits, so the loading state is exactly the same in every run."""

from __future__ import annotations

import threading

from conftest import make_app
from loading import until

from core.infra.config import ConfigError
from core.infra.diagnostics import Code, Diagnostic
from core.infra.progress import LoadProgress

QUESTION = "which kiln schedule suits stoneware glazes"


def still_loading(progress) -> None:
    """7 of 20 files read; then the load waits (a slow disk) until the app quits and the app's
    progress callback raises Cancelled."""
    update, wait = LoadProgress("reading", 7, 20, 35_000), threading.Event()
    while True:
        progress(update)
        wait.wait(0.02)


def building_with_an_estimate(progress) -> None:
    """Build workers have finished 3 of 20 files, at a rate that leaves 42 s; then the load waits."""
    update, wait = LoadProgress("building", 3, 20, left=42), threading.Event()
    while True:
        progress(update)
        wait.wait(0.02)


def broken_config(progress) -> None:
    raise ConfigError(
        [
            Diagnostic(
                code=Code.INVALID_JSON, message="Expecting ',' delimiter", file="config/engine.json", line=3, col=1
            )
        ]
    )


async def _shown(pilot, condition, what: str) -> None:
    await until(pilot, condition, what)
    await pilot.pause()
    pilot.app.clear_notifications()
    await pilot.pause()


def test_loading_screen_80x24(snap_compare):
    async def run_before(pilot):
        await _shown(pilot, lambda: pilot.app.kb_state.progress is not None, "the progress")

    app = make_app(None, opener=still_loading, kb_label="kilns/")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_building_segments_shows_the_time_left_150x42(snap_compare):
    async def run_before(pilot):
        await _shown(pilot, lambda: pilot.app.kb_state.progress is not None, "the progress")

    app = make_app(None, opener=building_with_an_estimate, kb_label="kilns/")
    assert snap_compare(app, terminal_size=(150, 42), run_before=run_before)


def test_loading_screen_with_a_queued_question_150x42(snap_compare):
    async def run_before(pilot):
        await until(pilot, lambda: pilot.app.kb_state.progress is not None, "the progress")
        pilot.app.screen.query_one("#query").value = QUESTION
        await pilot.press("enter")
        await _shown(pilot, lambda: pilot.app.kb_state.queued == QUESTION, "the queued question")

    app = make_app(None, opener=still_loading, kb_label="kilns/")
    assert snap_compare(app, terminal_size=(150, 42), run_before=run_before)


def test_load_failed_150x42(snap_compare):
    async def run_before(pilot):
        await _shown(pilot, lambda: pilot.app.kb_state.failed, "the failed load")

    app = make_app(None, opener=broken_config, kb_label="kilns/")
    assert snap_compare(app, terminal_size=(150, 42), run_before=run_before)
