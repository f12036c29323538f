"""The support check (core/answer/support.py) and reference resolution (core/answer/coref.py) on sentences
written for this test: a lighthouse log, a chess club, a brewery, a family letter."""

from __future__ import annotations

from core.answer import term_coverage
from core.answer.coref import resolve
from core.answer.question_gap import fills_gap
from core.answer.support import QUOTE, SUPPORT_THRESHOLD, check, support_score
from core.nlp import tagging
from core.nlp.tagging import TaggedOnRead, tag_text
from core.question import Question
from core.question.answer_types import expected_type
from core.question.typed_spans import Span, typed_spans


def support_of(question: str, sentence: str, lead: str):
    tokens = tag_text(sentence)
    expected = expected_type(question)
    span = next(s for s in typed_spans(tokens, sentence, expected) if s.text == lead)
    # The class noun of "which X" and the form words of "how long" shape the answer: the check
    # asks the sentence for the other terms only (Question.required_terms).
    return check(Question(question), expected, tokens, span)


def test_a_sentence_saying_the_question_supports_its_lead() -> None:
    support = support_of(
        "Who repaired the lighthouse lamp?", "Ada Brenner repaired the lighthouse lamp in May.", "Ada Brenner"
    )
    assert support.passed, support.reasons


def test_a_focus_term_the_sentence_does_not_say_fails_the_check() -> None:
    support = support_of("Who repaired the foghorn?", "Ada Brenner repaired the lighthouse lamp in May.", "Ada Brenner")
    assert not support.passed and "the sentence does not say: foghorn" in support.reasons


def test_a_name_in_the_question_must_be_said_exactly() -> None:
    # Four focus terms allow one paraphrased word, never a name: this is about another club.
    question = "When did the Rookwood chess club win its first regional trophy?"
    sentence = "The Ashby chess club won its first regional trophy in 1987."
    assert not support_of(question, sentence, "1987").passed


def test_a_negation_only_in_the_sentence_flips_the_answer() -> None:
    support = support_of(
        "Which brewery won the medal?", "The Hollin brewery did not win the medal; Marrow Ales did.", "Hollin"
    )
    assert not support.passed and "only the sentence is negated" in support.reasons


def test_a_negated_question_is_not_answered_by_an_affirmative_sentence() -> None:
    support = support_of("Who did not sign the lease?", "Tomas Vey signed the lease for the brewery.", "Tomas Vey")
    assert not support.passed and "only the question is negated" in support.reasons


def test_the_relation_in_the_other_direction_fails() -> None:
    # Asked who defeated Ilse, the sentence has Ilse defeating someone.
    support = support_of("Who defeated Ilse Marten?", "Ilse Marten defeated Karl Osei in the final round.", "Karl Osei")
    assert not support.passed and "the sentence states the relation in the other direction" in support.reasons
    assert support_of(
        "Who defeated Karl Osei?", "Ilse Marten defeated Karl Osei in the final round.", "Ilse Marten"
    ).passed


def test_a_lead_of_the_wrong_type_or_a_word_of_the_question_fails() -> None:
    # "Which X" needs an X: a plain noun the lexicon does not call a kind of X is none.
    support = support_of(
        "Which trophy did the club keep?", "The club kept the minutes of every meeting.", "the minutes"
    )
    assert not support.passed and any("not said to be a kind of trophy" in r for r in support.reasons)
    sentence = "The club kept the Ashby Cup after the final round."
    tokens = tag_text(sentence)
    expected = expected_type("Which Ashby trophy did the club keep?")
    own = Span("Ashby", 3, 3)
    result = check(Question("Which Ashby trophy did the club keep?"), expected, tokens, own)
    assert any("only repeats the question" in r for r in result.reasons)


def test_a_missing_lead_fails_with_the_type_named() -> None:
    tokens = tag_text("The keeper logged the storm at dusk.")
    question = "When was the storm logged?"
    expected = expected_type(question)
    result = check(Question(question), expected, tokens, None)
    assert not result.passed and "no date or time in the sentence" in result.reasons


