"""The permanent attack suite (issue 14): random callers, tags, dates and small KBs.

For every caller-facing surface (the `ask --json` summary, `retrieve`, why-not, trace events and
eval's report) nothing outside the caller's view appears, a caller's results do not depend on
which other callers asked before in the same process, and a reload after any mix of good and
broken edits shows each caller exactly what a fresh load would. Visibility is judged from the raw units with
`visible_to`, never from a view or a cache.

Bounded for `make test`; `--hypothesis-profile=fuzz` or HYPOTHESIS_PROFILE=fuzz runs the long profile
(registered in tests/conftest.py).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core.answer.whynot import NOT_VISIBLE, why_not_asked
from core.eval.labelled import QuerySpec, evaluate
from core.kb.knowledge_base import KnowledgeBase, visible_to
from core.kernel.contract import PluginType, Request, RunContext
from core.kernel.events import RetrievalScored, to_json_line
from core.kernel.session import Session
from core.kernel.summary import summarise
from core.memory.conversation import Conversation
from core.memory.position import anchor_of, placed, weights
from core.memory.records import caller_digest
from core.memory.store import MemoryStore
from core.memory.turns import remember, with_memory
from core.question.intent_cues import question_cues
from core.units import TAG_SEPARATORS, Caller, Intent, KnowledgeUnit, Role, SourceLocation
from mrptui.commands.retrieve import result_json

# A reading-room archive: nothing like the sample KB's merchants and services.
TAGS = ("archive:rare", "archive:staff", "conservator", "board")
REGIONS = ("NO", "PT")
YEAR = dt.date(2026, 1, 1)
QUESTIONS = (
    "What does the reading room ledger say about manuscript care?",
    "How is manuscript care recorded in the reading room ledger?",
    "Which ledger entry covers the reading room?",
)


def _fuzzing() -> bool:
    return os.environ.get("HYPOTHESIS_PROFILE") == "fuzz" or settings.get_current_profile_name() == "fuzz"


def bounded(examples: int) -> settings:
    if _fuzzing():
        return settings(settings.get_profile("fuzz"))
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- strategies -----------------------------------------------------------------------------------

dates = st.integers(min_value=0, max_value=364).map(lambda days: YEAR + dt.timedelta(days=days))


@st.composite
def units(draw, index: int) -> KnowledgeUnit:
    start = draw(st.none() | dates)
    end = draw(st.none() | dates)
    if start and end and end < start:
        start, end = end, start
    marker = f"mark{index}x{draw(st.integers(100, 999))}"
    return KnowledgeUnit(
        id=f"ledger::chunk-000::unit-{index:03d}",
        source_id="ledger",
        chunk_id="ledger::chunk-000",
        role=draw(st.sampled_from([Role.DEFINITION, Role.EXPLANATION, Role.DESCRIPTION])),
        topic="Reading room ledger",
        claim=f"The reading room ledger entry {marker} covers manuscript care on shelf {index}.",
        acl=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True))),
        region=draw(st.none() | st.sampled_from(REGIONS)),
        effective_from=start,
        effective_to=end,
    )


@st.composite
def knowledge_bases(draw) -> list[KnowledgeUnit]:
    count = draw(st.integers(min_value=2, max_value=5))
    return [draw(units(index)) for index in range(count)]


def _look_alikes(tag: str) -> list[str]:
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in tag)
    return [
        fullwidth,  # NFKC folds it back to the real tag
        tag[:1] + "\u200b" + tag[1:],  # zero-width space
        "\u202e" + tag,  # bidi override
        tag.replace("a", "\u0430"),  # Cyrillic a: looks the same, is not
        tag.upper(),
        tag + " ",
        tag.split(":")[0] + ":*",
        "*",
    ]


@st.composite
def hostile_tags(draw) -> str:
    first, second = draw(st.sampled_from(TAGS)), draw(st.sampled_from(TAGS))
    joined = [f"{first}{sep}{second}" for sep in (*TAG_SEPARATORS, " ", "\t", "\n")]
    return draw(st.sampled_from([*joined, *_look_alikes(first)]))


valid_callers = st.builds(
    Caller,
    tags=st.frozensets(st.sampled_from(TAGS), max_size=3),
    region=st.none() | st.sampled_from(REGIONS),
    as_of=dates,
)


@st.composite
def callers(draw) -> Caller:
    """A caller as validation allows it, or as an embedding program that skipped validation built it."""
    tags = frozenset(draw(st.lists(st.sampled_from(TAGS) | hostile_tags(), max_size=3)))
    region = draw(st.none() | st.sampled_from([*REGIONS, "no", "N O", "ＮＯ"]))
    as_of = draw(dates)
    try:
        return Caller(tags=tags, region=region, as_of=as_of)
    except ValidationError:
        return Caller.model_construct(tags=tags, region=region, as_of=as_of)


@st.composite
def callers_with_twins(draw) -> list[Caller]:
    """Callers, each followed by look-alike twins: its tags joined into one tag by a separator, or
    disguised one by one. A cache keyed on a joined string would hand a twin its original's view."""
    result = []
    for caller in draw(st.lists(valid_callers | callers(), min_size=1, max_size=3)):
        result.append(caller)
        if caller.tags:
            separator = draw(st.sampled_from([*TAG_SEPARATORS, " ", "\t"]))
            joined = frozenset({separator.join(sorted(caller.tags))})
            disguised = frozenset(draw(st.sampled_from(_look_alikes(tag))) for tag in caller.tags)
            for tags in (joined, disguised):
                result.append(Caller.model_construct(tags=tags, region=caller.region, as_of=caller.as_of))
    return result


