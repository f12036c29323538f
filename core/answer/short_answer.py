"""Short answers of the asked type for gs-symbolic: the lead is a span of a cited sentence, then
"because:" and the sentence; when the support check (core/answer/support.py) fails, the draft says it
cannot tell and quotes the closest evidence instead.

The answer goes through named stages (`short_draft`):
1. select sentences: the kept sentences by the question's focus terms they say, then rank (`_readings`);
2. resolve references: a tried sentence's pronouns and "the company" (core/answer/coref.py, `_read`);
3. candidate spans: the spans of the expected type (core/question/typed_spans.py) not said by the
   question, nearest the words it shares with the question (`_lead`);
4. support: the lead's check (core/answer/support.py);
5. choose: the first supported reading, else the closest (`_closer`);
6. render: the lead and its sentence (`_grounded`), or what it cannot tell (`_cannot_tell`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.answer import answerability
from core.answer.answer_forms import Draft, quoted_question
from core.answer.attribute_answers import attribute_spans, is_attribute
from core.answer.coref import Resolution, mentions_reference, resolve
from core.answer.lead_spans import extended, listed, says_class
from core.answer.passages import Evidence, Sentence, covered
from core.answer.support import (
    LEAD,
    QUOTE,
    Rules,
    Support,
    check,
    coverage,
    fills_gap,
    lead_features,
    lifespan_year,
    negated,
)
from core.kernel.events import AnswerDetail
from core.nlp.tagging import TaggedOnRead, Token, tag_text
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.intent_cues import unit_text
from core.question.relation import reversed_relation
from core.question.terms import Term
from core.question.typed_spans import Span, name_spans, typed_spans
from core.text.tokenizer import tokenize
from core.text.words import BE_FORMS
from core.units import KnowledgeUnit

# The types whose lead is a span of a sentence; yes/no, lists, reasons and comparisons keep
# their own forms (core/answer/answer_forms.py).
SHORT_TYPES = frozenset(
    (
        AnswerType.PERSON,
        AnswerType.PLACE,
        AnswerType.DATE,
        AnswerType.NUMBER,
        AnswerType.KIND,
        AnswerType.THING,
        AnswerType.MANNER,
        AnswerType.DEFINITION,
    )
)
# The types whose lead names something: after trimming it keeps a noun, a name or a number.
_NAMING = frozenset((AnswerType.PERSON, AnswerType.PLACE, AnswerType.NUMBER, AnswerType.KIND, AnswerType.THING))
_NAMING_TAGS = frozenset(("NOUN", "PROPN", "NUM"))
_HYPHENS = frozenset(("-", "\u2010", "\u2011", "\u2013"))
# Sentences read (in rank order) for the one that best covers the question, at most.
MAX_SENTENCES = 40
# Sentences of the best coverage tried for a span of the expected type, at most.
MAX_TRIED = 6
# A definition's subject ends at most this many words before what it is defined as ("X is …").
_SUBJECT_REACH = 3
# Sentences after a definition's own quoted with it, at most.
_DEFINITION_AFTER = 3
# Sentences before the cited one read for a reference's antecedent (the same unit or the one before).
_CONTEXT_BEFORE = 2
# The rules of a lead's check with no score to reach: what the other checks alone say, for
# core/answer/answerability's observers.
_UNSCORED = Rules(threshold=0.0)


@dataclass(frozen=True)
class FocusRules:
    """The unit a follow-up's conversation focus rests on (core/memory/position.Focus) and the
    rules a lead in one of its sentences is checked by; every other sentence keeps `LEAD`."""

    unit: str
    rules: Rules


def rules_for(focus: FocusRules | None, unit: str) -> Rules:
    return focus.rules if focus is not None and focus.unit == unit else LEAD


@dataclass(frozen=True)
class _Reading:
    sentence: Sentence
    tokens: tuple[Token, ...]
    resolved: dict[int, Resolution]
    covered: int
    rank: int
    # The sentence before, when this one continues it (`_continued`): said here too.
    context: tuple[str, ...] = ()


def short_draft(
    question: Question,
    expected: Expected,
    kept: Sequence[KnowledgeUnit],
    context: Sequence[KnowledgeUnit] = (),
    focus: FocusRules | None = None,
) -> tuple[Draft, AnswerDetail] | None:
    """The typed lead with its sentence when supported, else a "cannot tell" draft; None for a
    definition no sentence gives. Leads come from the kept units; `context` (the rest of their
    paragraphs) is read only for antecedents; `focus`: a conversation's focus unit and the rules a
    lead in it is checked by."""
    required = question.required_terms(expected)
    evidence = Evidence([*kept, *context])
    agent = expected.type is AnswerType.PERSON
    readings = _readings(required, evidence, {unit.id for unit in kept}, agent)  # select sentences
    best: tuple[_Reading, Span | None, Support] | None = None
    top = readings[0].covered if readings else 0
    if answerability.observing():
        _observe(question, required, expected, readings, evidence)
    for ranked in [r for r in readings if r.covered == top][:MAX_TRIED] or readings[:1]:
        # resolve references (a sentence ranked untagged is read now)
        reading = ranked if ranked.tokens else _read(ranked.sentence, evidence, required, ranked.rank, agent)
        lead = _lead(reading, question, required, expected)  # candidate spans
        rules = rules_for(focus, reading.sentence.unit.id)
        support = check(question, expected, reading.tokens, lead, _antecedent_words(reading), rules)  # support
        if support.passed and lead is not None:  # choose, then render (a passing lead is never None)
            return _grounded(reading, lead, support, expected, evidence, required)
        if best is None or _closer(support, lead, best):
            best = (reading, lead, support)
    if expected.type is AnswerType.DEFINITION and (best is None or best[1] is None):
        # No sentence says "X is …": what the evidence says about X is quoted instead (`checked`).
        return None
    if best is None:
        detail = AnswerDetail(answer_type=expected.describe(), support="failed: no kept sentence to read")
        return Draft(
            "cannot tell from the evidence: no kept sentence.", (), "typed lead: no sentence", "no sentence"
        ), detail
    return _cannot_tell(question.text, expected, *best)


def _observe(
    question: Question, terms: Sequence[Term], expected: Expected, readings: Sequence[_Reading], evidence: Evidence
) -> None:
    """Every lead of the sentences tried, and of the next best up to MAX_TRIED (measured, never
    answered from), for core/answer/answerability's observers."""
    top = readings[0].covered if readings else 0
    tried = [r for r in readings if r.covered == top][:MAX_TRIED] or list(readings[:1])
    tried += [r for r in readings if r.covered < top][: MAX_TRIED - len(tried)]
    candidates = []
    for ranked in tried:
        agent = expected.type is AnswerType.PERSON
        reading = ranked if ranked.tokens else _read(ranked.sentence, evidence, terms, ranked.rank, agent)
        lead = _lead(reading, question, terms, expected)
        if lead is None:
            continue
        context = _antecedent_words(reading)
        features = lead_features(
            question, expected, reading.tokens, lead, context, unit_text(reading.sentence.unit).split()
        )
        candidates.append(
            answerability.Candidate(
                lead.text,
                features,
                rules=check(question, expected, reading.tokens, lead, context, _UNSCORED).passed,
                supported=check(question, expected, reading.tokens, lead, context).passed,
                top=ranked.covered == top,
            )
        )
    answerability.observe(question.text, candidates)


