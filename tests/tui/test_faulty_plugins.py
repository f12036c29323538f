"""The explorer starts and answers when plugin code misbehaves (issue 14 Faults): a factory that
raises at import is left out, and a plugin that raises KeyboardInterrupt ends its run, not the app."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace

from conftest import make_app
from helpers import ask

from core.kernel.session import Session
from core.units import Caller

PLUGINS = """
from core.kernel.contract import Descriptor, GoalSolver, PluginType


class Interrupting(GoalSolver):
    descriptor = Descriptor(id="gs-interrupting", type=PluginType.GS, name="interrupting", description="raises")

    def solve(self, ctx, intent, evidence):
        raise KeyboardInterrupt


def make(services):
    return Interrupting()
"""


def _session(tmp_path, config_path, monkeypatch) -> Session:
    (tmp_path / "faulty_at_import.py").write_text("raise RuntimeError('no licence file')\n")
    (tmp_path / "interrupting_plugin.py").write_text(PLUGINS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("faulty_at_import", "interrupting_plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine["plugins"] += ["faulty_at_import:make", "interrupting_plugin:make"]
    (config / "engine.json").write_text(json.dumps(engine))
    return Session.open(None, config)


async def test_the_explorer_runs_with_a_failing_factory_and_an_interrupting_plugin(tmp_path, config_path, monkeypatch):
    session = _session(tmp_path, config_path, monkeypatch)
    assert any("faulty_at_import:make" in d.message for d in session.diagnostics())
    app = make_app(session)
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Orion?")
        assert app.current.done and app.state.answer is not None
        # Pinned, the interrupting goal solver stops its run; the app stays up and answers again.
        session_run = session.run
        monkeypatch.setattr(
            session,
            "run",
            lambda request, *args, **kwargs: session_run(
                replace(request, pins={"gs": "gs-interrupting"}), *args, **kwargs
            ),
        )
        await ask(pilot, "What is Helix?")
        kinds = [event.kind for event in app.current.events]
        assert app.current.done and app.is_running
        assert "attempt_started" in kinds and "run_finished" not in kinds
        assert app.current.events[-1].plugin == "gs-interrupting"
        monkeypatch.setattr(session, "run", session_run)
        await ask(pilot, "What is Orion?")
        assert app.current.done and app.state.answer is not None and app.state.answer.status == "grounded"
