"""Answer forms of gs-symbolic, end to end over a small KB written for these tests (an orchestra's
touring logistics), plus the rules of thumb the forms rest on."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer.answer_forms import Form, entity, enumeration, form_draft, form_of, quoted_question
from core.answer.passages import Evidence, paragraph_units
from core.answer.polarity import yes_no
from core.eval.answer_checks import lead_of
from core.eval.labelled import with_fusion
from core.infra.config import FusionMethod
from core.kb.knowledge_base import KBView
from core.kernel.contract import INSUFFICIENT_PREFACE
from core.kernel.session import Session
from core.question import Question
from core.question.intent_cues import question_cues
from core.units import Caller, KnowledgeUnit, Role, SourceLocation
from tests.support.text_kb import ask, open_texts

TOUR = """The Ardent Orchestra Tour

The Ardent Orchestra toured four cities in May. The cellos travelled in a climate-controlled truck, because dry air cracks their wooden bodies.

The percussion section did not travel with the orchestra. A hire company in each city supplied the drums and the timpani.

Lena Vasquez managed the stage crew during the whole tour. She also kept the loading schedule.

The tour carried its gear in three trucks: a wardrobe truck, an instrument truck and a lighting truck.

Players say the one rule of the tour was simple: no instrument stays in a truck overnight.

The brass section flew between the cities. The string section travelled by coach, so the players could rest between concerts.
"""

RESTRICTED = """## Context Unit crew-notes::chunk-000::unit-000
SourceId: crew-notes
ChunkId: crew-notes::chunk-000
Role: Constraint
Topic: Loading dock code LD-5521
Claim: Rule LD-5521. The loading dock at the concert hall opens with the code 4408.
UtilityActs: verify
Acl: crew:leads
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "tour", {"tour.txt": TOUR, "crew-notes.md": RESTRICTED})


def session_over(folder: Path, name: str, text: str) -> Session:
    """A session over one text file written for the test."""
    (folder / name).write_text(text, encoding="utf-8")
    return Session.open([folder])


def test_yes_when_a_passage_states_every_term(session: Session) -> None:
    answer = ask(session, "Did the cellos travel in a climate-controlled truck? Answer Yes or No.")
    assert answer.status == "grounded"
    assert answer.answer.startswith("Yes, because: The cellos travelled in a climate-controlled truck")
    assert answer.evidence_ids


def test_no_when_a_passage_denies_it(session: Session) -> None:
    answer = ask(session, "Did the percussion section travel with the orchestra?")
    assert answer.status == "grounded"
    assert answer.answer.startswith("No, because: The percussion section did not travel with the orchestra")


def test_cannot_tell_is_weak_with_the_preface_and_the_reason(session: Session) -> None:
    answer = ask(session, "Did the orchestra sell out its concerts in May? Answer Yes or No.")
    assert answer.status == "weak"
    assert answer.answer.startswith(INSUFFICIENT_PREFACE)
    assert "cannot tell from the evidence" in answer.answer
    assert "Yes, because" not in answer.answer and "No, because" not in answer.answer


def test_single_entity_leads_with_the_name(session: Session) -> None:
    answer = ask(session, "Who managed the stage crew?")
    assert answer.answer.startswith("Lena Vasquez, because: Lena Vasquez managed the stage crew")


def test_list_gives_the_enumerated_items(session: Session) -> None:
    answer = ask(session, "List the trucks the tour carried.")
    assert answer.answer.startswith("1. a wardrobe truck; 2. an instrument truck; 3. a lighting truck, because:")


def test_explanation_leads_with_the_statement_then_its_reason(session: Session) -> None:
    answer = ask(session, "Why did the string section travel by coach?")
    lead, _, reason = answer.answer.partition(", because: ")
    assert lead.startswith("The string section travelled by coach")
    assert "[" in lead and reason


def test_a_comparison_leads_with_the_contrast_of_its_sides(session: Session) -> None:
    # The first line sets each side's first sentence beside the other's: it is the lead.
    answer = ask(session, "Compare the brass section and the string section.")
    lines = answer.answer.splitlines()
    brass, strings = lines[0].split("; ")
    assert brass.startswith("brass section: The brass section flew")
    assert strings.startswith("string section: The string section travelled by coach")
    assert "flew" in lead_of(answer) and "coach" in lead_of(answer)