def _closer(support: Support, lead: Span | None, best: tuple[_Reading, Span | None, Support]) -> bool:
    """Whether a failed reading is closer evidence than the best so far: more focus terms said
    with their lexicon links (the readings were ordered by terms said as written), then a lead of
    the type, then fewer failed checks; on a tie the earlier stays. A heading that only names the
    topic ("Membership.") is no closer than the sentence that states something about it."""
    _, best_lead, best_support = best
    key = (len(support.covered), lead is not None, -len(support.reasons))
    return key > (len(best_support.covered), best_lead is not None, -len(best_support.reasons))


def _readings(terms: Sequence[Term], evidence: Evidence, kept: set[str], agent: bool = False) -> list[_Reading]:
    """The kept sentences by coverage, then rank. Only a sentence with a reference in it ("He",
    "the company") is tagged to rank it, since its antecedent may say a term; the rest are ranked
    by their words and tagged when tried (`_read`): tagging all 40 cost more than retrieval."""
    readings = []
    for rank, sentence in enumerate(s for s in evidence.ranked() if s.unit.id in kept):
        if rank >= MAX_SENTENCES:
            break
        if mentions_reference(sentence.text) or (agent and _may_name_agent(sentence.text)):
            readings.append(_ranked(sentence, evidence, terms, rank, agent))
        else:
            readings.append(_Reading(sentence, (), {}, len(covered(terms, [sentence])), rank))
    readings.sort(key=lambda r: (-r.covered, r.rank))
    return readings