def test_a_lexicon_link_covers_a_term_and_is_shown() -> None:
    # "died" is not "death" as written; the lexicon derives one from the other, and says so.
    support = support_of(
        "In what year was the death of the keeper?", "The keeper died in 1911 at the lighthouse.", "1911"
    )
    assert support.passed, support.reasons
    assert any("death" in link and "die" in link for link in support.links)


def test_pronouns_resolve_to_the_nearest_compatible_name() -> None:
    sentence = "He sent their daughter to the brewery."
    tokens = tag_text(sentence)
    context = ["Tomas Vey married Lena Hart in the Duchy of Kent.", "The couple moved to Ashby."]
    resolved = {tokens[i].word: str(r) for i, r in resolve(tokens, sentence, context).items()}
    # "He" names one person (not "Duchy of Kent"); of an earlier sentence, its subject first.
    assert resolved["He"] == "He \u2192 Tomas Vey"
    assert resolved["their"].startswith("their \u2192 ")


def test_the_company_resolves_to_the_name_before_it_and_a_month_never_does() -> None:
    sentence = "In August the company closed its Ashby site."
    tokens = tag_text(sentence)
    resolved = resolve(tokens, sentence, ["Marrow Ales bought the Hollin brewery."])
    assert [str(r) for r in resolved.values()][0] == "the company \u2192 Marrow Ales"


def test_the_support_score_is_the_share_of_focus_terms_said_and_needs_the_threshold() -> None:
    # Four focus terms (keeper, repaint, brass, lantern), three said: 0.75, under the threshold.
    weak = support_of(
        "When did the keeper repaint the brass lantern?", "The keeper polished the brass lantern in 1911.", "1911"
    )
    assert weak.score == 0.75 < SUPPORT_THRESHOLD and not weak.passed
    assert "the sentence does not say: repaint" in weak.reasons and "support 0.75" in weak.summary()
    # Six terms, five said: one unsaid word among many is a paraphrase the threshold lets pass.
    question = "When did the night keeper repaint the old brass lantern?"
    strong = support_of(question, "The night keeper polished the old brass lantern in 1911.", "1911")
    assert strong.score == support_score(5, 6) >= SUPPORT_THRESHOLD and strong.passed, strong.reasons


def gap(question: str, sentence: str, lead: str) -> bool:
    tokens = tag_text(sentence)
    words = [t.word for t in tokens]
    first = words.index(lead.split()[0])
    return fills_gap(
        Question(question), tokens, Span(lead, first, first + len(lead.split()) - 1), expected_type(question)
    )


def test_a_lead_fills_the_gap_after_the_question_verb_or_its_preposition() -> None:
    sentence = "The spare lamp is bolted to the gallery rail, beside the tool chest."
    assert gap("What is the spare lamp bolted to?", sentence, "gallery rail")
    assert not gap("What is the spare lamp bolted to?", sentence, "tool chest")
    assert gap("What did the keeper log?", "The keeper logged the storm at dusk.", "storm")
    # Asked "which X", a phrase naming an X is where the answer is.
    assert gap("Which trophy did the club keep?", "The club kept the Ashby trophy.", "Ashby")


def test_the_unnamed_agent_of_a_passive_sentence_may_go_unsaid() -> None:
    # "must be reported" names no one: the question's subject "keeper" is the agent it leaves out.
    question = "How long does a keeper have to report storm damage?"
    support = support_of(question, "Storm damage must be reported within 6 hours of the storm.", "6 hours")
    assert support.passed, support.reasons
    assert any(link.startswith("keeper: the agent") for link in support.links)
    # Stated in the active voice about someone else, the subject is unsaid, and it fails.
    other = support_of(question, "The harbour master reports storm damage within 6 hours.", "6 hours")
    assert not other.passed


def test_a_passive_question_has_no_agent_to_leave_unsaid() -> None:
    # "What are lamps called?" asks about the lamps themselves; a sentence naming another thing fails.
    support = support_of(
        "What are lamps also called?", "The middle layer is called the lantern room.", "the lantern room"
    )
    assert not support.passed and "the sentence does not say: lamps" in support.reasons