def test_offered_alternatives_a_comparison_gives_each_side_its_own_line(session: Session) -> None:
    # "X or Y?" asks which, not how they differ: each side keeps its line, no contrast line.
    answer = ask(session, "Did the brass section or the string section travel by coach?")
    lines = answer.answer.splitlines()
    assert len(lines) == 2 and lines[0].startswith("brass section: The brass section flew")
    assert lines[1].startswith("string section") and "coach" in lines[1] and "; string" not in lines[0]


@pytest.mark.parametrize("fusion", [FusionMethod.WEIGHTED, FusionMethod.RRF])
def test_a_public_question_naming_only_a_restricted_code_answers_no_context(
    session: Session, fusion: FusionMethod
) -> None:
    # Public text shares the question's other words ("rule", "say"), so they alone would cover
    # half its focus terms and, under RRF, rank first with a score of 1.0.
    fused = session.with_retrieval(with_fusion(session.retrieval, fusion))
    answer = ask(fused, "What does rule LD-5521 say?")
    assert answer.status == "no-context"
    assert "4408" not in answer.answer and "crew-notes" not in answer.answer


def test_a_weak_answer_is_never_grounded_and_always_prefaced(session: Session) -> None:
    for question in ["Did the orchestra sell out its concerts in May?", "What did the wardrobe truck carry?"]:
        answer = ask(session, question)
        if answer.status == "weak":
            assert answer.answer.startswith(INSUFFICIENT_PREFACE)
        assert not (answer.status == "grounded" and answer.answer.startswith(INSUFFICIENT_PREFACE))


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("Is the bridge open? Answer Yes or No.", Form.YES_NO),
        ("Did the pump fail?", Form.YES_NO),
        ("Which engineer reset the failed pump?", Form.ENTITY),
        ("Name the keeper of the lighthouse.", Form.ENTITY),
        ("List the stations on the line.", Form.LIST),
        ("Why did the mill close?", Form.EXPLANATION),
        ("Compare the old bridge and the new bridge.", Form.COMPARISON),
        ("What is a fulling mill?", Form.CLAIMS),
        ("What is the refund policy?", Form.CLAIMS),  # a verify act, but a wh-question asks for content
        ("What is the toll policy? Answer yes or no.", Form.YES_NO),
    ],
)
def test_the_form_follows_the_question_wording(question: str, form: Form) -> None:
    cues = question_cues(question)
    assert form_of(question, cues, cues.act) is form


@pytest.mark.parametrize(
    "question",
    [
        # The planner's cues read "agreed" as asking for an explanation and "list" as asking for
        # a list; the fronted auxiliary asks yes or no (issue 38: CoQA's "Had she consented …?").
        "Had the warden agreed to open the gate?",
        "Did the harbour report list any wrecks?",
    ],
)
def test_a_fronted_auxiliary_asks_yes_or_no_whatever_the_cues_say(question: str) -> None:
    cues = question_cues(question)
    assert form_of(question, cues, cues.act) is not Form.YES_NO  # the cues alone
    assert form_of(question, cues, cues.act, Question(question).expected) is Form.YES_NO


@pytest.mark.parametrize(
    ("sentence", "items"),
    [
        ("They took three things: rope, a lamp and two maps.", ["rope", "a lamp", "two maps"]),
        ("Supplies: oak, ash or birch.", ["oak", "ash", "birch"]),
        ("The mill ground grain for the village.", []),
        ("It was cold, and the road was long.", []),
    ],
)
def test_enumerations(sentence: str, items: list[str]) -> None:
    assert enumeration(sentence) == items


def test_tour_text_is_read_without_errors(session: Session) -> None:
    assert [d for d in session.diagnostics() if d.is_error] == []
    assert any(Path(u.location.file).name == "tour.txt" for u in session.kb.units if u.location)


def test_a_weak_part_makes_the_whole_answer_begin_with_the_preface(session: Session) -> None:
    answer = ask(session, "Who managed the stage crew and also did the orchestra sell out its concerts in May?")
    assert [p.status for p in answer.parts] == ["grounded", "weak"]
    assert answer.status == "weak"
    assert answer.answer.startswith(f"{INSUFFICIENT_PREFACE} to answer every part:\n1. ")