def _ranked(sentence: Sentence, evidence: Evidence, terms: Sequence[Term], rank: int, agent: bool) -> _Reading:
    """A sentence with a reference, ranked as `_read` ranks it. Antecedents only add words, so a
    sentence that says every term itself covers them all either way: it is ranked untagged and
    read (its references resolved, it and the sentences before it chunked) only if it is tried."""
    own = len(
        coverage(terms, [t.word for t in tag_text(sentence.text)] + _said_with(sentence, {}), linked=False).covered
    )
    if own == len(terms):
        return _Reading(sentence, (), {}, own, rank)
    return _read(sentence, evidence, terms, rank, agent)


def _read(sentence: Sentence, evidence: Evidence, terms: Sequence[Term], rank: int, agent: bool = False) -> _Reading:
    """The sentence tagged, its references resolved, and the terms it covers with them; asked
    who (`agent`), with the sentence it continues (`_continued`)."""
    tokens = tag_text(sentence.text)
    earlier, _ = evidence.around(sentence, _CONTEXT_BEFORE, 0)
    resolved = resolve(tokens, sentence.text, [s.text for s in earlier])
    context = _continued(tokens, earlier) if agent else ()
    words = [t.word for t in tokens] + _said_with(sentence, resolved) + list(context)
    return _Reading(sentence, tokens, resolved, len(coverage(terms, words, linked=False).covered), rank, context)


def _may_name_agent(text: str) -> bool:
    """Whether the sentence may be a passive naming its agent (checked on words, before tagging)."""
    words = {w.strip(".,;:!?\"'()").lower() for w in text.split()}
    return "by" in words and bool(words & BE_FORMS)


def _continued(tokens: Sequence[Token], earlier: Sequence[Sentence]) -> tuple[str, ...]:
    """The sentence before, when this one is a passive naming its agent whose subject is a noun
    that sentence names: "Every new member gets a mentor. Mentors are assigned by the education
    officer, Tom Harcourt." What the first says of mentors counts as said by the second, so its
    agent answers "Who assigns the mentors for new members?". Read only asked who: the sentence's
    subject is no agent ("Ctenophores are distinguished … by having colloblasts" must not borrow
    "sponges" from the sentence before to answer "What distinguishes sponges …?")."""
    if not earlier:
        return ()
    be = next((i for i, t in enumerate(tokens) if t.word.lower() in BE_FORMS), None)
    if not be or tokens[be - 1].tag != "NOUN" or any(t.tag == "VERB" for t in tokens[:be]):
        return ()
    verb = next((i for i in range(be + 1, len(tokens)) if tokens[i].tag != "ADV"), None)
    if verb is None or tokens[verb].tag != "VERB" or not any(t.word.lower() == "by" for t in tokens[verb + 1 :]):
        return ()
    previous = earlier[-1]
    return (previous.text,) if set(tokenize(tokens[be - 1].word)) & previous.stems else ()


def _opens_with_reference(sentence: Sentence) -> bool:
    words = sentence.text.split()
    return bool(words) and mentions_reference(words[0])


def _said_with(sentence: Sentence, resolved: dict[int, Resolution]) -> list[str]:
    """Words a sentence says without writing them: its references' antecedents, and the question
    an FAQ entry answers (its topic ends in "?"): "Report it to the warden" is about a broken gate."""
    asked = sentence.unit.topic.split() if sentence.unit.topic.rstrip().endswith("?") else []
    return [r.antecedent for r in resolved.values()] + asked


def _antecedent_words(reading: _Reading) -> list[str]:
    return _said_with(reading.sentence, reading.resolved) + list(reading.context)


