"""The main, KB, eval, diff and evidence-detail screens at the three sizes users work at: 80×24,
120×40 and 200×60 (panes fit the terminal: no status word cut at 100 columns and more)."""

from __future__ import annotations

import pytest
from conftest import make_app
from helpers import ask, select_timeline_row, settle

SIZES = [(80, 24), (120, 40), (200, 60)]
IDS = [f"{w}x{h}" for w, h in SIZES]


async def _quiet(pilot) -> None:
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_main_screen_keeps_the_box_focused_after_a_run(snap_compare, size) -> None:
    async def run_before(pilot):
        await ask(pilot, leave=False)
        await _quiet(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_kb_screen(snap_compare, size) -> None:
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("f2")
        await _quiet(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_eval_screen(snap_compare, size, tmp_path, monkeypatch) -> None:
    """On a real session over a small KB the test writes (eval needs the engine's registry)."""
    import json
    import shutil

    from test_screen_eval import LAMP, QUERIES

    from core.infra.resources import config_dir
    from core.kernel.session import Session
    from core.units import Caller
    from mrptui.screens.eval import EvalScreen

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "lighthouse.md").write_text(LAMP, encoding="utf-8")
    shutil.copytree(config_dir(), tmp_path / "config")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the title shows the queries path: relative, the same every run
    app = make_app(Session.open([kb], tmp_path / "config"), queries_path=queries, kb_label="lighthouse")
    app.caller = Caller()

    async def run_before(pilot):
        await pilot.press("f4")
        for _ in range(200):
            await _quiet(pilot)
            screen = pilot.app.screen
            if isinstance(screen, EvalScreen) and screen.runs and not screen.running:
                break
        await _quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_diff_screen_after_an_exclusion(snap_compare, size) -> None:
    async def run_before(pilot):
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.kind == "attempt" and r.plugin == "kb-fast")
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("escape", "d")  # the box has focus after the re-run: leave it, then diff
        await _quiet(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_evidence_detail(snap_compare, size) -> None:
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("3", "enter")
        await _quiet(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)
