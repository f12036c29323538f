"""The support check shared by gs-symbolic and val-grounded: does the cited sentence say the lead
answers the question?

It passes when (1) the sentence, with its references resolved (core/answer/coref.py), covers the
question's focus terms (core/answer/term_coverage.py) — as written, as an inflection, or through a lexicon link that is shown;
(2) a lead of the expected type was found (core/question/typed_spans.py) and it is not a word of the
question; (3) no negation in the sentence flips what the question asks (or the reverse); (4) the
relation holds in the asked direction: asked "Who did X beat?", a sentence where the lead beat X
does not answer. Otherwise the answer is weak and says it cannot tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.answer.attribute_answers import attribute_link, matter_link
from core.answer.question_gap import fills_gap
from core.answer.term_coverage import Coverage, coverage, lexicon_link
from core.nlp import lexicon_or_none
from core.nlp.cardinals import cardinal_value
from core.nlp.tagging import Token, words_of
from core.question.answer_types import AnswerType, Expected
from core.question.relation import reversed_relation
from core.question.terms import Term
from core.question.typed_spans import Span
from core.text.tokenizer import tokenize
from core.text.words import BE_FORMS, NEGATIONS

if TYPE_CHECKING:
    from core.question import Question

# A list or a reason is quoted whole, so the reader sees what it is about: one unsaid word of
# three is allowed there ("the three causes of the failure" / "… of the incident").
QUOTE_LENIENT_FROM_TERMS = 3
# A lead is supported when support_score() reaches this: every focus term said, or one unsaid
# among six or more. Chosen by the procedure of docs/answers.md (the lowest threshold within 0.1
# F1 point of the best SQuAD 2.0 F1 over the development articles; each fold of articles left
# out in turn picks 0.81–0.86).
SUPPORT_THRESHOLD = 0.81
# A negation this many words before the first word the answer rests on still governs it ("did not
# at first agree").
_NEGATION_REACH = 3
# Focus words this many words from a lead or closer stand around it (lead_features' near_share).
_NEAR = 5


@dataclass(frozen=True)
class Support:
    """Whether a sentence supports an answer, why not where it does not, and the terms that decided."""

    passed: bool
    reasons: tuple[str, ...] = ()
    covered: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    # support_score() of a lead; 0 where no lead was checked.
    score: float = 0.0

    def summary(self) -> str:
        terms = f"covers {len(self.covered)} of {len(self.covered) + len(self.missing)} focus terms"
        if self.score:
            terms = f"support {self.score:.2f}; {terms}"
        missing = f" (missing: {', '.join(self.missing)})" if self.missing else ""
        verdict = "passed" if self.passed else "failed: " + "; ".join(self.reasons)
        return f"{verdict}; {terms}{missing}"


def support_score(said: int, asked: int) -> float:
    """How well a sentence supports a lead, in [0, 1]: the share of the question's focus terms it
    says (as written, inflected, or through a lexicon link that is shown). Weighting terms by
    idf, or adding whether the lead stands in the question's gap (fills_gap), did not raise F1
    on the development articles (docs/answers.md): the gap ranks leads instead."""
    return round(said / asked, 4) if asked else 1.0


def negated(tokens: Sequence[Token]) -> bool:
    return _negation_in(words_of(tokens))


def _negated_near(words: Sequence[str], terms: Sequence[Term], lead: Span | None) -> bool:
    """A negation among the words the answer rests on (the sentence's `words`): from a few words
    before the first of the question's words (or the lead) to the last of them. A "not" in
    another clause of a long sentence says nothing about this one."""
    stems = {s for term in terms for s in term.stems}
    at = [i for i, word in enumerate(words) if set(tokenize(word)) & stems]
    if lead is not None:
        at += [lead.first, lead.last]
    if not at:
        return _negation_in(words)
    start, end = max(0, min(at) - _NEGATION_REACH), max(at) + 1
    return _negation_in(words[start:end])


def _negation_in(words: Sequence[str]) -> bool:
    return any(word.lower() in NEGATIONS for word in words)


@dataclass(frozen=True)
class Rules:
    """How strictly a check judges. A typed lead (`LEAD`) must be there and is scored against
    `threshold`; a quote (a list, a reason, quoted claims: `QUOTE`) needs no lead and may leave
    one unsaid term of `lenient_from` or more, or `allowed_missing` when set; `negation`: a
    negation on one side only fails it."""

    lead_required: bool = True
    negation: bool = True
    lenient_from: int = QUOTE_LENIENT_FROM_TERMS
    allowed_missing: int | None = None
    threshold: float = SUPPORT_THRESHOLD


LEAD = Rules()
QUOTE = Rules(lead_required=False)


def check(
    question: Question,
    expected: Expected,
    sentence: Sequence[Token],
    lead: Span | None,
    context_words: Sequence[str] = (),
    rules: Rules = LEAD,
) -> Support:
    """The support of `lead` in `sentence` for the question's terms under the answer type
    `expected` (`context_words`: the antecedents of the sentence's references, which count as
    said by it)."""
    terms = question.required_terms(expected)
    lead_required, allowed_missing = rules.lead_required, rules.allowed_missing
    found = said_by(question, terms, sentence, context_words)
    covered, missing, links = found.covered, found.missing, found.links
    reasons = [f"the sentence says the opposite: {via}" for via in found.opposed]
    exact = [t.word for t in terms if t.word in missing and _exact(t)]
    # A lead is scored; a quote (a list, a reason) keeps its own allowance of unsaid terms.
    scored = lead is not None and lead_required and allowed_missing is None
    score = support_score(len(covered), len(terms)) if scored else 0.0
    if scored:
        unsupported = score < rules.threshold
    else:
        allowed = (1 if len(terms) >= rules.lenient_from else 0) if allowed_missing is None else allowed_missing
        unsupported = len(missing) > allowed
    if unsupported or exact:
        reasons.append(f"the sentence does not say: {', '.join(missing)}")
    if lead is None and lead_required:
        reasons.append(f"no {expected.type.value} in the sentence")
    elif lead is not None and _asked_words(lead, question):
        reasons.append(f'the lead "{lead.text}" only repeats the question')
    elif lead is not None and expected.type in (AnswerType.KIND, AnswerType.PLACE) and expected.head:
        # Asked "which country", a common-noun place must be a country ("the floodplain" is not).
        kind = _kind_link(lead, sentence, expected.head)
        if kind is None:
            reasons.append(f'the lead "{lead.text}" is not said to be a kind of {expected.head}')
        elif kind:
            links = (*links, kind)
    said = _negated_near(words_of(sentence), terms, lead)
    if rules.negation and said != negated(question.tokens):
        side = "sentence" if said else "question"
        reasons.append(f"only the {side} is negated")
    if lead is not None and reversed_relation(question.relation, sentence, lead):
        reasons.append("the sentence states the relation in the other direction")
    return Support(not reasons, tuple(reasons), covered, missing, links, score)


def said_by(
    question: Question, terms: Sequence[Term], sentence: Sequence[Token], context_words: Sequence[str] = ()
) -> Coverage:
    """The focus terms the sentence says, with its references' antecedents (`context_words`) and
    the unnamed agent of a passive counted as said."""
    found = coverage(terms, [*words_of(sentence), *context_words])
    unsaid = [t for t in terms if t.word in found.missing and not _exact(t)]
    said = {
        a: f"{a}: the agent the passive sentence leaves unnamed"
        for a in unnamed_agents(question.tokens, sentence, unsaid)
    }
    if unsaid:
        # A lifespan ("born"/"died" said by its years) is read only for a term left unsaid: a
        # sentence saying every term never imports the reader (issue 41).
        from core.answer.lifespans import said_end

        names = {s for t in terms if t.is_name for s in t.stems}
        said |= {t.word: link for t in unsaid if t.word not in said and (link := said_end(t.stems, sentence, names))}
    if not said:
        return found
    return replace(
        found,
        covered=(*found.covered, *said),
        missing=tuple(m for m in found.missing if m not in said),
        links=(*found.links, *said.values()),
    )


_TYPES = {
    "type_person": AnswerType.PERSON,
    "type_place": AnswerType.PLACE,
    "type_date": AnswerType.DATE,
    "type_number": AnswerType.NUMBER,
    "type_kind": AnswerType.KIND,
    "type_thing": AnswerType.THING,
}


def lead_features(
    question: Question,
    expected: Expected,
    sentence: Sequence[Token],
    lead: Span,
    context_words: Sequence[str] = (),
    paragraph_words: Sequence[str] = (),
) -> dict[str, float]:
    """What an answerability model could weigh about a lead (core/answerability.FEATURES), for
    scripts/train_answerability.py: how the unsaid terms relate to the sentence and its paragraph,
    the lead's type, place and shape. Not used to decide: the learned model did not beat the
    support score on held-out articles (docs/answers.md)."""
    terms = question.required_terms(expected)
    found = said_by(question, terms, sentence, context_words)
    missing = [t for t in terms if t.word in found.missing]
    tag_of = {s: t.tag for t in question.tokens for s in tokenize(t.word)}
    tags = [next((tag_of[s] for s in t.stems if s in tag_of), "") for t in missing]
    paragraph = {s for word in paragraph_words for s in tokenize(word)}
    stems = {s for term in terms for s in term.stems}
    hits = [i for i, t in enumerate(sentence) if set(tokenize(t.word)) & stems and not lead.first <= i <= lead.last]
    away = {i: min(abs(i - lead.first), abs(i - lead.last)) for i in hits}
    near = {s for i in hits if away[i] <= _NEAR for s in tokenize(sentence[i].word)}
    inside = sentence[lead.first : lead.last + 1]
    values = {
        "share": support_score(len(found.covered), len(terms)),
        "all_said": float(not missing),
        "unsaid": float(len(missing)),
        "unsaid_exact": float(sum(_exact(t) for t in missing)),
        "unsaid_noun": float(sum(tag in ("NOUN", "PROPN") for tag in tags)),
        "unsaid_verb": float(sum(tag == "VERB" for tag in tags)),
        "unsaid_other": float(sum(tag not in ("NOUN", "PROPN", "VERB") for tag in tags)),
        "unsaid_synonym": float(sum(t.word in found.related for t in missing)),
        "unsaid_in_paragraph": float(sum(t.found_in(paragraph) for t in missing)),
        "fills_gap": float(fills_gap(question, sentence, lead, expected)),
        "lead_distance": math.log1p(min(away.values(), default=len(sentence))),
        "near_share": sum(bool(set(t.stems) & near) for t in terms) / len(terms) if terms else 1.0,
        "lead_words": math.log1p(len(inside)),
        "lead_name": float(any(t.tag in ("PROPN", "NUM") for t in inside)),
        "terms": math.log1p(len(terms)),
        "sentence_words": math.log1p(len(sentence)),
        "question_words": math.log1p(len(question.tokens)),
    }
    values.update({name: float(expected.type is kind) for name, kind in _TYPES.items()})
    return values


def unnamed_agents(question: Sequence[Token], sentence: Sequence[Token], unsaid: Sequence[Term]) -> tuple[str, ...]:
    """Unsaid terms that are the subject of the question's verb when the sentence states that verb
    in the passive without "by" ("does a customer have to report damage?" / "damage must be
    reported within 48 hours"): a passive leaves its agent unnamed, so not saying it is no
    sign of another fact. Names never count (core of an entity swap)."""
    aux = next((i for i, t in enumerate(question) if t.tag == "AUX"), None)
    if aux is None or not unsaid or question[aux].word.lower() in BE_FORMS:
        return ()  # "What are flagella called?" is passive itself: its subject is no agent
    # The sentence's passive verbs without "by"; the question's verb is the word after the
    # auxiliary that says one of them, whatever its tag (after a fronted "Can a customer" the
    # tagger calls "return" a noun).
    # A word after a form of "be" is read for its tag: a sentence without one is not tagged.
    words = words_of(sentence)
    after_be = [i for i in range(1, len(words)) if words[i - 1].lower() in BE_FORMS]
    passive = {
        s
        for i in after_be
        if sentence[i].tag == "VERB" and not any(w.lower() == "by" for w in words[i + 1 :])
        for s in tokenize(words[i])
    }
    verb = next((i for i in range(aux + 2, len(question)) if set(tokenize(question[i].word)) & passive), None)
    if verb is None:
        return ()
    subject = {s for t in question[aux + 1 : verb] if t.tag == "NOUN" for s in tokenize(t.word)}
    return tuple(t.word for t in unsaid if set(t.stems) <= subject)


def _kind_link(lead: Span, sentence: Sequence[Token], head: str) -> str | None:
    """Why the lead is an X, asked "which X": it is a name (what kind of thing a name is, the
    sentence says around it), it contains X ("the Latin monastery"), or the lexicon says its
    noun is a kind of X ("water pump" → device); "" when no link is needed, None when it is no X."""
    words = sentence[lead.first : lead.last + 1]
    if any(t.tag in ("PROPN", "NUM") or (t.word[:1].isupper() and i + lead.first > 0) for i, t in enumerate(words)):
        return ""  # a name or a code or number names its thing
    if set(tokenize(head)) & {s for t in words for s in tokenize(t.word)}:
        return ""
    if _headed_by(lead, sentence, head):
        return ""  # "oxalic acid" of "oxalic acid treatment", asked "what treatment"
    if len(words) == 1 and words[0].tag == "ADJ":
        return attribute_link(words[0].word, head)  # "blue" asked "what colour"
    lex = lexicon_or_none()
    nouns = [t.word.lower() for t in words if t.tag == "NOUN"]
    if lex is None or not nouns:
        return None
    link = lexicon_link(lex, nouns[-1], head.lower())
    if link is not None and link.kind == "hypernym" and f"{nouns[-1]} \u2192" in link.via:
        return link.via
    return matter_link(nouns[-1], head)  # "stainless steel" asked "what material"


def _headed_by(lead: Span, sentence: Sequence[Token], head: str) -> bool:
    """The lead lost the asked-for class noun at its end: its noun phrase ends in X."""
    last = lead.last
    while last + 1 < len(sentence) and sentence[last + 1].tag in ("NOUN", "PROPN"):
        last += 1
    return last > lead.last and set(tokenize(sentence[last].word)) == set(tokenize(head))


def _exact(term: Term) -> bool:
    """Names and numbers (in digits or in words) are never paraphrased: a sentence without them
    is about something else. "one" is a pronoun as often ("one of the allies")."""
    return (
        term.is_name
        or any(ch.isdigit() for ch in term.word)
        or (term.word != "one" and cardinal_value(term.word) is not None)
    )


def _asked_words(lead: Span, question: Question) -> bool:
    own = tokenize(lead.text)  # a pronoun's lead is its antecedent, not the pronoun
    return not own or all(s in question.stems for s in own)
