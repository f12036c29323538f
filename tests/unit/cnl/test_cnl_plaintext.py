from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl import fact_triple, question_lines, read_plaintext, read_text, split_sentences, to_markdown
from core.cnl.plaintext import text_digits
from core.units import Relation, Role

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl"


@pytest.mark.parametrize(
    ("sentence", "triple"),
    [
        ("Orion uses Kafka.", ("Orion", Relation.USES, "Kafka")),
        ("Ploinky provides sandboxing.", ("Ploinky", Relation.PROVIDES, "sandboxing")),
        ("The scheduler depends on the ledger API.", ("scheduler", Relation.DEPENDS_ON, "ledger API")),
        ("Atlas is part of Orion.", ("Atlas", Relation.PART_OF, "Orion")),
        ("Vault is an instance of a key store.", ("Vault", Relation.INSTANCE_OF, "key store")),
        ("Vault is a instance of key store.", ("Vault", Relation.INSTANCE_OF, "key store")),
        ("Sandboxing is relevant for data privacy.", ("Sandboxing", Relation.RELEVANT_FOR, "data privacy")),
        ("Orion is useful for audits!", ("Orion", Relation.RELEVANT_FOR, "audits")),
        ("Lumen helps with capacity planning.", ("Lumen", Relation.RELEVANT_FOR, "capacity planning")),
        ("Orion supports GDPR.", ("Orion", Relation.SUPPORTS, "GDPR")),
        ("Orion enables encryption at rest.", ("Orion", Relation.SUPPORTS, "encryption at rest")),
        ("The report mentions Orion.", ("report", Relation.MENTIONS, "Orion")),
        ("An audit is about retention.", ("audit", Relation.ABOUT, "retention")),
        ("Heat causes expansion.", ("Heat", Relation.CAUSES, "expansion")),
        ("Heat leads to expansion.", ("Heat", Relation.CAUSES, "expansion")),
        ("Orion has the capability of encryption.", ("Orion", Relation.HAS_CAPABILITY, "encryption")),
        ("Orion has capability encryption.", ("Orion", Relation.HAS_CAPABILITY, "encryption")),
        ("ORION USES KAFKA", ("ORION", Relation.USES, "KAFKA")),
        ("Orion also uses Kafka.", ("Orion", Relation.USES, "Kafka")),
    ],
)
def test_fact_patterns(sentence: str, triple: tuple[str, Relation, str]) -> None:
    assert fact_triple(sentence) == triple


@pytest.mark.parametrize(
    "sentence",
    [
        "It uses Kafka.",  # a pronoun needs context
        "Orion never uses Kafka.",
        "Because Orion uses Kafka, it is fast.",
        "Orion uses Kafka, Redis and Postgres.",
        "Orion uses a scheduler that provides retries.",
        "The Orion platform was designed in a hurry by a small and very busy team of people.",
    ],
)
def test_not_facts(sentence: str) -> None:
    assert fact_triple(sentence) is None


def test_fact_unit_fields() -> None:
    units, diagnostics = read_plaintext("The Orion platform uses Kafka.\n", "notes.txt")
    assert diagnostics == []
    [unit] = units
    assert unit.id == f"notes::chunk-{text_digits('the orion platform uses kafka'):08d}::unit-000"
    assert (unit.role, unit.topic, unit.claim) == (
        Role.EXPLANATION,
        "Orion platform and Kafka",
        "The Orion platform uses Kafka.",
    )
    assert (unit.subject, unit.relation, unit.object, unit.confidence) == (
        "Orion platform",
        Relation.USES,
        "Kafka",
        0.9,
    )


