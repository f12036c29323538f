"""An explorer left open past midnight reads the KB as of the new day, unless `--as-of` fixed the date:
a unit whose EffectiveTo has passed leaves the view as it would for a fresh `mrptui`."""

from __future__ import annotations

import datetime as dt

from conftest import make_app
from helpers import settle

from core.kernel.session import Session
from core.units import Caller

LAST_DAY = dt.date(2026, 3, 1)
UNITS = f"""## Context Unit offer::chunk-000::unit-000
Role: Definition
Topic: Spring offer
Claim: The spring offer gives ten percent off every ferry ticket.
EffectiveTo: {LAST_DAY.isoformat()}

## Context Unit lobby::chunk-000::unit-000
Role: Definition
Topic: Lobby
Claim: The lobby opens at nine.
"""


def _ids(session: Session, caller: Caller) -> set[str]:
    return {u.id for u in session.units(caller)}


async def test_the_callers_date_follows_the_calendar_unless_the_flags_fixed_it(tmp_path):
    (tmp_path / "kb.md").write_text(UNITS)
    session = Session.open([tmp_path])
    for follow in (True, False):
        app = make_app(session)
        app.caller = Caller(as_of=LAST_DAY)
        async with app.run_test(size=(120, 40)) as pilot:
            app.lifecycle.follow_today = follow  # the CLI: no --as-of given
            assert "offer::chunk-000::unit-000" in _ids(session, app.caller)
            app.lifecycle.today = lambda: LAST_DAY + dt.timedelta(days=1)
            generation = app.kb_generation
            app.lifecycle.poll()
            await settle(pilot)
            if follow:
                assert app.caller.as_of == LAST_DAY + dt.timedelta(days=1) and app.kb_generation > generation
                assert _ids(session, app.caller) == {"lobby::chunk-000::unit-000"}
            else:
                assert app.caller.as_of == LAST_DAY
