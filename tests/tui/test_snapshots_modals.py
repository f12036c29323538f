"""Snapshots of the modal screens: the engine-error modal, the save-path dialog, a unit window, the
why-not window and the caller window."""

from __future__ import annotations

from conftest import make_app
from helpers import ask, settle

WIDE = (120, 32)


def test_engine_error_modal(snap_compare):
    async def run_before(pilot):
        await ask(pilot, "boom: an engine that fails mid-run")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_save_trace_dialog(snap_compare, monkeypatch):
    monkeypatch.setenv("MRPTUI_EXPORTS", "exports")  # the same prefilled path on every machine

    async def run_before(pilot):
        await ask(pilot)
        await settle(pilot)
        await pilot.press("escape", "s")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_unit_window_from_a_proof_leaf(snap_compare):
    async def run_before(pilot):
        from fake_kb import U_AIRFLOW

        await ask(pilot)
        await settle(pilot)
        pilot.app.navigator.open_unit(U_AIRFLOW)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_why_not_window_wraps_each_reason_under_itself(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("k", "down", "w")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 32), run_before=run_before)


def test_caller_window(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)