def test_fixture_units_grouping_and_questions() -> None:
    units, diagnostics = read_plaintext((FIXTURES / "notes.txt").read_text(), "tests/Notes File.txt")
    assert diagnostics == []
    summary = [(u.location.line, u.role, u.relation, u.title) for u in units]
    assert summary == [
        (3, Role.EXPLANATION, Relation.USES, "Orion overview"),
        (3, Role.NARRATIVE, None, "Orion overview"),
        (4, Role.EXPLANATION, Relation.PROVIDES, "Orion overview"),
        (6, Role.EXPLANATION, Relation.RELEVANT_FOR, "Orion overview"),
        # "because" makes a narrative run an explanation.
        (6, Role.EXPLANATION, None, "Orion overview"),
    ]
    assert all(u.id == f"notes-file::chunk-{text_digits(u.claim):08d}::unit-000" for u in units)
    assert units[1].claim == "Dr. Smith designed it in 2019, e.g. for streaming workloads. It is fast!"
    assert units[1].topic == "Orion overview"
    # The Questions section is not evidence, facts in it included.
    assert not any("nothing" in u.claim or "What does" in u.claim for u in units)


def test_ids_are_deterministic() -> None:
    text = (FIXTURES / "notes.txt").read_text()
    assert read_plaintext(text, "notes.txt") == read_plaintext(text, "notes.txt")


GREENHOUSE = [
    "The mister raises humidity in the fern house.",
    "Humidity is relevant for orchid health.",
    "Open the roof vents when the glass is warm. Close them at dusk.",
    "The heater uses propane.",
]


def _ids(paragraphs: list[str]) -> dict[str, str]:
    units, _ = read_plaintext("\n\n".join(paragraphs) + "\n", "greenhouse.txt")
    return {u.claim: u.id for u in units}


@pytest.mark.parametrize(
    "edit",
    [
        lambda ps: ["A new paragraph about watering cans comes first.", *ps],
        lambda ps: [ps[0], "Shade cloth is part of summer care.", *ps[1:]],
        lambda ps: ps[1:],
        lambda ps: list(reversed(ps)),
        lambda ps: ["# Greenhouse notes", *ps],
        lambda ps: [p.replace(" ", "\n", 2) for p in ps],  # re-wrapped lines
    ],
)
def test_ids_survive_inserting_deleting_or_moving_other_paragraphs(edit) -> None:
    before = _ids(GREENHOUSE)
    after = _ids(edit(list(GREENHOUSE)))
    kept = {claim: unit_id for claim, unit_id in after.items() if claim in before}
    assert kept and all(before[claim] == unit_id for claim, unit_id in kept.items())


def test_editing_a_units_words_renames_only_that_unit() -> None:
    before = _ids(GREENHOUSE)
    after = _ids([GREENHOUSE[0].replace("fern", "palm"), *GREENHOUSE[1:]])
    assert set(before.values()) ^ set(after.values()) == {
        before[GREENHOUSE[0]],
        after[GREENHOUSE[0].replace("fern", "palm")],
    }


def test_the_same_text_twice_gets_distinct_ids() -> None:
    units, diagnostics = read_plaintext("The heater uses propane.\n\nThe heater uses propane.\n", "twice.txt")
    assert [d.code for d in diagnostics] == []
    assert [u.id.rsplit("::", 1)[1] for u in units] == ["unit-000", "unit-001"]
    assert units[0].id.split("::")[1] == units[1].id.split("::")[1]


@pytest.mark.parametrize("heading", ["Questions", "Questions:", "## Questions", "  questions  "])
def test_questions_section_is_dropped(heading: str) -> None:
    units, _ = read_plaintext(
        f"Orion uses Kafka.\n\n{heading}\nDoes Orion provide sandboxing?\nAtlas uses Vault.\n", "q.txt"
    )
    assert [u.claim for u in units] == ["Orion uses Kafka."]


def test_narrative_runs_hold_at_most_three_sentences_and_facts_split_them() -> None:
    text = "One is here. Two is here. Three is here. Four is here. Orion uses Kafka. Five is here.\n"
    units, _ = read_plaintext(text, "n.txt")
    assert [u.claim for u in units] == [
        "One is here. Two is here. Three is here.",
        "Four is here.",
        "Orion uses Kafka.",
        "Five is here.",
    ]
    assert units[0].topic == "One is here"
    assert [u.role for u in units] == [Role.NARRATIVE, Role.NARRATIVE, Role.EXPLANATION, Role.NARRATIVE]