@pytest.mark.parametrize(
    ("question", "evidence", "verdict"),
    [
        # "no" before a noun the question does not ask about denies nothing.
        (
            "Can a member borrow rare maps?",
            "Members may borrow rare maps; the reading room lends them at no cost.",
            "Yes",
        ),
        ("Did the keeper have a logbook?", "The keeper had no logbook that winter.", "No"),
        # The question's own negation is what it asks about.
        ("Can a member cancel without a reason?", "A member may cancel within a week without giving a reason.", "Yes"),
        # A word replaced at its place contradicts: "a good fit" asked, "a poor fit" stated.
        ("Is the ferry a good fit for heavy lorries?", "The ferry is a poor fit for heavy lorries.", "No"),
        # A term nothing mentions leaves the question open.
        ("Did the ferry sink in March?", "The ferry sailed twice a day in March.", None),
        # A regular inflection the stemmer splits still matches ("overheat" / "overheated").
        ("Did the kiln overheat?", "By noon the kiln had overheated twice.", "Yes"),
        # An offer is not the deed, and its refusal answers No; an offer alone leaves it open.
        ("Was the ferry chartered?", "The mayor offered to charter the ferry. The council declined the offer.", "No"),
        ("Was the ferry chartered?", "The mayor offered to charter the ferry for the fair.", None),
        ("Was the ferry chartered?", "The mayor refused to charter the ferry.", "No"),
        # A word an earlier sentence of the passage holds is not replaced by its absence.
        ("Was the kiln roof repair postponed?", "The kiln roof leaks badly. The full repair was postponed.", "Yes"),
        # Every term must be said for a Yes, however many there are: "fixed" is not "repaired".
        ("Did the crew repair the pump of the ferry in March?", "The crew fixed the pump of the ferry in March.", None),
        # An irregular form is said through the lexicon ("saw" is a form of "see").
        ("Did the keeper see the comet in March?", "The keeper saw the comet in March.", "Yes"),
        # One term short, a plain "not" denies another verb, not the one asked about.
        ("Did the ferry sink in March?", "The ferry did not sail in March.", None),
        # The opposite of a question word, said of another of its terms, denies it.
        ("Is the ferry office open on Sundays?", "The ferry office is open on weekdays, and closed on Sundays.", "No"),
        ("Did the ferry win the race?", "The ferry lost the race to the mail boat.", "No"),
        ("Is the ferry office open on Sundays?", "The ferry office is open daily except on Sundays.", "No"),
        (
            "Is the ferry office open on Mondays?",
            "The ferry office is open daily except on Sundays, and on Mondays.",
            "Yes",
        ),
        # A passive without "by" leaves the question's subject unsaid, and says the rest.
        (
            "Can a passenger return an unused ticket?",
            "Unused tickets may be returned within a week of purchase.",
            "Yes",
        ),
        # A number is said by the stating sentence itself, never by the one before it.
        ("Can a passenger bring nine bicycles?", "The ferry sails at nine. Each passenger may bring bicycles.", None),
    ],
)
def test_yes_no_polarity(question: str, evidence: str, verdict: str | None) -> None:
    unit = KnowledgeUnit(
        id="t::chunk-000::unit-000", source_id="t", chunk_id="chunk-000", role=Role.NARRATIVE, topic="t", claim=evidence
    )
    assert yes_no(Question(question), Evidence([unit])).answer == verdict


@pytest.mark.parametrize(
    ("question", "evidence", "name"),
    [
        # The subject of the matched words, not the nearest name after them.
        ("Which component schedules jobs?", "Nightly, Ferrox quietly and reliably schedules jobs of Calder.", "Ferrox"),
        # A passive sentence's agent after "by" is its subject.
        ("Who signed the lease?", "The lease was signed by Ada Quell in Marlow.", "Ada Quell"),
        # The name beside the noun the question asks for.
        ("Which pier holds the fuel store?", "The Quell family keeps the fuel store on pier P-7.", "P-7"),
        # A sentence lacking a two-term question's predicate ties no name to it.
        ("Who owns Calder?", "Ferrox is part of Calder.", None),
    ],
)
def test_single_entity_choice(question: str, evidence: str, name: str | None) -> None:
    unit = KnowledgeUnit(
        id="t::chunk-000::unit-000", source_id="t", chunk_id="chunk-000", role=Role.NARRATIVE, topic="t", claim=evidence
    )
    found = entity(question, Question(question).terms, Evidence([unit]))
    assert (found[0] if found else None) == name