def _lead(reading: _Reading, question: Question, terms: Sequence[Term], expected: Expected) -> Span | None:
    """The typed span nearest the sentence's words that the question also says. A name sharing a
    word with the question is the question's own entity, not its answer; a phrase loses the
    question's words at its edges; a pronoun stands for the name it resolves to."""
    asked, asked_stems = question.tokens, question.stems
    term_stems = {s for term in terms for s in term.stems}
    tokens = reading.tokens
    hits = [i for i, t in enumerate(tokens) if set(tokenize(t.word)) & term_stems]
    own_names = _own_names(
        reading, [_stems(asked, n) for n in name_spans(asked, question.text)], asked_stems, term_stems
    )
    candidates = list(typed_spans(tokens, reading.sentence.text, expected))
    candidates += attribute_spans(tokens, reading.sentence.text, expected, candidates)
    if expected.type in (AnswerType.PERSON, AnswerType.KIND):
        candidates += [
            Span(r.antecedent, i, i)
            for i, r in reading.resolved.items()
            if tokens[i].tag == "PRON" and (r.person or expected.type is AnswerType.KIND)
        ]
    best, best_key = None, None
    for span in candidates:
        own = tokenize(span.text)  # a pronoun's span says its antecedent
        if not own or all(s in asked_stems for s in own):
            continue
        if expected.type is AnswerType.DEFINITION and not any(
            span.first - _SUBJECT_REACH <= h < span.first for h in hits
        ):
            continue  # defines something else: "Orionctl is part of Orion" does not say what Orion is
        attribute = is_attribute(span, tokens, expected)
        slot = attribute or fills_gap(question, tokens, span, expected)
        classed = says_class(span, tokens, expected)
        if span.first not in reading.resolved and expected.type is not AnswerType.DEFINITION:
            span = _trimmed(span, tokens, asked, reading.sentence.text, expected.head)
            named = attribute or any(t.tag in _NAMING_TAGS for t in tokens[span.first : span.last + 1])
            if expected.type in _NAMING and not named:
                continue  # only a modifier is left ("stationary" of "the stationary steam engine")
        if any(n.first <= span.first and span.last <= n.last for n in own_names):
            continue
        # A year of a lifespan stands alone: asked when Zhu Shijie was born, "1249" of "(1249–1314)".
        if span.first not in reading.resolved and not (
            slot and expected.type is AnswerType.DATE and lifespan_year(question, tokens, span)
        ):
            span = extended(
                _whole_words(span, tokens, reading.sentence.text), tokens, reading.sentence.text, asked, expected
            )
        if reversed_relation(question.relation, tokens, span):
            continue
        # "Who …?" asks for someone: a code ("error code E4") is a later choice.
        coded = expected.type is AnswerType.PERSON and any(ch.isdigit() for ch in span.text)
        key = (coded, not slot, not classed, -_closeness(span, hits), span.first)
        if best_key is None or key < best_key:
            best, best_key = span, key
    if best is None or best.first in reading.resolved:
        return best
    return listed(best, tokens, reading.sentence.text, asked_stems, expected)


def _own_names(
    reading: _Reading, asked_names: Sequence[set[str]], asked_stems: frozenset[str], term_stems: set[str]
) -> list[Span]:
    """The question's own entities among the sentence's names: a name sharing a focus word with
    the question whose every word the question says ("Marta" of "Marta Quill") or that holds a
    name of the question whole ("Hereford Cathedral" asked about Hereford). A name sharing only a
    modifier is another entity: "the European Court of Justice" asked about the European Union's
    charter."""
    tokens = reading.tokens
    own = []
    for name in name_spans(tokens, reading.sentence.text):
        stems = _stems(tokens, name)
        if stems & term_stems and (stems <= asked_stems or any(n and n <= stems for n in asked_names)):
            own.append(name)
    return own


def _stems(tokens: Sequence[Token], span: Span) -> set[str]:
    return {s for t in tokens[span.first : span.last + 1] for s in tokenize(t.word)}


def _whole_words(span: Span, tokens: Sequence[Token], text: str) -> Span:
    """The span grown to whole written words: the tokenizer splits "anti-colonial" and
    "ice-sheets", and a lead must not stop inside one ("anti", "sheets")."""
    first, last = span.first, span.last
    while first > 0 and tokens[first - 1].end == tokens[first].start and _joins(tokens[first - 1].word):
        first -= 1
    while last + 1 < len(tokens) and tokens[last].end == tokens[last + 1].start and _joins(tokens[last + 1].word):
        last += 1
    # A joining hyphen at an edge joined nothing.
    while first < last and not tokens[first].word[:1].isalnum():
        first += 1
    while last > first and not tokens[last].word[-1:].isalnum():
        last -= 1
    if (first, last) == (span.first, span.last):
        return span
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _joins(word: str) -> bool:
    return word[:1].isalnum() or word in _HYPHENS