def test_sentences_keep_their_lines_and_columns() -> None:
    text = "First one is short. Second\nspans two lines.\n\n- Bullet one\n- Bullet two has an end. Then more"
    assert [(s.text, s.line, s.col) for s in split_sentences(text)] == [
        ("First one is short.", 1, 1),
        ("Second spans two lines.", 1, 21),
        ("Bullet one", 4, 3),
        ("Bullet two has an end.", 5, 3),
        ("Then more", 5, 26),
    ]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Mr. Jones met Dr. Who at 3 p.m. today.", 1),
        ("J. R. R. Tolkien wrote it. It sold well.", 2),
        ("It grew 3.5 times in the U.S. last year.", 1),
        ("Is it fast? Yes. Very!", 3),
        ('He said "stop." Then he left.', 2),
        ("Version 2.0 shipped. version numbers vary.", 1),
    ],
)
def test_sentence_splitting_handles_abbreviations(text: str, count: int) -> None:
    assert len(split_sentences(text)) == count


def test_round_trip_through_markdown() -> None:
    units, _ = read_plaintext((FIXTURES / "notes.txt").read_text(), "notes.txt")
    again, diagnostics = read_text(to_markdown(units), "notes.md")
    assert diagnostics == []
    assert [u.model_dump(exclude={"location"}) for u in again] == [u.model_dump(exclude={"location"}) for u in units]


def test_empty_text_gives_no_units() -> None:
    assert read_plaintext("\n\n   \n", "empty.txt") == ([], [])


def test_a_single_capital_letter_before_a_lowercase_verb_is_a_name() -> None:
    from core.cnl.plaintext import fact_triple
    from core.units import Relation

    assert fact_triple("A uses B.") == ("A", Relation.USES, "B")
    assert fact_triple("A Uses B.") is None
    assert fact_triple("A tool uses B.") == ("tool", Relation.USES, "B")


def test_a_lone_letter_after_a_lowercase_word_ends_the_sentence() -> None:
    from core.cnl.plain_sentences import split_sentences

    texts = [s.text for s in split_sentences("A uses B. B provides C. C is relevant for D.")]
    assert texts == ["A uses B.", "B provides C.", "C is relevant for D."]


_STORY = "Mara rowed the boat to the island. She found the lighthouse empty.\n\n"
_QUESTIONS_AFTER = "Q1: Did Mara row the boat? Answer Yes or No.\nQ2: Who found the lighthouse?\n"


@pytest.mark.parametrize(
    "block",
    [
        "Questions \u2014 answer each with a single word or Yes/No only:\n" + _QUESTIONS_AFTER,
        "Questions - answer briefly\n" + _QUESTIONS_AFTER,
        "Questions: answer with one word.\n" + _QUESTIONS_AFTER,
        "QUESTIONS \u2013\n\n" + _QUESTIONS_AFTER,
        "Questions for the reader\n1. Did Mara row the boat? Answer Yes or No.\n2. List what she found.\n",
        "## Review questions\n- Did Mara row the boat?\n- Who found the lighthouse?\n",
        "Reading questions.\nq1) Did Mara row the boat\nq2) Name the island\n",
        "Questions\n\nDid Mara row the boat?\n\nWho found the lighthouse?\n",
    ],
)
def test_trailing_question_block_variants_are_not_units(block: str) -> None:
    text = _STORY + block
    units, diagnostics = read_plaintext(text, "story.txt")
    assert diagnostics == []
    assert [u.claim for u in units] == ["Mara rowed the boat to the island. She found the lighthouse empty."]
    assert question_lines(text) == len([line for line in block.splitlines()[1:] if line.strip()])


