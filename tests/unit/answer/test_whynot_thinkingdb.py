"""Why-not for the ThinkingDB lane names the reason that applied: the maxProofs cut only when more
proofs than maxProofs competed and the unit's fell below it."""

from __future__ import annotations

import re

from core.answer.whynot import why_not_asked
from core.infra.resources import config_dir, sample_kb_dir
from core.kernel.session import Session
from core.units import Caller


def test_a_unit_in_a_ranked_proof_is_not_said_to_be_below_the_max_proofs_cut() -> None:
    session = Session.open([sample_kb_dir()], config_dir())
    caller = Caller()
    question = "What does Helix depend on?"
    result = session.indexes.for_view(session.view(caller)).tdb.query(question)
    reasons = {u.id: why_not_asked(session, u.id, question, caller)["thinkingdb"] for u in session.units(caller)}
    in_proofs = {unit for proof in result.proofs for unit in proof.units} - set(result.unit_scores)
    assert in_proofs, "the sample KB should have units in ranked proofs that score nothing"
    for unit in in_proofs:
        assert "maxProofs" not in reasons[unit], reasons[unit]
        assert reasons[unit].startswith("its proofs rank, but their conclusions do not connect")
    for reason in reasons.values():  # a cut is only named with the count that competed, above the cut
        if match := re.search(r"maxProofs cut \((\d+) of (\d+) proofs\)", reason):
            assert int(match[2]) > int(match[1])