def _closeness(span: Span, hits: Sequence[int]) -> float:
    """How near the span stands to all of the question's words in the sentence, each counting
    1 / (1 + its distance): the answer sits among the words that ask for it, not next to one of
    them at the edge of another clause."""
    return sum(1 / (1 + min(abs(h - span.first), abs(h - span.last))) for h in hits if not span.first <= h <= span.last)


def _trimmed(span: Span, tokens: Sequence[Token], question: Sequence[Token], text: str, head: str) -> Span:
    """The span without the question's own words at its edges ("the river Rhine" asked "which
    river"); the asked-for class noun `head` written as part of a name stays ("Fort Beauséjour"
    asked "what fort")."""
    kept = set(tokenize(head))
    own = _own_words(question)
    first, last = span.first, span.last
    while first < last and own(tokens[first]) and not _names_head(tokens[first], kept):
        first += 1
    while last > first and own(tokens[last]) and not _names_head(tokens[last], kept):
        last -= 1
    if (first, last) == (span.first, span.last):
        return span
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _own_words(question: Sequence[Token]) -> Callable[[Token], bool]:
    """Whether a word of the sentence is one the question says: the same stems, and for a noun
    the same noun (its lemma): "sand" shares its stem with "sanding" ("the sanding hopper") but
    is another word, the answer to "What is the sanding hopper filled with?"."""
    from core.nlp import lexicon_or_none

    stems = {s for t in question for s in tokenize(t.word)}
    lex = lexicon_or_none()
    nouns = {lex.lemma(t.word.lower(), "NOUN") for t in question} if lex is not None else set()

    def own(token: Token) -> bool:
        if not set(tokenize(token.word)) <= stems:
            return False
        return lex is None or token.tag != "NOUN" or lex.lemma(token.word.lower(), "NOUN") in nouns

    return own


def _names_head(token: Token, head: set[str]) -> bool:
    return bool(head) and token.tag == "PROPN" and token.word[:1].isupper() and set(tokenize(token.word)) == head


def _detail(expected: Expected, lead: str, support: Support, reading: _Reading) -> AnswerDetail:
    return AnswerDetail(
        answer_type=expected.describe(),
        lead=lead,
        supported=support.passed,
        support=support.summary(),
        links=support.links,
        resolved=tuple(str(r) for r in reading.resolved.values()),
    )


def _grounded(
    reading: _Reading, lead: Span, support: Support, expected: Expected, evidence: Evidence, terms: Sequence[Term]
) -> tuple[Draft, AnswerDetail]:
    sentence = reading.sentence
    because = [sentence]
    if expected.type is AnswerType.DEFINITION:
        # A definition goes on in the unit's next sentences about the same thing ("It stores …").
        _, later = evidence.around(sentence, 0, _DEFINITION_AFTER)
        because += [
            s for s in later if s.unit.id == sentence.unit.id and (covered(terms, [s]) or _opens_with_reference(s))
        ]
    said = " ".join(s.cited() for s in because)
    if reading.resolved:
        said += f" ({'; '.join(str(r) for r in reading.resolved.values())})"
    method = f"{expected.type.value} lead from {sentence.unit.id}; support {support.summary()}"
    return Draft.led(lead.text, said, (sentence.unit.id,), method), _detail(expected, lead.text, support, reading)


def _cannot_tell(
    question: str, expected: Expected, reading: _Reading, lead: Span | None, support: Support
) -> tuple[Draft, AnswerDetail]:
    why = "; ".join(support.reasons)
    text = (
        f'cannot tell from the evidence {_what(expected)} answers "{quoted_question(question)}" ({why}). '
        f"The closest evidence says: {reading.sentence.cited()}"
    )
    draft = Draft(text, (reading.sentence.unit.id,), f"typed lead unsupported: {why}", cannot_tell=why)
    return draft, _detail(expected, lead.text if lead else "", support, reading)


def _what(expected: Expected) -> str:
    kind = expected.head if expected.type is AnswerType.KIND and expected.head else expected.type.value
    return f"which {kind}"