def _paragraph(*claims: str) -> list[KnowledgeUnit]:
    """One paragraph of a plain-text file, one unit per claim, all starting on line 5 (ids hash
    the words, as plain-text ids do, so only the column gives the reading order)."""
    return [
        KnowledgeUnit(
            id=f"log::chunk-{abs(hash(claim)) % 10**8:08d}::unit-000",
            source_id="log",
            chunk_id="log::chunk",
            role=Role.NARRATIVE,
            topic="log",
            claim=claim,
            location=SourceLocation(file="log.txt", line=5, col=1 + 60 * n),
        )
        for n, claim in enumerate(claims)
    ]


def _view(units):
    return KBView(units, ("test",), Caller())


def test_a_list_reads_on_through_the_kept_units_paragraph() -> None:
    units = _paragraph(
        "The inspector named three faults in the hull. The first fault was a cracked frame.",
        "The second fault was a loose keel bolt. It had worked free in the swell.",
        "The third fault was a rotten transom.",
    )
    question = Question("List the faults in the hull.")
    kept = units[:1]
    read = paragraph_units(_view(units), kept)
    assert [u.id for u in read] == [units[1].id, units[2].id]
    draft = form_draft(Form.LIST, question, kept, read)
    assert draft is not None and "rotten transom" in draft.text and units[2].id in draft.cited
    # Kept units alone hold one ordinal: no list.
    assert form_draft(Form.LIST, question, kept) is None


def test_a_paragraph_is_read_only_as_far_as_the_view_resolves() -> None:
    units = _paragraph("The keeper logged the storm.", "The lamp failed at midnight.", "He relit it at one.")
    hidden = units[1].id
    view = _view([u for u in units if u.id != hidden])
    # The unit the caller may not see is not read; the paragraph goes on after it.
    assert [u.id for u in paragraph_units(view, units[:1])] == [units[2].id]
    fact = units[0].model_copy(update={"subject": "keeper", "relation": "uses", "object": "lamp"})
    assert paragraph_units(_view(units), [fact]) == []


def test_an_explanation_keeps_neighbours_about_the_same_thing_and_stops_where_the_text_moves_on() -> None:
    units = _paragraph(
        "The ferry's gearbox is lubricated by an electric oil pump.",
        "If the oil pump fails, the gearbox overheats within twenty minutes.",
        "This is why the chief engineer inspects it every Monday.",
        "The bow thruster is powered by the port generator.",
    )
    question = "What happens if the oil pump fails?"
    draft = form_draft(Form.EXPLANATION, Question(question), units)
    assert draft is not None
    lead, _, because = draft.text.partition(", because: ")
    assert lead.startswith("If the oil pump fails, the gearbox overheats")
    # Before: shares "oil pump" and "gearbox"; after: opens by referring back ("This").
    assert "lubricated by an electric oil pump" in because and "inspects it every Monday" in because
    assert "bow thruster" not in because and units[3].id not in draft.cited


def test_an_explanation_with_no_connected_neighbour_is_the_statement_alone() -> None:
    units = _paragraph(
        "Supper was cold.",
        "We kept going rather than run back, because the harbour entrance breaks in any sea above two metres.",
        "The barometer fell another four millibars.",
    )
    question = "Why did they keep going rather than run back?"
    draft = form_draft(Form.EXPLANATION, Question(question), units)
    assert draft is not None and ", because: " not in draft.text and draft.cited == (units[1].id,)


# --- what a claims answer quotes of a unit ---------------------------------------------------------

FERRY = """The gearbox is lubricated by an electric oil pump. If the oil pump fails, the gearbox overheats within twenty minutes. The bow thruster is powered by the port generator.

Deckhands must wear life vests on the car deck. It keeps them afloat if they fall from the ramp. Only the master may authorise a crossing in a gale.
"""


def _prose_units(text: str) -> list[KnowledgeUnit]:
    from core.cnl.plaintext import read_plaintext

    units, problems = read_plaintext(text, "ferry.txt")
    assert not problems and all(u.location is not None and u.location.prose for u in units)
    return units


def _quoted(unit: KnowledgeUnit, question: str) -> str:
    from core.answer.answer_forms import quoted_text

    return quoted_text(unit, Question(question).terms)