def test_a_number_in_words_must_be_said_and_equals_its_digits() -> None:
    # Six focus terms allow one unsaid word, never a number, in words or in digits.
    question = "When did the harbour crew haul eight boats ashore for the winter?"
    assert not support_of(question, "In 1931 the harbour crew hauled nine boats ashore for the winter.", "1931").passed
    assert support_of(question, "In 1931 the harbour crew hauled 8 boats ashore for the winter.", "1931").passed


def test_asked_which_country_a_common_noun_place_must_be_one() -> None:
    question = "Which country was the ferry moored in?"
    support = support_of(question, "The ferry was moored in the old harbour basin.", "the old harbour basin")
    assert not support.passed and any("not said to be a kind of country" in r for r in support.reasons)
    assert support_of(question, "The ferry was moored in Norway.", "Norway").passed


def test_a_fronted_auxiliary_asks_for_the_object_whatever_the_tag_of_the_noun_before_it() -> None:
    # The tagger calls "fort" a verb before "did", which read as "who captured …?" (the subject).
    question = "Which fort did rebels capture?"
    support = support_of(question, "In 1755 rebels captured Fort Tarrow on the river.", "Fort Tarrow")
    assert "the sentence states the relation in the other direction" not in support.reasons


REVERSED = "the sentence states the relation in the other direction"


def test_asked_for_the_subject_the_main_verb_sets_the_direction_not_a_later_one() -> None:
    # "claimed" is what the answer did; "appeared" belongs to the clause it claimed.
    question = "Who claimed that the harbour ledger first appeared in 1871?"
    sentence = "Brenner claimed that the Dutch harbour ledger first appeared in 1871 in Leiden."
    assert REVERSED not in support_of(question, sentence, "Brenner").reasons
    assert REVERSED in support_of(question, sentence, "Dutch").reasons


def test_the_wh_words_noun_phrase_is_read_past_to_its_verb() -> None:
    # "What harbour guild repainted …" asks for the subject as "Who repainted …" does.
    question = "What harbour guild repainted the lantern gallery?"  # the tagger calls "harbour" a verb here
    sentence = "The Ropers Guild repainted the lantern gallery for the Pilots Guild."
    assert REVERSED not in support_of(question, sentence, "The Ropers Guild").reasons
    assert REVERSED in support_of(question, sentence, "the Pilots Guild").reasons


def test_an_instrument_or_partner_after_with_can_answer_for_the_subject() -> None:
    # "The safe opens with 3318" says what "What number opens the safe?" asks, as "by" would.
    sentence = "The key safe of the winter room opens with 3318."
    assert REVERSED not in support_of("What number opens the key safe?", sentence, "3318").reasons
    # Any other preposition after the verb still marks the other side.
    assert (
        REVERSED
        in support_of("What number opens the key safe?", "The key safe opens for 3318 guests.", "3318 guests").reasons
    )


def test_a_perfect_auxiliary_asks_for_the_subject_and_a_passive_one_for_the_object() -> None:
    sentence = "The Ropers Guild has defeated the Pilots Guild twice."
    perfect = "What guild has defeated the Pilots Guild?"
    assert (
        REVERSED
        in support_of(perfect, "The Pilots Guild has defeated the Ropers Guild twice.", "the Ropers Guild").reasons
    )
    assert REVERSED not in support_of(perfect, sentence, "The Ropers Guild").reasons
    passive = "What guild was defeated by the Ropers Guild?"
    assert REVERSED not in support_of(passive, sentence, "the Pilots Guild").reasons
    assert (
        REVERSED in support_of(passive, "The Pilots Guild defeated the Ropers Guild twice.", "The Pilots Guild").reasons
    )


def test_the_subject_before_the_asked_verb_and_a_wh_word_asked_in_place_fill_the_gap() -> None:
    question = "What body has taken the view that harbour dues fund the lamps?"
    sentence = "Since 1902 the Harbour Board has taken the view that harbour dues fund the lamps of the pier."
    assert gap(question, sentence, "Harbour Board") and not gap(question, sentence, "pier")
    in_place = "The keepers logged the gale, the fog and what other weather?"
    logged = "The keepers logged the gale, the fog and the hail, but not the snow."
    assert gap(in_place, logged, "hail") and not gap(in_place, logged, "snow")