@pytest.mark.parametrize(
    "text",
    [
        # A question inside prose, and a later sentence that mentions questions.
        "Who had left the light on? Nobody knew.\n\nQuestions remained about the keeper.\nHe never came back.\n",
        # "question" in a heading over a list of statements is evidence.
        "The question of ownership\n1. The mill went to the Fenwicks.\n2. The bridge went to the parish.\n",
        # A line with "question" inside a paragraph is not a heading.
        "She asked the question that everyone feared:\nwho had the key?\n",
        # Questions followed by more prose are not a trailing block.
        "Questions for the reader\n1. Who rowed?\n\nMara rowed back at dawn.\n",
    ],
)
def test_questions_inside_prose_stay_prose(text: str) -> None:
    units, _ = read_plaintext(text, "prose.txt")
    assert question_lines(text) == 0
    claims = " ".join(u.body for u in units)
    lines = [line.strip().lstrip("0123456789. ") for line in text.splitlines() if line.strip()]
    # The first line may be read as a heading (a title, not a unit); every later line is evidence.
    assert all(line in claims for line in lines[1:])


@pytest.mark.parametrize(
    ("sentence", "relation"),
    [
        ("Ozone contactors provide odour control.", Relation.PROVIDES),
        ("Pressure surges cause main bursts.", Relation.CAUSES),
        ("The pumps depend on the substation.", Relation.DEPENDS_ON),
        ("Both stations use telemetry.", Relation.USES),
        ("Gauges enable leak detection.", Relation.SUPPORTS),
    ],
)
def test_plural_fact_verbs_are_facts(sentence: str, relation: Relation) -> None:
    triple = fact_triple(sentence)
    assert triple is not None and triple[1] is relation


@pytest.mark.parametrize(
    "sentence",
    ["The guild would provide the money.", "The crew did not use the door.", "Nobody wanted to use the bridge."],
)
def test_a_base_form_verb_after_a_modal_or_to_is_not_a_fact(sentence: str) -> None:
    assert fact_triple(sentence) is None


@pytest.mark.parametrize(
    ("block", "skipped"),
    [
        ("Q1: Did Mara row the boat?\nQ2: Name the island.\n", 2),
        ("1. Did Mara row the boat?\n2) Who found the lighthouse?\n3. Was it empty?\n", 3),
        # One question, or numbered statements, after a story are the story's.
        ("1. Did Mara row the boat?\n", 0),
        ("1. Mara rowed.\n2. The lighthouse was empty.\n", 0),
        # Other list labels, and a title that does not say "questions", mark a block too.
        ("(a) Did Mara row the boat? Answer Yes or No.\n(b) List what she found.\n(c) Who was away?\n", 3),
        ("FOR THE HARBOUR BOARD\n[1] Did Mara row the boat?\n[2] Name the island.\n", 2),
        ("Points to settle before filing:\nQ-1. Did Mara row the boat?\nQ-2. Who found the lighthouse?\n", 2),
        # A sentence introducing a list is prose, and so is the list under it.
        ("She wrote two things down.\nc) Did Mara row the boat?\nd) Who found the lighthouse?\n", 0),
    ],
)
def test_a_trailing_block_without_a_heading(block: str, skipped: int) -> None:
    text = _STORY + block
    units, _ = read_plaintext(text, "story.txt")
    assert question_lines(text) == skipped
    claims = " ".join(u.body for u in units)
    assert ("Mara row the boat" in claims or "Mara rowed." in claims) == (skipped == 0)
    assert all(word not in claims for word in ("HARBOUR", "Points to settle")) or skipped == 0


def test_a_heading_line_written_straight_above_its_text_titles_it_and_is_not_quoted() -> None:
    text = (
        "Power cuts\n"
        "During a power cut the mixing desk goes dark. The presenter fades to automation.\n\n"
        "Night-time automation:\n"
        "Between midnight and six the station plays a playlist.\n"
    )
    units, problems = read_plaintext(text, "handbook.txt")
    assert not problems
    assert [(u.title, u.claim) for u in units] == [
        ("Power cuts", "During a power cut the mixing desk goes dark. The presenter fades to automation."),
        ("Night-time automation", "Between midnight and six the station plays a playlist."),
    ]
    # Its text's id does not depend on the heading: retitling a section keeps the unit's id.
    retitled, _ = read_plaintext(text.replace("Power cuts", "Outages"), "handbook.txt")
    assert retitled[0].id == units[0].id and retitled[0].title == "Outages"


