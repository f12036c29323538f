"""Leads that keep what makes them an answer, and stated facts before derived ones (issue 39):
tried on the beekeeping KB the issue was found on, and each behaviour again on a rowing club's
notes written for these tests, so that no rule is fitted to one text.

The KBs use the bundled rules (config/thinkingdb.json): "X uses Y" and "Y provides Z" derive "X
has_capability Z"; "depends_on" is transitive.
"""

from __future__ import annotations

import pytest

from core.answer.attribute_answers import attribute_link, matter_link
from core.answer.coref import resolve
from core.answer.proof_objects import object_lead, with_every_object
from core.kernel.contract import Request
from core.kernel.events import AnswerReady, ProofsFound
from core.kernel.session import Session
from core.retrieval.thinkingdb import Proof
from core.units import Caller
from tests.support.text_kb import open_texts

APIARY = """Hollow Lane apiary

The Hollow Lane apiary uses oxalic acid treatment. Oxalic acid treatment provides varroa control. The apiary keeps twelve hives on the edge of the orchard.

Membership

Membership of the Downs Beekeepers costs £30 a year. The association charges £35 for full members and £15 for junior members.

Meetings

The association meets on the second Tuesday, 7.30 pm, at the village hall. The annual honey show is held on the first Saturday of September.

Mentoring

Every new member gets a mentor for the first season. Mentors are assigned by the education officer, Tom Harcourt.

Records

Hive inspections are recorded on paper cards. This is done by the apiary manager, Olwen Reese.

Hives

Queens in the Hollow Lane hives are marked blue this year. The smoker is made of stainless steel.
"""

# A unit only the committee may see: the code is theirs to ask for.
SHED = """# Equipment shed

## Context Unit shed-notes::chunk-000::unit-000
SourceId: shed-notes
ChunkId: shed-notes::chunk-000
Role: Constraint
Title: Equipment shed
Topic: Equipment shed padlock code
Claim: The equipment shed padlock opens with code 4471. Only committee members may use it.
Acl: committee
UtilityActs: verify, identify
"""

CLUB = """Boathouse

The boathouse heater uses wood pellet fuel. Wood pellet fuel provides winter heating. The heater sits behind the boat racks.

Fees

A season ticket costs €120. Entry to the regatta costs $12 for adults and $6 for children.

Calendar

The committee meets on the last Friday of each month, 6 pm, in the clubroom. The spring regatta is held on the third Sunday of June.

Boats

The racing shells are maintained by the head coach, Ines Alvarez. The racing shells are painted green. The launch is small and slow. The trailer frame is made of galvanised steel.

Safety

The boat log is checked every week. That is done by the safety officer, Dan Okafor.

Regatta

Each crew has a cox for the regatta. Coxes are chosen by the club captain, Rhys Morgan.

Oars

Sculls and sweep oars both hang in the boathouse. Sweep oars are distinguished from all other oars by their longer shafts.

Slipway

The slipway is swept by the junior squad every Saturday. The dinghies are stored by the end of October.

Power

The boat hoist depends on the winch motor. The winch motor depends on the shore supply.
"""


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "apiary", {"apiary.txt": APIARY, "shed.md": SHED})


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "club", {"club.txt": CLUB})


def _run(session: Session, question: str, *, kb: str = "", tags: frozenset[str] = frozenset()) -> list:
    pins = {"kb": kb} if kb else {}
    return list(session.run(Request(question=question, caller=Caller(tags=tags), pins=pins)))


def ask(session: Session, question: str, **how) -> AnswerReady:
    return next(e for e in reversed(_run(session, question, **how)) if isinstance(e, AnswerReady))


def lead(session: Session, question: str, **how) -> str:
    answer = ask(session, question, **how)
    assert answer.status == "grounded", answer.answer
    return answer.answer.split(", because:", 1)[0]


# --- stated before derived -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kb", "question", "stated", "derived"),
    [
        ("apiary", "What treatment does the Hollow Lane apiary use?", "oxalic acid", "varroa control"),
        ("club", "What fuel does the boathouse heater use?", "wood pellet", "winter heating"),
    ],
)
@pytest.mark.parametrize("plugin", ["", "kb-thinkingdb"])
def test_a_stated_fact_outranks_a_derived_one_and_the_proof_is_still_found(
    request: pytest.FixtureRequest, kb: str, question: str, stated: str, derived: str, plugin: str
) -> None:
    # Was "varroa control" (has_capability, derived) when kb-thinkingdb's evidence answered.
    session = request.getfixturevalue(kb)
    events = _run(session, question, kb=plugin)
    answer = next(e for e in reversed(events) if isinstance(e, AnswerReady))
    assert answer.status == "grounded"
    assert answer.answer.startswith(f"{stated}, because:"), answer.answer
    assert derived not in answer.answer.split(", because:", 1)[0]
    if plugin:
        facts = [p.fact for e in events if isinstance(e, ProofsFound) for p in e.proofs]
        assert any(derived in fact and "has_capability" in fact for fact in facts), facts


