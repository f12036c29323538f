"""Question analysis shared by the planner and the symbolic plugins: act, multi-hop and output cues,
focus terms, and the split of an input into context sentences and questions.

Pure and deterministic: only the wording of the question matters, never the KB, so the planner
and every plugin see the same analysis of the same question. Every cue below is a query-form
phrase ("why", "how do I", "versus"); none names anything a KB could be about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from core.question.indirect import inner_question
from core.text.sentences import period_continues
from core.text.tokenizer import stem, tokenize
from core.text.words import CUE_YES_NO_OPENERS, FORM_WORDS, INSTRUCTION_OPENERS, QUESTION_OPENERS
from core.units import Act, KnowledgeUnit


def _cue(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)


# First match wins, so the order settles overlaps: "what is the difference" is compare, not
# define; "why does it fail" is diagnose; "why" outranks the topical implement words ("why
# install it?") while the verb "explain" does not ("explain how to install it" asks for steps).
_ACT_CUES: tuple[tuple[Act, re.Pattern[str]], ...] = (
    (Act.COMPARE, _cue(r"compar\w*", "versus", "vs", r"differen\w*", "differ", "better", "worse", r"trade-?offs?")),
    (
        Act.RECOMMEND,
        _cue(
            r"recommend\w*",
            r"suggest\w*",
            r"advis\w*",
            r"(?<!how )should (?:i|we)",
            r"which \w* ?should",
            "what should",
            r"best (?:option|choice)",
        ),
    ),
    (
        Act.DIAGNOSE,
        _cue(
            r"diagnos\w*",
            r"troubleshoot\w*",
            r"errors?",
            r"fail\w*",
            "not working",
            r"doesn'?t work",
            "broken",
            r"crash\w*",
        ),
    ),
    (Act.EXPLAIN, _cue("why", "how come", "reason why")),
    (
        Act.IMPLEMENT,
        _cue(
            r"how (?:do|can|should|would) (?:i|we|you)",
            "how to",
            r"steps?",
            r"install\w*",
            r"configur\w*",
            "set ?up",
            r"deploy\w*",
            r"implement\w*",
        ),
    ),
    (
        Act.VERIFY,
        _cue(
            r"verif\w*",
            r"check (?:whether|if|that)",
            r"is it (?:allowed|permitted|ok|okay)",
            "allowed",
            "permitted",
            r"qualif\w*",
            r"eligib\w*",
            r"complian\w*",
            "comply",
            r"polic(?:y|ies)",
        ),
    ),
    (Act.EXPLAIN, _cue(r"explain\w*", r"reasons?", "what causes", "how does", "how do")),
    (Act.EVALUATE, _cue(r"evaluat\w*", r"assess\w*", r"how (?:good|well|effective|reliable)", "pros and cons")),
    # "what does X mean" with X up to 12 words: `.+` rescanned the rest of the question from every
    # "what does", quadratic in its length; \S and \s are disjoint, so each word is matched once.
    (Act.DEFINE, _cue("what (?:is|are)", r"defin\w*", "meaning", r"what does (?:\S+\s+){1,12}?mean", "stands? for")),
    (Act.IDENTIFY, _cue("who", "whom", "which", "identify", r"name (?:the|all)")),
    (Act.DESCRIBE, _cue(r"describ\w*", "overview", "tell me about", r"summar\w*")),
)
DEFAULT_ACT = Act.EXPLAIN

_MULTI_HOP = _cue(
    "why",
    r"depend\w*",
    r"relevan\w*",
    r"leads? to",
    "led to",
    r"caus\w*",
    "because",
    r"chains?",
    r"results? in",
    r"indirect\w*",
    r"transitive\w*",
)

# Explicit answer-shape requests beat the act's default shape.
_SHAPE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("yes_no", _cue("yes or no", "yes/no", "yes or no only")),
    ("one_word", _cue("one word", "single word")),
    ("number", _cue("how many", "how much", "number of")),
    ("list", _cue("list", "enumerate", "name all", "what are the", r"in (?:what|which) order")),
)
_ACT_OUTPUT: dict[Act, str] = {
    Act.COMPARE: "comparison_table",
    Act.EXPLAIN: "causal_explanation",
    Act.RECOMMEND: "recommendation",
    Act.DIAGNOSE: "diagnosis",
    Act.IMPLEMENT: "steps",
    Act.VERIFY: "yes_no",
    Act.DEFINE: "definition",
    Act.EVALUATE: "assessment",
    Act.IDENTIFY: "name",
    Act.DESCRIBE: "summary",
}

_WORD_EDGE = ".,;:!?()[]{}\"'`"


@lru_cache(maxsize=1)
def _form_words() -> frozenset[str]:
    """Stemmed on first use, so importing this module does not load the stemmer."""
    return frozenset(stem(word) for word in FORM_WORDS)


@dataclass(frozen=True)
class QuestionCues:
    """What a question asks for. `focus_terms` are the distinct content stems (for ranking);
    `focus_words` the distinct written words they come from (for coverage and messages)."""

    act: Act
    act_cue: str
    multi_hop: bool
    multi_hop_cue: str
    comparison: bool
    compared: tuple[str, ...]
    focus_terms: tuple[str, ...]
    focus_words: tuple[str, ...]
    output: str


# The act cue of a question offering alternatives ("Is X or Y faster?"): it asks which, not how they differ.
ALTERNATIVES = "alternatives"


def question_cues(question: str) -> QuestionCues:
    act, act_cue = detect_act(question)
    compared = compared_entities(question)
    if not act_cue and len(compared) >= 2:
        # With no other cue, "Is X or Y faster?" sets two things against each other.
        act, act_cue = Act.COMPARE, ALTERNATIVES
    hop = _MULTI_HOP.search(question)
    terms, words = focus_terms(question)
    return QuestionCues(
        act=act,
        act_cue=act_cue,
        multi_hop=hop is not None,
        multi_hop_cue=hop.group().lower() if hop else "",
        comparison=act is Act.COMPARE or len(compared) >= 2,
        compared=compared,
        focus_terms=terms,
        focus_words=words,
        output=output_hint(question, act),
    )


def detect_act(question: str) -> tuple[Act, str]:
    """The act of the first cue group that matches, with the matched phrase; else the default."""
    for act, pattern in _ACT_CUES:
        match = pattern.search(question)
        if match:
            return act, match.group().lower()
    return DEFAULT_ACT, ""


def output_hint(question: str, act: Act) -> str:
    for hint, pattern in _SHAPE_CUES:
        if pattern.search(question):
            return hint
    words = question.lower().split()
    # "Is X part of Y?" wants yes or no; "Is X or Y better?" offers alternatives instead.
    if words and words[0] in CUE_YES_NO_OPENERS and " or " not in f" {question.lower()} ":
        return "yes_no"
    return _ACT_OUTPUT[act]


def focus_terms(question: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Distinct content stems and distinct content words, each in order of first use."""
    stems: dict[str, None] = {}
    words: dict[str, None] = {}
    for raw in question.split():
        word = raw.strip(_WORD_EDGE).lower().removesuffix("'s")
        content = _content_stems(word)
        if content:
            words[word] = None
            stems.update(dict.fromkeys(content))
    return tuple(stems), tuple(words)