def _quote_allowance(expected: Expected, terms: Sequence[Term]) -> int | None:
    """Unsaid terms a quoted answer may leave: half for a reason (said in words of its own, as
    the explanation form allows), else the quote default. (None unsaid for a definition quoted
    because no sentence says "X is …" measured 0.2 F1 better on the SQuAD sample but made
    every such question weak, and each weak answer costs a replan: ask at 100k 20 → 30 ms.)"""
    return len(terms) // 2 if expected.type is AnswerType.REASON else None


def checked(question: Question, expected: Expected, draft: Draft, units: Sequence[KnowledgeUnit] = ()) -> Draft:
    """A draft of another form (a list, a reason, quoted claims) under the same check, without a
    typed lead: the quoted evidence must cover the question's focus terms and not be negated
    where the question is not (or the reverse). Otherwise it cannot tell, and quotes it."""
    if draft.cannot_tell:
        return draft
    terms = question.required_terms(expected)
    # A quote states what it states: only a question asking about what is *not* so is flipped
    # by evidence that does not say "not".
    # The cited units' other sentences set the scene a list or a reason is quoted from.
    scene = [word for unit in units if unit.id in draft.cited for word in unit_text(unit).split()]
    # A why-question's "not" is part of what is explained ("why did she decide not to …"); the
    # reason need not repeat it.
    reason = expected.type is AnswerType.REASON
    negation = negated(question.tokens) and not reason
    # A reason is said around what it explains, in words of its own: like the explanation form
    # (answer_forms.explanation), half the question's terms are enough.
    rules = replace(QUOTE, negation=negation, allowed_missing=_quote_allowance(expected, terms))
    # Tagged only if the check reads a tag (a term its words leave unsaid).
    support = check(question, expected, TaggedOnRead(draft.text), None, scene, rules)
    detail = AnswerDetail(
        answer_type=expected.describe(), supported=support.passed, support=support.summary(), links=support.links
    )
    if support.passed:
        return replace(draft, detail=detail)
    why = "; ".join(support.reasons)
    text = f'cannot tell from the evidence what answers "{quoted_question(question.text)}" ({why}). The closest evidence says: {draft.text}'
    return Draft(text, draft.cited, f"{draft.method}; unsupported: {why}", cannot_tell=why, detail=detail)


def verify_lead(
    question: Question,
    lead: str,
    units: Sequence[KnowledgeUnit],
    context: Sequence[KnowledgeUnit] = (),
    focus: FocusRules | None = None,
) -> Support | None:
    """The support check on a finished answer's lead (`GsResult.lead`) against the units it cites,
    for val-grounded: whichever solver wrote it, the lead must stand in a cited sentence and pass.
    `context`: the other units the solver read (kept and their paragraphs), whose sentences
    resolve a cited sentence's pronouns as they did for the solver ("She left her maps …" after
    "… founded by Agnes Pryor"), but never hold the lead. None when the question asks for no
    short lead or the answer has none."""
    expected = question.expected
    if expected.type not in SHORT_TYPES or not lead or "\n" in lead:
        return None
    cited = {unit.id for unit in units}
    evidence = Evidence([*units, *(unit for unit in context if unit.id not in cited)])
    failed = None
    for sentence in evidence.ranked():
        if sentence.unit.id not in cited:
            break  # the context units come after the cited ones
        tokens = tag_text(sentence.text)
        earlier, _ = evidence.around(sentence, _CONTEXT_BEFORE, 0)
        resolved = resolve(tokens, sentence.text, [s.text for s in earlier])
        span = _span_of(lead, tokens, sentence.text, resolved)
        if span is None:
            continue
        continued = _continued(tokens, earlier) if expected.type is AnswerType.PERSON else ()
        said = _said_with(sentence, resolved) + list(continued)
        support = check(question, expected, tokens, span, said, rules_for(focus, sentence.unit.id))
        if support.passed:
            return support
        failed = failed or support
    return failed or Support(False, (f'the lead "{lead}" is in no cited sentence',))


def _span_of(lead: str, tokens: Sequence[Token], text: str, resolved: dict[int, Resolution]) -> Span | None:
    at = text.find(lead)
    if at >= 0:
        inside = [i for i, t in enumerate(tokens) if t.start >= at and t.end <= at + len(lead)]
        return Span(lead, inside[0], inside[-1]) if inside else None
    return next((Span(lead, i, i) for i, r in resolved.items() if r.antecedent == lead), None)