@pytest.mark.parametrize(
    ("kb", "question", "derived"),
    [
        ("apiary", "What capability does the Hollow Lane apiary have?", "varroa control"),
        ("club", "What capability does the boathouse heater have?", "winter heating"),
    ],
)
def test_asked_for_the_derived_relation_the_chain_answers(
    request: pytest.FixtureRequest, kb: str, question: str, derived: str
) -> None:
    answer = ask(request.getfixturevalue(kb), question, kb="kb-thinkingdb")
    assert answer.status == "grounded"
    assert answer.answer.startswith(f"{derived}, because:"), answer.answer
    assert "by tool_to_capability" in answer.answer


# --- leads keep their unit, ordinal, qualifier and every item --------------------------------


@pytest.mark.parametrize(
    ("kb", "question", "expected"),
    [
        ("apiary", "How much does membership of the Downs Beekeepers cost?", "£30"),
        ("club", "How much does a season ticket cost?", "€120"),
        ("apiary", "When does the association meet?", "the second Tuesday, 7.30 pm"),
        ("apiary", "When is the annual honey show held?", "the first Saturday of September"),
        ("club", "When does the committee meet?", "the last Friday of each month, 6 pm"),
        ("club", "When is the spring regatta held?", "the third Sunday of June"),
        # Naming no qualifier, the question asks for every item; naming one, for its amount.
        ("apiary", "How much does the association charge?", "£35 for full members and £15 for junior members"),
        ("apiary", "How much does the association charge junior members?", "£15"),
        ("club", "How much does entry to the regatta cost?", "$12 for adults and $6 for children"),
        ("club", "How much does entry to the regatta cost for children?", "$6"),
        ("club", "How much does entry to the regatta cost for adults?", "$12"),
    ],
)
def test_a_lead_keeps_its_currency_ordinal_qualifier_and_items(
    request: pytest.FixtureRequest, kb: str, question: str, expected: str
) -> None:
    assert lead(request.getfixturevalue(kb), question) == expected


def test_every_object_the_proofs_give_the_subject_on_the_sample_kb() -> None:
    # Was "Lumen": the best-scored proof alone, while the Proofs pane showed Lumen and Vault.
    answer = ask(Session.open(), "What does Orion depend on?")
    assert answer.status == "grounded"
    assert answer.answer.startswith("Lumen and Vault, because:"), answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "What does the boat hoist depend on?",
        "Which machines does the boat hoist depend on?",
        # "parts" was a place through the separate lemma "parts" ("these parts"), so no chain answered.
        "Which parts does the boat hoist depend on?",
    ],
)
def test_every_object_of_a_chain_in_another_domain(club: Session, question: str) -> None:
    answer = ask(club, question)
    assert answer.status == "grounded"
    assert answer.answer.startswith("winch motor and shore supply, because:"), answer.answer


def test_asked_which_things_by_the_derived_relation_the_chain_answers_as_asked_what() -> None:
    # Was weak: "which services" read as a kind to find in a sentence saying "depend", while the
    # Proofs pane showed Orion depends_on Lumen and Vault.
    answer = ask(Session.open(), "Which services does Orion depend on?")
    assert answer.status == "grounded"
    assert answer.answer.startswith("Lumen and Vault, because:"), answer.answer


def test_asked_which_thing_by_a_stated_relation_the_sentence_answers(club: Session) -> None:
    # The derived relation (has_capability) is not asked: the stated lead, not the chain.
    answer = ask(club, "Which fuel does the boathouse heater use?")
    assert answer.answer.startswith("wood pellet, because:"), answer.answer


# --- passive agents, attributes, codes ------------------------------------------------------


@pytest.mark.parametrize(
    ("kb", "question", "expected"),
    [
        ("apiary", "Who assigns mentors?", "Tom Harcourt"),
        ("club", "Who maintains the racing shells?", "Ines Alvarez"),
        # The agent in the next sentence: a passive whose subject the sentence before names, and
        # "This is done by X", say who did what the sentence before says.
        ("apiary", "Who assigns the mentors for new members?", "Tom Harcourt"),
        ("club", "Who chooses the coxes for the regatta?", "Rhys Morgan"),
        ("apiary", "Who records hive inspections?", "Olwen Reese"),
        ("club", "Who checks the boat log?", "Dan Okafor"),
        # A common noun of people or of a group is an agent too; a time after "by" is none.
        ("club", "Who sweeps the slipway?", "junior squad"),
        # A material is the whole compound, its kind with it.
        ("apiary", "What material is the smoker made of?", "stainless steel"),
        ("club", "What material is the trailer frame made of?", "galvanised steel"),
        ("apiary", "What colour are the queens marked this year?", "blue"),
        ("club", "What colour are the racing shells painted?", "green"),
        ("club", "What size is the launch?", "small"),
    ],
)
def test_passive_agents_and_attribute_adjectives_answer(
    request: pytest.FixtureRequest, kb: str, question: str, expected: str
) -> None:
    assert lead(request.getfixturevalue(kb), question) == expected