def test_a_prose_unit_is_quoted_by_its_sentences_about_the_question() -> None:
    gearbox, deckhands = _prose_units(FERRY)
    assert _quoted(gearbox, "What powers the bow thruster?") == "The bow thruster is powered by the port generator."
    # A sentence opening by referring back continues the one before it; a sentence about
    # something else does not.
    assert _quoted(deckhands, "What must deckhands wear on the car deck?") == (
        "Deckhands must wear life vests on the car deck. It keeps them afloat if they fall from the ramp."
    )


def test_a_prose_unit_naming_no_question_term_and_an_authored_unit_are_quoted_whole() -> None:
    gearbox, _ = _prose_units(FERRY)
    assert _quoted(gearbox, "Who inspects the anchors?") == gearbox.body
    assert gearbox.location is not None
    authored = gearbox.model_copy(update={"location": gearbox.location.model_copy(update={"prose": False})})
    assert _quoted(authored, "What powers the bow thruster?") == gearbox.body


def test_a_claims_answer_over_prose_quotes_what_the_question_asks_about(tmp_path: Path) -> None:
    (tmp_path / "ferry.txt").write_text(FERRY, encoding="utf-8")
    answer = ask(Session.open([tmp_path]), "What powers the bow thruster?")
    assert "port generator" in answer.answer and "oil pump" not in answer.answer
    assert answer.evidence_ids


def test_a_stored_prose_unit_keeps_its_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "ferry.txt").write_text(FERRY, encoding="utf-8")
    Session.open([tmp_path / "kb"])
    stored = Session.open([tmp_path / "kb"]).units(Caller())  # restored from the cache
    assert stored and all(u.location is not None and u.location.prose for u in stored)


VAULT = """## Context Unit vault::chunk-001::unit-001
Role: Constraint
Topic: Vault door combination
Claim: The vault door combination is 31-07-88.

## Context Unit vault::chunk-001::unit-002
Role: Constraint
Topic: Helix
Claim: Helix must not run on Sundays.
"""


def test_a_lone_unit_naming_everything_asked_is_grounded_whatever_its_role(tmp_path: Path) -> None:
    (tmp_path / "vault.md").write_text(VAULT, encoding="utf-8")
    session = Session.open([tmp_path])
    answer = ask(session, "What is the vault door combination?")
    assert answer.status == "grounded" and "31-07-88" in answer.answer
    # One focus word is too little to be decisive: a constraint does not define Helix.
    assert ask(session, "What is Helix?").status == "weak"


KILNS = """The Ardent kiln is a good fit for stoneware that needs a slow, even firing. It is a poor fit for porcelain that must be fired fast.
"""


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Is the Ardent kiln a good fit for fast porcelain firing?", "No, because"),
        ("Is the Ardent kiln a good fit for stoneware?", "Yes, because"),
    ],
)
def test_a_phrase_said_of_one_thing_does_not_answer_for_the_thing_it_is_contrasted_with(
    tmp_path: Path, question: str, verdict: str
) -> None:
    (tmp_path / "kilns.txt").write_text(KILNS, encoding="utf-8")
    assert ask(Session.open([tmp_path]), question).answer.startswith(verdict)


# --- headings and reasons in prose a reader did not write for us -----------------------------------

MINUTES = """Presenters
A presenter who misses three scheduled shows without notice loses their slot.

Presenters log every song they play in the music log, because the station pays royalties on that log. The log is checked every Friday.

1. Minutes of the last meeting
The minutes of the March meeting were approved. Proposed by Mr Reyes, seconded by Mrs Okafor.

2. Treasurer's report
Mr Forde presented the draft budget with a deficit. He explained that the heating contract had risen.

5. Bus contract
The contract for the school buses ends in August. It was agreed that the decision be deferred to the May meeting.
"""


def _explained(text: str, question: str):
    from core.cnl.plaintext import read_plaintext

    units, _ = read_plaintext(text, "minutes.txt")
    return form_draft(Form.EXPLANATION, Question(question), units), units


def test_a_sentence_giving_its_own_reason_is_the_explanation_alone() -> None:
    draft, units = _explained(MINUTES, "Why do presenters log every song?")
    anchor = next(u for u in units if "royalties" in u.body)
    assert draft is not None and draft.text.startswith("Presenters log every song")
    # Sharing "presenter" does not make the slot rule a reason, nor "log" the Friday check.
    assert ", because: " not in draft.text and draft.cited == (anchor.id,)


