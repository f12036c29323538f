"""Eval's safety gates and labelling checks judge each caller from the raw units (issue 14, leaks 1 and 5).

The view-boundary gate once computed the hidden set from the same cached view that served the
run, so a cache serving the wrong view also hid the leak. Labelled ids were checked against every
unit, which confirmed which restricted ids exist.
"""

from __future__ import annotations

import datetime as dt

from core.eval.labelled import QuerySpec, evaluate
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.units import Caller, KnowledgeUnit, Role

AS_OF = dt.date(2026, 5, 1)
PUBLIC_ID = "lighthouse::chunk-000::unit-000"
KEEPER_ID = "lighthouse::chunk-000::unit-001"


def unit(uid: str, claim: str, **fields) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        source_id="lighthouse",
        chunk_id="lighthouse::chunk-000",
        role=Role.DEFINITION,
        topic="Lighthouse lamp",
        claim=claim,
        **fields,
    )


def lighthouse_session() -> Session:
    return Session.from_kb(
        KnowledgeBase.from_units(
            [
                unit(PUBLIC_ID, "The lighthouse lamp turns once every twelve seconds."),
                unit(KEEPER_ID, "The lighthouse lamp room key hangs behind the tide chart.", acl=("keeper",)),
            ]
        )
    )


def query(**fields) -> QuerySpec:
    values = {
        "id": "q1",
        "question": "Where is the lighthouse lamp room key?",
        "expect_evidence": [],
        "must_not_appear": [],
        "caller": {"as_of": AS_OF},
        **fields,
    }
    return QuerySpec.model_validate(values)


def test_the_view_boundary_gate_catches_a_leak_even_when_the_view_cache_is_wrong() -> None:
    session = lighthouse_session()
    kb = session.kb
    keeper = kb.view(Caller(tags=frozenset({"keeper"}), as_of=AS_OF))
    public = Caller(as_of=AS_OF)
    # A cache bug: the public caller's slot holds the keeper's view.
    kb._views[(kb.version, public.key, "")] = keeper
    report = evaluate(session, [query()], ["kb-fast"])
    gate = report.gate("view-boundary")
    assert not gate.passed and KEEPER_ID in gate.failures["q1"]
    assert not report.safe


def test_labelled_ids_are_checked_for_the_query_caller_without_telling_restricted_from_absent() -> None:
    missing = "lighthouse::chunk-009::unit-009"
    spec = query(expect_evidence=[PUBLIC_ID, KEEPER_ID, missing])
    report = evaluate(lighthouse_session(), [spec], ["kb-fast"])
    assert report.unknown_ids == {"q1": (KEEPER_ID, missing)}
    assert report.absent_ids is None
    # The same labels on a KB where the keeper's unit does not exist at all: the same check result.
    without = Session.from_kb(KnowledgeBase.from_units([unit(PUBLIC_ID, "The lighthouse lamp turns slowly.")]))
    assert evaluate(without, [spec], ["kb-fast"]).unknown_ids == report.unknown_ids


def test_the_author_view_says_which_labelled_ids_no_file_holds() -> None:
    session = lighthouse_session()
    missing = "lighthouse::chunk-009::unit-009"
    spec = query(expect_evidence=[KEEPER_ID], must_not_appear=[missing])
    report = evaluate(session, [spec], ["kb-fast"], author_view=True)
    assert report.unknown_ids == {"q1": (KEEPER_ID,)}
    assert report.absent_ids == {"q1": (missing,)}


def test_kb_version_in_a_trace_changes_only_when_the_callers_view_does() -> None:
    from core.kernel.contract import Request
    from core.kernel.events import RunStarted

    def version(units: list[KnowledgeUnit]) -> str:
        session = Session.from_kb(KnowledgeBase.from_units(units))
        events = session.run(Request(question="lighthouse lamp", caller=Caller(as_of=AS_OF)))
        return next(e for e in events if isinstance(e, RunStarted)).kb_version

    public = unit(PUBLIC_ID, "The lighthouse lamp turns once every twelve seconds.")
    keeper = unit(KEEPER_ID, "The lamp room key hangs behind the tide chart.", acl=("keeper",))
    moved = unit(KEEPER_ID, "The lamp room key now hangs by the stove.", acl=("keeper",))
    base = version([public, keeper])
    assert version([public, moved]) == base
    assert version([public]) == base
    assert version([public.model_copy(update={"claim": "The lamp turns every ten seconds."}), keeper]) != base