# --- surfaces -------------------------------------------------------------------------------------


def outside(kb_units: list[KnowledgeUnit], caller: Caller) -> list[KnowledgeUnit]:
    return [unit for unit in kb_units if not visible_to(unit, caller)]


def leaks(text: str, hidden: list[KnowledgeUnit]) -> list[str]:
    """Ids and claim markers of hidden units that appear in `text`."""
    found = [unit.id for unit in hidden if unit.id in text]
    found += [unit.claim.split()[5] for unit in hidden if unit.claim.split()[5] in text]
    return found


def ask_text(session: Session, question: str, caller: Caller) -> tuple[str, dict]:
    events = list(session.run(Request(question=question, caller=caller)))
    return "\n".join(to_json_line(e) for e in events), summarise(events)


def retrieve_text(session: Session, question: str, caller: Caller) -> str:
    """Every kb plugin's `mrptui retrieve --json` object."""
    intent = Intent(act=question_cues(question).act, target=question, output="text")
    context = RunContext(request=Request(question=question, caller=caller), view=session.view(caller), services=None)
    results = [plugin.retrieve(context, intent) for plugin in session.registry.of_type(PluginType.KB)]
    return "\n".join(json.dumps(result_json(result)) for result in results)


def stable(summary: dict) -> dict:
    """The summary without wall-clock fields."""
    return {
        **summary,
        "attempts": [{k: v for k, v in a.items() if k != "ms"} for a in summary["attempts"]],
        "timings_ms": None,
    }


# --- properties -----------------------------------------------------------------------------------


@bounded(12)
@given(knowledge_bases(), callers_with_twins(), st.sampled_from(QUESTIONS))
def test_no_surface_shows_anything_outside_the_callers_view(kb_units, caller_list, question) -> None:
    session = Session.from_kb(KnowledgeBase.from_units(kb_units))
    for caller in caller_list:
        hidden = outside(kb_units, caller)
        trace, summary = ask_text(session, question, caller)
        assert leaks(trace, hidden) == [], "trace events"
        assert leaks(str(summary), hidden) == [], "ask --json summary"
        assert leaks(retrieve_text(session, question, caller), hidden) == [], "retrieve"
        # A hidden unit's why-not is the one of an id the KB does not hold (a "did you mean" names
        # only the caller's own units): asked of the KB without the hidden units, word for word.
        without = (
            Session.from_kb(KnowledgeBase.from_units([u for u in kb_units if u not in hidden])) if hidden else None
        )
        for unit in kb_units:
            reasons = why_not_asked(session, unit.id, question, caller)
            if without is not None and unit in hidden:
                assert reasons == why_not_asked(without, unit.id, question, caller)
                assert reasons["visibility"].startswith(NOT_VISIBLE)
            assert leaks(str(reasons), hidden) == [], "why-not"