def test_an_explanation_does_not_take_a_neighbour_from_under_another_heading() -> None:
    question = "Why did Mr Forde present a deficit?"
    draft, _ = _explained(MINUTES, question)
    assert draft is not None and "heating contract" in draft.text
    assert "Proposed by Mr Reyes" not in draft.text
    # The same sentences without the headings are one stretch of text: "Mr" links them.
    plain = "\n".join(line for line in MINUTES.splitlines() if not line[:1].isdigit())
    draft, _ = _explained(plain, question)
    assert draft is not None and "Proposed by Mr Reyes" in draft.text


def test_a_which_question_whose_sentence_names_no_such_thing_cannot_tell(tmp_path: Path) -> None:
    # The sentence says "the decision" was deferred; nothing calls it an item (the item is the
    # heading above it), so the answer says it cannot tell and quotes that sentence.
    answer = ask(session_over(tmp_path, "minutes.txt", MINUTES), "Which item was deferred to the May meeting?")
    assert answer.status == "weak" and "cannot tell from the evidence which item" in answer.answer
    assert "the decision be deferred to the May meeting" in answer.answer


ALLOTMENT_FAQ = """Allotment Society: Frequently Asked Questions

Q: Can I keep chickens on my plot?
A: Yes, up to six hens may be kept, but cockerels are not allowed. You must register the hens with the secretary.

Q: Where is the water supply?
A: There are four water troughs, one at each corner of the site.

Q: Who do I contact about a broken gate?
A: Report it to the site warden, Gerald Pike, who keeps the spare keys.
"""


def test_faq_answers_are_read_as_answers_to_their_questions(tmp_path: Path) -> None:
    session = session_over(tmp_path, "faq.txt", ALLOTMENT_FAQ)
    # The answer sentence says "it"; the question it answers says what "it" is.
    gate = ask(session, "Who should I tell about a broken gate?")
    assert gate.answer.startswith("Gerald Pike") and gate.status == "grounded"
    cockerel = ask(session, "Can I keep a cockerel?")
    assert cockerel.answer.startswith("No") and "Can I keep chickens" not in cockerel.answer
    water = ask(session, "Where is the water supply?")
    assert "four water troughs" in water.answer and "Q:" not in water.answer and "A:" not in water.answer


def test_who_names_a_person_before_a_code_and_how_gives_the_numbered_steps(tmp_path: Path) -> None:
    session = session_over(
        tmp_path,
        "autoclave.txt",
        (
            "Running a cycle\n1. Loosen the caps of all bottles.\n2. Close the door.\n3. Press START.\n\n"
            "Faults\nIf the error code E4 appears, the door seal is leaking; stop the cycle and call the lab "
            "technician, Priya Natarajan.\n"
        ),
    )
    assert ask(session, "Who should I call if the door seal leaks?").answer.startswith("Priya Natarajan")
    steps = ask(session, "How do I run a cycle?").answer
    assert steps.startswith("Running a cycle: 1. Loosen the caps of all bottles; 2. Close the door; 3. Press START")


def test_a_question_about_what_happened_is_not_answered_from_a_procedures_steps(tmp_path: Path) -> None:
    session = session_over(
        tmp_path,
        "review.txt",
        (
            "Why it happened\nThe renewal job had been disabled during the migration in January.\n\n"
            "Actions\n1. Re-enable automatic renewal of the certificate on the new servers.\n"
            "2. Extend the expiry monitor to internal endpoints.\n"
        ),
    )
    past = ask(session, "Was the certificate renewed automatically?")
    assert past.answer.startswith(INSUFFICIENT_PREFACE) and "cannot tell" in past.answer
    # A question about what to do is answered by the steps.
    present = ask(session, "Do we re-enable automatic renewal of the certificate?")
    assert present.answer.startswith("Yes")


def test_a_cannot_tell_quotes_the_question_with_one_question_mark() -> None:
    """Typed without a "?", a question reaches the answer stage as a statement ("What is the
    depot gate code."): the quote had read "What is the depot gate code.?"."""
    assert quoted_question("What is the depot gate code.") == "What is the depot gate code?"
    assert quoted_question("  Who  runs\nthe depot?? ") == "Who runs the depot?"
    assert quoted_question("Did the kiln fire") == "Did the kiln fire?"
