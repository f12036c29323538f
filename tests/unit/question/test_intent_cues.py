"""Question analysis: acts, multi-hop and comparison cues, focus terms, output hints, input split."""

from __future__ import annotations

import pytest

from core.question import intent_cues
from core.question.intent_cues import focus_coverage, question_cues, split_input, unit_text
from core.text.tokenizer import stem, tokenize
from core.units import Act, KnowledgeUnit, Relation, Role


@pytest.mark.parametrize(
    ("question", "act"),
    [
        ("Why is Orion relevant for logging?", Act.EXPLAIN),
        ("Explain the retry policy of the queue.", Act.VERIFY),  # "policy" is a verify cue
        ("Explain why the cache helps.", Act.EXPLAIN),
        ("How does replication work?", Act.EXPLAIN),
        ("Compare Helix and Orion.", Act.COMPARE),
        ("What is the difference between Helix and Orion?", Act.COMPARE),
        ("Helix vs Orion for batch jobs", Act.COMPARE),
        ("Which is better, Helix or Orion?", Act.COMPARE),
        ("Should I use Helix for logging?", Act.RECOMMEND),
        ("Which database should we pick?", Act.RECOMMEND),
        ("What do you recommend for caching?", Act.RECOMMEND),
        ("Why does the build fail?", Act.DIAGNOSE),
        ("The deploy is not working, troubleshoot it", Act.DIAGNOSE),
        ("How do I install Helix?", Act.IMPLEMENT),
        ("How should I configure the proxy?", Act.IMPLEMENT),
        ("Explain how to set up the proxy.", Act.IMPLEMENT),
        ("Why install Helix at all?", Act.EXPLAIN),
        ("Check whether contractors qualify for the bonus.", Act.VERIFY),
        ("Is it allowed to ship on Fridays?", Act.VERIFY),
        ("What is a vector clock?", Act.DEFINE),
        ("Define idempotency.", Act.DEFINE),
        ("What does CAP mean?", Act.DEFINE),
        ("Evaluate the new scheduler.", Act.EVALUATE),
        ("How good is the new scheduler?", Act.EVALUATE),
        ("Who maintains Orion?", Act.IDENTIFY),
        ("Name the component that stores logs.", Act.IDENTIFY),
        ("Describe the ingestion pipeline.", Act.DESCRIBE),
        ("Tell me about Orion.", Act.DESCRIBE),
        ("Is Helix or Orion faster?", Act.COMPARE),
        ("orion logging", Act.EXPLAIN),
    ],
)
def test_act_detection(question: str, act: Act) -> None:
    assert question_cues(question).act is act


def test_act_cue_names_the_matched_phrase() -> None:
    assert question_cues("What is the difference between A1 and B2?").act_cue == "difference"
    assert question_cues("orion logging").act_cue == ""


@pytest.mark.parametrize(
    ("question", "multi_hop", "cue"),
    [
        ("Why is Orion relevant for logging?", True, "why"),
        ("Orion depends on what?", True, "depends"),
        ("What leads to data loss?", True, "leads to"),
        ("Trace the chain from Orion to logging.", True, "chain"),
        ("What is Orion?", False, ""),
    ],
)
def test_multi_hop_cues(question: str, multi_hop: bool, cue: str) -> None:
    cues = question_cues(question)
    assert (cues.multi_hop, cues.multi_hop_cue) == (multi_hop, cue)


def test_comparison_names_both_sides_trimmed_to_content_words() -> None:
    cues = question_cues("What is the difference between the Orion scheduler and the Helix queue in production?")
    assert cues.comparison
    assert cues.compared == ("Orion scheduler", "Helix queue")
    assert question_cues("Helix versus Orion").compared == ("Helix", "Orion")
    assert question_cues("Compare Helix with Orion.").compared == ("Helix", "Orion")


def test_no_comparison_without_cue() -> None:
    cues = question_cues("What is Orion?")
    assert not cues.comparison and cues.compared == ()


def test_focus_terms_drop_stopwords_and_question_form_words() -> None:
    cues = question_cues("Please explain why Orion is relevant for structured logging!")
    assert cues.focus_terms == tuple(stem(w) for w in ("orion", "relevant", "structured", "logging"))
    assert cues.focus_words == ("orion", "relevant", "structured", "logging")


def test_focus_terms_are_distinct_in_first_use_order() -> None:
    assert question_cues("Compare logging in Orion with logging in Helix").focus_terms == ("log", "orion", "helix")


@pytest.mark.parametrize(
    ("question", "output"),
    [
        ("Answer in one word: who owns Orion?", "one_word"),
        ("How many replicas does Orion keep?", "number"),
        ("List the components of Orion.", "list"),
        ("In what order should the pumps restart?", "list"),
        ("Is Orion part of Helix?", "yes_no"),
        ("Is Helix or Orion faster?", "comparison_table"),
        ("Why is Orion relevant for logging?", "causal_explanation"),
        ("How do I install Helix?", "steps"),
        ("What is Orion?", "definition"),
        ("Compare Helix and Orion.", "comparison_table"),
        ("Describe Orion.", "summary"),
    ],
)
def test_output_hint(question: str, output: str) -> None:
    assert question_cues(question).output == output


def test_split_lead_clause_into_context_and_question() -> None:
    assert split_input("Given that Orion uses Helix, why is Orion relevant for logging?") == (
        ["Orion uses Helix."],
        ["Why is Orion relevant for logging?"],
    )