@bounded(6)
@given(knowledge_bases(), valid_callers, st.sampled_from(QUESTIONS))
def test_eval_reports_nothing_outside_the_query_callers_view(kb_units, caller, question) -> None:
    spec = QuerySpec.model_validate(
        {
            "id": "q1",
            "question": question,
            "expect_evidence": [unit.id for unit in kb_units],
            "must_not_appear": [],
            "caller": {"tags": sorted(caller.tags), "region": caller.region, "as_of": caller.as_of},
        }
    )
    report = evaluate(Session.from_kb(KnowledgeBase.from_units(kb_units)), [spec], ["kb-fast", "kb-balanced"])
    hidden = outside(kb_units, caller)
    # The labels name every unit; the report may echo them, but says nothing else about hidden ones:
    # they are listed as "cannot see", like an id that does not exist, and never ranked or quoted.
    assert report.unknown_ids.get("q1", ()) == tuple(unit.id for unit in hidden)
    result = report.queries[0]
    assert all(result.retrieval[i].ranks[unit.id] is None for i in range(2) for unit in hidden)
    assert leaks(result.answer, hidden) == []
    assert [m for m in leaks(report.model_dump_json(), hidden) if "::" not in m] == []
    assert report.safe


@bounded(10)
@given(knowledge_bases(), callers_with_twins(), st.randoms(use_true_random=False), st.sampled_from(QUESTIONS))
def test_a_callers_results_do_not_depend_on_who_asked_before(kb_units, caller_list, random, question) -> None:
    kb = KnowledgeBase.from_units(kb_units)
    alone = {
        index: stable(ask_text(Session.from_kb(kb), question, caller)[1]) for index, caller in enumerate(caller_list)
    }
    shared = Session.from_kb(kb)
    order = list(range(len(caller_list)))
    random.shuffle(order)
    # The drawn order, then its reverse in the same process: every caller asks both before and
    # after every other one.
    for index in [*order, *reversed(order)]:
        assert stable(ask_text(shared, question, caller_list[index])[1]) == alone[index]
        assert {u.id for u in shared.units(caller_list[index])} == {
            u.id for u in kb_units if visible_to(u, caller_list[index])
        }


def _allowed(text: str) -> bool:
    return (
        bool(text)
        and unicodedata.normalize("NFKC", text) == text
        and not any(c in TAG_SEPARATORS or c.isspace() or unicodedata.category(c)[0] in "CZ" for c in text)
    )


@bounded(100)
@given(st.text(max_size=12))
def test_a_tag_is_accepted_exactly_when_it_has_no_separator_invisible_or_look_alike_character(text) -> None:
    try:
        Caller(tags=frozenset({text}))
    except ValidationError:
        assert not _allowed(text)
    else:
        assert _allowed(text)


CONFIG = Path(__file__).resolve().parents[2] / "config"

# --- reloads --------------------------------------------------------------------------------------

EDITS = {
    "reword": lambda block: block.replace("covers", "now covers"),
    "restrict": lambda block: block + "Acl: conservator\n",
    "restrict-and-break": lambda block: block + "Acl: conservator\nEffectiveFrom: 2026-13-01\n",
    "clear-acl": lambda block: block + "Acl:\n",
    "bad-role": lambda block: block.replace("Role: Definition", "Role: Curator"),
    "region": lambda block: block + "Region: PT\n",
}


def _block(unit: KnowledgeUnit) -> str:
    lines = [f"## Context Unit {unit.id}", "Role: Definition", "Topic: Reading room ledger", f"Claim: {unit.claim}"]
    if unit.acl:
        lines.append(f"Acl: {', '.join(unit.acl)}")
    return "\n".join(lines) + "\n"