def _content_stems(word: str) -> list[str]:
    """The word's stems minus form words: the whole first, then a hyphenated word's parts."""
    return [term for term in tokenize(word) if term not in _form_words()]


# Each is tried once, from the start of the single-spaced question; the atomic `(?>.*?...)`
# commits to the first "between"/"compare", as a later one can only match where the first does.
# search() retried every start: quadratic in the length, cubic in a whitespace run.
_COMPARED = (
    re.compile(r"(?>.*?\bbetween )(?P<a>.+?) and (?P<b>.+)", re.IGNORECASE),
    re.compile(r"(?>.*?\bcompar\w* )(?P<a>.+?) (?:and|with|to|against|versus|vs\.?) (?P<b>.+)", re.IGNORECASE),
    re.compile(
        r"(?P<a>.+?)\s+(?:versus|vs\.?|or|compared (?:to|with)|better than|worse than)\s+(?P<b>.+)", re.IGNORECASE
    ),
)


def compared_entities(question: str) -> tuple[str, ...]:
    """The two phrases a comparison sets against each other, trimmed to their content words."""
    # No line breaks or whitespace runs, so `.` spans the whole question and `\s+` is one space.
    text = " ".join(question.split()).rstrip("?.!")
    for pattern in _COMPARED:
        match = pattern.match(text)
        if match:
            left = _phrase(reversed(match.group("a").split()))[::-1]
            right = _phrase(match.group("b").split())
            if left and right:
                return " ".join(left), " ".join(right)
    return ()


def _phrase(words: Iterable[str]) -> list[str]:
    """Content words walking away from the comparison word, up to the first stopword or form word
    after them, so "the Orion scheduler in production" yields "Orion scheduler"."""
    out: list[str] = []
    for word in words:
        bare = word.strip(_WORD_EDGE)
        if tokenize(bare) and stem(bare.lower()) not in _form_words():
            out.append(bare)
        elif out:
            break
    return out


# --- splitting an input into context sentences and questions ---------------------------------

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_NEXT_CHAR = re.compile(r"\S?")
# Possessive and single `\s` where neighbouring quantifiers overlap (`\s+[^,]+`, `\s*.+`): retrying
# each split of a long whitespace run is quadratic. The context is stripped where it is used, and
# a sentence never ends in whitespace, so the matches are the same.
_LEAD_CLAUSE = re.compile(
    r"^(?:given|assuming|suppose|supposing|knowing|considering)(?: that)?\s(?P<context>[^,]++),\s*+(?P<rest>.+)$",
    re.IGNORECASE,
)
# Leading whitespace is taken only where its run begins: from inside the run `\s+` would rescan
# the rest of it at each character, and a match from inside is also one from its beginning, which
# comes first. (A match ends after a whole run, so a ";" right after one still starts a match.)
_SUB_QUESTION = re.compile(r"(?<!\s)\s++and also\s+|(?:(?<!\s)\s++)?;\s*(?:and\s+)?also,?\s+", re.IGNORECASE)