def test_split_statements_and_several_questions() -> None:
    context, questions = split_input(
        "Orion uses Helix. Helix provides logs. What is Orion and also how do I install it? Explain why Helix matters."
    )
    assert context == ["Orion uses Helix.", "Helix provides logs."]
    assert questions == ["What is Orion?", "How do I install it?", "Explain why Helix matters."]


def test_split_on_semicolon_also() -> None:
    assert split_input("What is Orion; also, who owns it?") == ([], ["What is Orion?", "Who owns it?"])


def test_split_keeps_decimal_points_inside_a_sentence() -> None:
    assert split_input("Orion 2.1 uses Helix. Why?") == (["Orion 2.1 uses Helix."], ["Why?"])


@pytest.mark.parametrize(
    "question",
    [
        "Which samples of V. cholerae did the survey of the delta find?",
        "Why did the lighthouse keeper at St. Brannock log the fog twice?",
        "Who funded the orchard trials in the U.S. Midwest before 1950?",
        "When did Harriet J. Ollerton patent the seed drill?",
        "What does the guide list, e.g. for the ferns?",
    ],
)
def test_initials_and_abbreviations_do_not_end_a_question(question: str) -> None:
    assert split_input(question) == ([], [question])


def test_a_letter_closing_a_statement_still_ends_it() -> None:
    # A lone capital after a lowercase word, then a capitalised word: a sentence end.
    assert split_input("The mill feeds pump B. Why does pump B stall?") == (
        ["The mill feeds pump B."],
        ["Why does pump B stall?"],
    )
    assert split_input("the kiln cooled. why did it crack?") == (["the kiln cooled."], ["Why did it crack?"])


def test_input_without_a_question_is_the_question() -> None:
    assert split_input("orion structured logging") == ([], ["orion structured logging"])
    assert split_input("Orion uses Helix.") == ([], ["Orion uses Helix."])


def test_split_empty_input() -> None:
    assert split_input("   ") == ([], [])


def _unit(claim: str, **triple: object) -> KnowledgeUnit:
    return KnowledgeUnit(
        id="s::chunk-000::unit-000",
        source_id="s",
        chunk_id="chunk-000",
        role=Role.EXPLANATION,
        topic="Topic words",
        claim=claim,
        **triple,
    )


def test_unit_text_includes_topic_claim_and_triple() -> None:
    unit = _unit("It helps.", subject="Orion", relation=Relation.RELEVANT_FOR, object="logging")
    assert unit_text(unit) == "Topic words It helps. Orion relevant_for logging"


def test_coverage_reads_relation_names_as_words_and_reports_missing_words() -> None:
    cues = question_cues("Why is Orion relevant for structured logging?")
    coverage = focus_coverage(cues, ["Orion relevant_for logging"])
    assert coverage.covered == ("orion", "relevant", "logging")
    assert coverage.missing == ("structured",)
    assert coverage.enough
    assert coverage.summary() == "3 of 4 focus terms covered; missing: structured"


def test_coverage_below_half_is_not_enough_and_no_terms_is_vacuous() -> None:
    cues = question_cues("Why is Orion relevant for structured logging?")
    assert not focus_coverage(cues, ["Orion is fast"]).enough
    assert focus_coverage(question_cues("What is it?"), ["anything"]).enough


def test_hyphenated_word_is_one_focus_word_covered_whole_or_by_all_parts() -> None:
    cues = question_cues("What does SHP-2 cover for x-ray scans?")
    assert cues.focus_words == ("shp-2", "cover", "x-ray", "scans")
    assert "shp" in cues.focus_terms and "2" in cues.focus_terms
    coverage = focus_coverage(cues, ["Step 2 covers x ray scans"])
    assert coverage.missing == ("shp-2",)
    assert focus_coverage(cues, ["Rule SHP-2 applies"]).covered == ("shp-2",)


def test_what_happens_frames_the_question_rather_than_naming_its_subject() -> None:
    assert question_cues("What happens if the dehumidifier fails?").focus_words == ("dehumidifier", "fails")
    assert question_cues("What happened to the bow thruster?").focus_words == ("bow", "thruster")


def test_besides_shapes_the_question_and_is_no_focus_word() -> None:
    # "Besides books, what does the library lend?": a sentence listing books and maps need not say "besides".
    assert "besides" not in question_cues("Besides books, what does the library lend?").focus_words
    assert "books" in question_cues("Besides books, what does the library lend?").focus_words


def test_a_texts_stems_are_kept_for_the_next_check_and_a_long_texts_are_not(monkeypatch) -> None:
    # The strategies, the weakness check and the validator check the same units and draft.
    cues = question_cues("Which pump feeds the Varrow cistern?")
    tokenized = []
    monkeypatch.setattr(intent_cues, "tokenize", lambda text: tokenized.append(text) or tokenize(text))
    unit = "The Varrow cistern is fed by the east pump relevant_for irrigation."
    first = focus_coverage(cues, [unit])
    assert focus_coverage(cues, [unit]) == first and first.covered == ("pump", "varrow", "cistern")
    assert sum(text.startswith("The Varrow") for text in tokenized) == 1
    long = unit + " It holds rain." * (intent_cues.STEMS_KEPT_CHARS // 15)
    assert focus_coverage(cues, [long]) == focus_coverage(cues, [long]) == first
    assert sum(text.startswith("The Varrow") for text in tokenized) == 3