def test_an_adjunct_asked_after_a_preposition_is_never_the_verbs_subject() -> None:
    # "In what county did Olu live?": the county the sentence puts in the subject's place is not it.
    question = "In what county did Olu live?"
    sentence = "Olu was a Tarne man who lived in Brisk county."
    assert REVERSED in support_of(question, sentence, "Tarne").reasons
    assert REVERSED not in support_of(question, sentence, "Brisk").reasons


def test_the_questions_word_pair_fills_the_gap_in_any_form_and_a_list_beside_what_it_excludes() -> None:
    # "flee to" asked, "fled to" said: the same verb in another form before the same preposition.
    assert gap("Where did the keepers flee to?", "The keepers fled to Brisk harbour before the gale.", "Brisk harbour")
    # "Besides X, what …?" is answered by what the sentence lists beside X.
    besides = "Besides fishing, what is a trade of the Tarne coast?"
    sentence = "The trades of the Tarne coast are fishing and salt panning, though tourism grows."
    assert gap(besides, sentence, "salt panning") and not gap(besides, sentence, "tourism")


def _quote_check(question: str, tokens):
    asked = Question(question)
    return check(asked, asked.expected, tokens, None, (), QUOTE)


def test_a_quote_that_says_every_term_is_checked_without_tagging_it(monkeypatch) -> None:
    # `checked` hands its quote over as TaggedOnRead: its words answer this check, so the quote
    # (about half the words `ask` tagged) is never tagged. Tagging it would fail this test.
    read = []
    monkeypatch.setattr(tagging, "recall", lambda text: read.append(text))  # asked on each tagging
    quote = "The Pellam ferry crosses to Orrin Island twice a day; the 07:10 crossing is not run in winter."
    support = _quote_check("How often does the Pellam ferry cross to Orrin Island?", TaggedOnRead(quote))
    assert support.passed and quote not in read
    monkeypatch.undo()
    assert support == _quote_check("How often does the Pellam ferry cross to Orrin Island?", tag_text(quote))


def test_a_quote_leaving_a_term_unsaid_is_tagged_and_judged_as_a_tagged_one(monkeypatch) -> None:
    # The unnamed agent of a passive needs the quote's tags: read then, with the same verdict.
    question = "Does a customer have to report damage to the hire bikes?"
    quote = "Damage to the hire bikes must be reported within 48 hours."
    read = []
    monkeypatch.setattr(tagging, "recall", lambda text: read.append(text))  # asked on each tagging
    support = _quote_check(question, TaggedOnRead(quote))
    assert quote in read
    monkeypatch.undo()
    assert "customer" in support.covered
    assert support == _quote_check(question, tag_text(quote))


def test_tagged_on_read_reads_as_the_tagged_text() -> None:
    text = "Mr. Okafor's barge, the Linnet, can't pass the lock before 6 p.m."
    lazy, tokens = TaggedOnRead(text), tag_text(text)
    assert lazy.words == tuple(t.word for t in tokens) and len(lazy) == len(tokens)
    assert list(lazy) == list(tokens) and lazy[3] == tokens[3] and list(lazy[2:5]) == list(tokens[2:5])


def test_words_the_lexicon_lacks_are_not_linked_to_a_term(monkeypatch) -> None:
    # Only a word spelt as the term could link to it (test_nlp_lexicon): the coined words are
    # never looked up, the known ones are, and the verdict is the lexicon's.
    asked = []
    monkeypatch.setattr(term_coverage, "lexicon_link", lambda lex, a, b: asked.append(b) or lex.link(a, b))
    result = support_of("Who repaired the foghorn?", "Ada Brenner repaired the zyxqor quilbat in May.", "Ada Brenner")
    assert "repaired" in asked and not {"zyxqor", "quilbat"} & set(asked)
    assert not result.passed and "the sentence does not say: foghorn" in result.reasons