@pytest.mark.parametrize(
    "paragraph",
    [
        # Hard-wrapped prose: the first line goes on into the next.
        "The duty manager carries the\nStation phone at all times.\n",
        "When the fibre link fails\nthe microwave link takes over.\n",
        "Keep the cupboard locked,\nAnd the key with the manager.\n",
        # A line of many words, or one that ends a sentence, is text.
        "Only the duty manager may switch over to the emergency unit now\nThe unit runs six hours.\n",
        "Studio B is small.\nIt is used for interviews.\n",
        # A fact is a fact, not a title.
        "Studio A uses the main desk\nThe desk was bought last year.\n",
    ],
)
def test_a_first_line_that_reads_on_or_is_a_sentence_stays_text(paragraph: str) -> None:
    units, _ = read_plaintext(paragraph, "handbook.txt")
    first_words = paragraph.split()[:3]
    assert all(u.title is None for u in units)
    assert units and " ".join(first_words) in " ".join(u.body for u in units)


FAQ = """Allotment Society FAQ

Q: Can I keep chickens on my plot?
A: Yes, up to six hens may be kept, but cockerels are not allowed. You must register them.

Question: Who do I contact about a
broken gate?

Answer: Report it to the site warden, Gerald Pike.

Q3: Are bonfires permitted?
"""


def test_an_faq_answer_is_a_unit_about_its_question_and_the_question_is_not_evidence() -> None:
    units, problems = read_plaintext(FAQ, "faq.txt")
    assert not problems
    by_topic = {u.topic: u for u in units}
    chickens = by_topic["Can I keep chickens on my plot?"]
    assert chickens.claim == "Yes, up to six hens may be kept, but cockerels are not allowed. You must register them."
    assert chickens.title == "Allotment Society FAQ" and chickens.location is not None
    assert (chickens.location.line, chickens.location.col) == (4, 4)  # where the answer's text starts
    # A question over two lines, its answer a paragraph further on.
    gate = by_topic["Who do I contact about a broken gate?"]
    assert gate.claim == "Report it to the site warden, Gerald Pike." and gate.location.line == 9
    # A question nobody answered stays text, as any other line.
    assert [u.claim for u in units if "bonfires" in (u.claim or "")] == ["Q3: Are bonfires permitted?"]


def test_a_questions_heading_over_answered_questions_is_an_faq_not_a_block_to_drop() -> None:
    faq = "Questions\n\nQ: When is rent due?\nA: Rent is due on the first of March.\n"
    units, _ = read_plaintext(faq, "faq.txt")
    assert [(u.topic, u.claim) for u in units] == [("When is rent due?", "Rent is due on the first of March.")]
    block = "Rent is due on the first of March.\n\nQuestions\nWhen is rent due?\nWho collects it?\n"
    units, _ = read_plaintext(block, "story.txt")
    assert [u.claim for u in units] == ["Rent is due on the first of March."]


AUTOCLAVE = """Loading and running a cycle
1. Loosen the caps of all bottles
   by half a turn.
2. Close the door and turn the wheel.
3) Press START and record the cycle number.

Faults
1. The seal leaks. 3. The drain is blocked.
"""


def test_a_numbered_list_under_its_heading_is_one_procedure_unit() -> None:
    units, problems = read_plaintext(AUTOCLAVE, "autoclave.txt")
    assert not problems
    procedure = units[0]
    assert procedure.role is Role.PROCEDURE and procedure.title == procedure.topic == "Loading and running a cycle"
    assert procedure.procedure == (
        "1. Loosen the caps of all bottles by half a turn.\n2. Close the door and turn the wheel.\n"
        "3. Press START and record the cycle number."
    )
    assert procedure.location is not None and procedure.location.line == 2
    # Numbers that do not count from 1 in order are not steps: sentences, as before.
    assert all(u.role is not Role.PROCEDURE for u in units[1:]) and units[1].title == "Faults"
    # Nor is a numbered list of statements.
    statements, _ = read_plaintext(
        "Owners\n1. The mill went to the Fenwicks.\n2. The bridge went to the parish.\n", "o.txt"
    )
    assert [u.role for u in statements] == [Role.NARRATIVE]