def test_by_a_time_names_no_agent(club: Session) -> None:
    answer = ask(club, "Who stores the dinghies?")
    assert answer.status != "grounded", answer.answer


def test_a_passive_borrows_the_sentence_before_only_for_its_agent(club: Session) -> None:
    # Asked what, the subject of "Sweep oars are distinguished … by …" is no agent: it must not
    # take "sculls" from the sentence before and answer a question about sculls.
    answer = ask(club, "What distinguishes sculls from all other oars?")
    assert "Sweep" not in answer.parts[0].lead, answer.answer


def test_a_code_answers_a_caller_who_may_see_it_and_no_one_else(apiary: Session) -> None:
    # Was weak: "the lead 'opens' is not said to be a kind of code" (the tagger reads "shed"
    # as a verb, "opens" as a noun); "code 4471" writes the asked class beside the lead.
    question = "What is the code for the equipment shed padlock?"
    assert lead(apiary, question, tags=frozenset({"committee"})) == "4471"
    assert "4471" not in ask(apiary, question).answer


def test_an_adjective_of_another_attribute_is_no_answer(club: Session) -> None:
    # "green" is a colour, not a size; "small" a size, not a colour.
    answer = ask(club, "What material are the racing shells made of?")
    assert answer.status == "weak"
    assert "green" not in answer.parts[0].detail.lead


@pytest.mark.parametrize(
    ("adjective", "head", "answers"),
    [
        ("blue", "colour", True),
        ("small", "size", True),
        ("metallic", "material", True),
        ("green", "size", False),
        ("small", "colour", False),
        # Every noun is an entity far enough up, and "important" derives "grandness", a size in a
        # rare sense: neither is an attribute the question asks for.
        ("general", "entity", False),
        ("important", "size", False),
    ],
)
def test_an_attribute_adjective_is_near_under_a_property_or_matter(adjective: str, head: str, answers: bool) -> None:
    assert (attribute_link(adjective, head) is not None) == answers


@pytest.mark.parametrize(
    ("noun", "head", "answers"),
    [
        # WordNet files steel under alloy and glass under solid, neither under "material": both are matter.
        ("steel", "material", True),
        ("glass", "material", True),
        ("steel", "colour", False),
        ("manager", "material", False),
    ],
)
def test_a_noun_of_matter_answers_what_material(noun: str, head: str, answers: bool) -> None:
    assert (matter_link(noun, head) is not None) == answers


@pytest.mark.parametrize(
    ("sentence", "stands_for"),
    [
        ("This is done by the apiary manager, Olwen Reese.", "Hive inspections are recorded on paper cards"),
        ("That was quickly decided by the committee.", "Hive inspections are recorded on paper cards"),
        # Not a passive with its agent: "This" is no clause's stand-in here.
        ("This is a hive.", None),
        ("This card is filled in by the manager.", None),
    ],
)
def test_a_demonstrative_opening_a_passive_with_its_agent_stands_for_the_sentence_before(
    sentence: str, stands_for: str | None
) -> None:
    from core.nlp.tagging import tag_text

    found = resolve(tag_text(sentence), sentence, ["Hive inspections are recorded on paper cards."])
    assert (found[0].antecedent if 0 in found else None) == stands_for


def _fact(subject: str, relation: str, obj: str, unit: str) -> Proof:
    return Proof(subject, relation, obj, 1.0, 1.0, units=(unit,))


def _derived(premises: tuple[Proof, ...], obj: str, score: float) -> Proof:
    return Proof(premises[0].subject, "depends_on", obj, 0.9, score, steps=1, rule="chain", premises=premises)


def test_every_object_is_shown_by_the_fewest_proofs_resting_on_the_evidence() -> None:
    a_b, a_d = _fact("A", "depends_on", "B", "u0"), _fact("A", "depends_on", "D", "u2")
    b_c, d_e = _fact("B", "depends_on", "C", "u1"), _fact("D", "depends_on", "E", "u3")
    to_c = _derived((a_b, b_c), "C", 0.8)
    to_e = _derived((a_d, d_e), "E", 0.7)
    only_b = Proof("A", "depends_on", "B", 0.9, 0.95, steps=1, rule="chain", premises=(a_b,))
    evidence = {"u0", "u1", "u2", "u3"}
    chosen = with_every_object(only_b, [only_b, to_c, to_e], evidence)
    # A → B sits under A → C: the larger tree is shown, and A → E adds D and E.
    assert chosen == [to_c, to_e]
    assert object_lead(*chosen) == "B, C, D and E"
    # A proof resting on a unit the answer may not cite adds nothing.
    assert with_every_object(only_b, [only_b, to_c, to_e], {"u0", "u1"}) == [to_c]