@bounded(10)
@given(
    knowledge_bases(),
    st.lists(st.tuples(st.integers(0, 4), st.sampled_from(sorted(EDITS))), min_size=1, max_size=3),
    st.lists(valid_callers, min_size=1, max_size=3),
)
def test_a_reload_never_shows_a_caller_more_than_a_fresh_load(kb_units, edits, caller_list) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.md"
        blocks = [_block(unit) for unit in kb_units]
        path.write_text("\n".join(blocks), encoding="utf-8")
        session = Session.open([Path(folder)], CONFIG)
        for index, edit in edits:
            blocks[index % len(blocks)] = EDITS[edit](blocks[index % len(blocks)])
            path.write_text("\n".join(blocks), encoding="utf-8")
            session.reload()
            fresh = KnowledgeBase.load([Path(folder)])
            for caller in caller_list:
                seen = {(u.id, u.claim) for u in session.units(caller)}
                assert seen == {(u.id, u.claim) for u in fresh.units if visible_to(u, caller)}


@bounded(8)
@given(knowledge_bases(), callers_with_twins(), st.sampled_from(QUESTIONS))
def test_memory_never_crosses_callers(kb_units, caller_list, question) -> None:
    """Every caller, twins included, takes turns in one conversation name over one memory store:
    no caller is offered, told or stored anything from another caller's turns or view."""
    session = Session.from_kb(KnowledgeBase.from_units(kb_units))
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder), session.engine_config.memory)
        # The third turn's pronouns are looked for in the text of the units the last answer cited:
        # a unit the caller cannot see is never read, so its words never reach the trace.
        for turn, follow_up in enumerate((question, "And what about it?", "What did she do with them?")):
            for caller in caller_list:
                talk = Conversation(caller, "shared", session.engine_config.memory, session.retrieval.hdc, store)
                assert {r.caller for r in talk.records} <= {caller_digest(caller)}
                asked = follow_up
                request = with_memory(Request(question=asked, caller=caller), talk, session.view(caller))
                events = list(session.run(request))
                remember(talk, events, session.view(caller))
                hidden = outside(kb_units, caller)
                trace = "\n".join(to_json_line(e) for e in events)
                assert leaks(trace, hidden) == [], "trace events with memory"
                assert leaks(str(summarise(events)), hidden) == [], "ask --json with memory"
                # Records are kept per tags and region (not as-of date), so a caller may own a record
                # citing a unit out of effect on its date: it is stored, but never offered or listed.
                offered = [u for m in request.memory for u in m.unit_ids]
                listed = [u for s in talk.recall(asked, session.view(caller)) for u in s.record.unit_ids]
                assert all(visible_to(u, caller) for u in kb_units if u.id in {*offered, *listed})
        digests = {caller_digest(c) for c in caller_list}
        assert len(digests) == len({(frozenset(c.tags), c.region) for c in caller_list})


@bounded(6)
@given(knowledge_bases(), callers_with_twins())
def test_conversation_position_never_reads_another_callers_units(kb_units, caller_list) -> None:
    """The position prior of a follow-up (core/memory/position.py) is anchored only on the caller's
    own turns and counted over the units it sees: every caller's priors are the same as over a KB
    holding only the units it sees, and only ever on units it sees."""
    placed_units = [
        u.model_copy(update={"location": SourceLocation(file="ledger.txt", line=1 + 2 * i)})
        for i, u in enumerate(kb_units)
    ]
    session = Session.from_kb(KnowledgeBase.from_units(placed_units))
    for caller in caller_list:
        own = Session.from_kb(KnowledgeBase.from_units([u for u in placed_units if visible_to(u, caller)]))
        talk = Conversation(caller, None, session.engine_config.memory, session.retrieval.hdc)
        for question in QUESTIONS[:2]:
            view = session.view(caller)
            request = with_memory(Request(question=question, caller=caller), talk, view)
            events = list(session.run(request))
            remember(talk, events, view)
            anchor = anchor_of(request.memory, view)
            ids = [u.id for u in placed_units]
            mine = placed(anchor, ids, view, weights()) if anchor else {}
            assert mine == (placed(anchor, ids, own.view(caller), weights()) if anchor else {})
            assert all(
                visible_to(u, caller) for u in placed_units if u.id in mine or (anchor and u.id in anchor.unit_ids)
            )
            raised = {
                c.id: c.position for e in events if isinstance(e, RetrievalScored) for c in e.candidates if c.position
            }
            assert all(mine[uid].prior == prior for uid, prior in raised.items())