def split_input(text: str) -> tuple[list[str], list[str]]:
    """Context sentences (each ending in punctuation) and question parts, in input order.

    A sentence is a question when it ends in "?" or opens with a question word or a request
    verb; a leading "Given that X," clause is context. When nothing reads as a question, the
    whole input is the question, so keyword queries still work.
    """
    context: list[str] = []
    questions: list[str] = []
    for sentence in _sentences(text.strip()):
        lead = _LEAD_CLAUSE.match(sentence)
        if lead:
            context.append(_terminated(lead.group("context"), "."))
            sentence = lead.group("rest")
        if _is_question(sentence):
            questions.extend(_sub_questions(inner_question(sentence) or sentence))
        elif questions and _is_answer_instruction(sentence):
            # "Answer Yes or No." shapes the question before it; as context it would become
            # evidence and leave the question without its constraint.
            questions[-1] = f"{questions[-1]} {sentence.strip()}"
        elif sentence.strip():
            context.append(_terminated(sentence.strip(), "."))
    if not questions and text.strip():
        return [], [text.strip()]
    return context, questions


def _next_char(text: str, at: int) -> str:
    following = _NEXT_CHAR.match(text, at)
    assert following is not None  # `?` matches the empty string
    return following.group()


def _sentences(text: str) -> list[str]:
    """Split after . ? or ! and whitespace, except after an abbreviation or an initial ("Y. pestis")."""
    sentences = []
    begin = 0
    for gap in _SENTENCE_END.finditer(text):
        period = gap.start() - 1
        if text[period] == "." and period_continues(text, period, _next_char(text, gap.end())):
            continue
        sentences.append(text[begin : gap.start()])
        begin = gap.end()
    sentences.append(text[begin:])
    return sentences


def _is_answer_instruction(sentence: str) -> bool:
    words = sentence.strip().split()
    return bool(words) and words[0].lower().strip(",:") in INSTRUCTION_OPENERS


def _is_question(sentence: str) -> bool:
    words = sentence.strip().split()
    return bool(words) and (sentence.rstrip().endswith("?") or words[0].lower().strip(",") in QUESTION_OPENERS)


def _sub_questions(sentence: str) -> list[str]:
    mark = "?" if sentence.rstrip().endswith("?") else "."
    parts = [part.strip() for part in _SUB_QUESTION.split(sentence) if part.strip()]
    return [_terminated(part[0].upper() + part[1:], mark) for part in parts]


def _terminated(text: str, mark: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + mark


# --- coverage of focus terms by answer text -------------------------------------------------

# An answer leaving more than half of the question's focus terms unmentioned does not answer it;
# gs-symbolic calls such evidence weak and val-grounded rejects such answers, by the same rule.
MIN_FOCUS_COVERAGE = 0.5


@dataclass(frozen=True)
class Coverage:
    """Which focus terms some text mentions; `covered`/`missing` hold the written words."""

    covered: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def enough(self) -> bool:
        total = len(self.covered) + len(self.missing)
        return total == 0 or len(self.covered) >= MIN_FOCUS_COVERAGE * total

    def summary(self) -> str:
        total = len(self.covered) + len(self.missing)
        missing = f"; missing: {', '.join(self.missing)}" if self.missing else ""
        return f"{len(self.covered)} of {total} focus terms covered{missing}"


# The stems of this many texts are kept, each of at most STEMS_KEPT_CHARS (a longer one is
# tokenized on each call): one answer's units and draft are checked by the strategies, the
# weakness check and the validator, ~2 calls a text (ask @100k: 640 calls, 308 texts).
STEMS_KEPT = 512
STEMS_KEPT_CHARS = 20_000


def focus_coverage(cues: QuestionCues, texts: Iterable[str]) -> Coverage:
    seen: set[str] = set()
    for text in texts:
        seen.update(_kept_stems(text) if len(text) <= STEMS_KEPT_CHARS else _stems_said(text))
    hit = {word: _mentioned(_content_stems(word), seen) for word in cues.focus_words}
    return Coverage(
        covered=tuple(word for word, found in hit.items() if found),
        missing=tuple(word for word, found in hit.items() if not found),
    )


def _stems_said(text: str) -> frozenset[str]:
    # Relation names such as relevant_for read as words, so "relevant" finds them.
    return frozenset(tokenize(text.replace("_", " ")))


_kept_stems = lru_cache(maxsize=STEMS_KEPT)(_stems_said)


def _mentioned(stems: list[str], seen: set[str]) -> bool:
    """The whole word is there, or every part of a hyphenated one ("x-ray" as "x ray"); a lone
    part such as the "2" of "shp-2" is not enough."""
    return stems[0] in seen or (len(stems) > 1 and all(part in seen for part in stems[1:]))


def unit_text(unit: KnowledgeUnit) -> str:
    """The unit's words that can answer a question: title, topic, claim or procedure, triple."""
    triple = (unit.subject, unit.relation.value if unit.relation else None, unit.object)
    return " ".join(part for part in (unit.title, unit.topic, unit.body, *triple) if part)
