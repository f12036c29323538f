"""What an answer asserts, and how labelled checks judge it.

An answer is judged by its LEAD, the short answer it leads with, never by the evidence it
quotes: a word anywhere in a quoted sentence says nothing about whether the answer is right.
The lead is read from the answer's structure, never parsed back out of its text: the lead its
one part was built with (`AnswerPart.lead`: our solver's, or an LLM's as core/answer/llm_answer.py
read it), unit citations "[src::chunk-…::unit-…]" removed. An answer with no lead (a quote, one
block per part) leads with its text's first sentence: the insufficient-evidence preface and
citations removed, its first line, up to the first sentence end. Our answers write the lead as
"LEAD, because: …", so this is the LEAD that `../shared/qa/squad2-dev/judge.py` reads from the
text, and `mrptui eval --squad` and that script score the same answer alike (tests/cli/test_squad.py).

An answer that abstains (status not `grounded`, or one of the engine's refusal phrases) has an
empty lead: a refusal or "cannot tell" never satisfies a mention check.

SQuAD scoring is the official v2.0 evaluation's: normalise (lower case, no punctuation, no
a/an/the, single spaces), exact match, and token F1 (an empty side scores 1 only when both are).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from core.text.words import JUDGE_ABBREVIATIONS

if TYPE_CHECKING:
    from core.eval.queries import QuerySpec
    from core.kernel.events import AnswerReady

# The engine's own refusal wording (core/plugins/solve.py, core/kernel/revisions.py, answer_forms.py).
# Only these phrases count: "insufficient evidence" also occurs in quoted article text.
REFUSAL = re.compile(
    r"the evidence is insufficient|cannot tell from the evidence|found no evidence in the knowledge base", re.IGNORECASE
)
_CITATION = re.compile(r"\s*\[[^\[\]\s]*::chunk-[^\[\]\s]*\]")
_PREFACE = re.compile(
    r"^\s*The evidence is insufficient to answer(?: fully; the closest (?:units say|answer is)| every part)?:\s*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?=[\"'”’)]*(?:\s+[\"'“‘(\[]*[A-Z0-9]|\s*$))")
_LAST_WORD = re.compile(r"[\w.]+$")
_WINDOW = 48
_INITIALS = re.compile(r"(?:\w\.)*\w")
_SQUAD_PUNCTUATION = frozenset(string.punctuation)
_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def strip_citations(answer: str) -> str:
    return _CITATION.sub("", answer or "")


def is_refusal(answer: str) -> bool:
    return REFUSAL.search(answer or "") is not None


def abstained(status: str, answer: str) -> bool:
    """Not `grounded`, or grounded but saying it cannot tell: either way the answer asserts nothing."""
    return status != "grounded" or is_refusal(answer)


def lead_of(answer: AnswerReady) -> str:
    """The LEAD of an answer (module docstring), whatever its status."""
    parts = answer.parts
    if len(parts) == 1 and parts[0].lead:
        return strip_citations(parts[0].lead).strip()
    return first_sentence(answer.answer)


def first_line(answer: str) -> str:
    """The answer's text without the insufficient-evidence preface and citations: its first line."""
    text = _PREFACE.sub("", strip_citations(answer)).strip()
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def first_sentence(answer: str) -> str:
    """What an answer without a lead leads with: its text's first sentence (module docstring)."""
    text = first_line(answer)
    for match in _SENTENCE_END.finditer(text):
        # The word before the period is short when it matters, so a window holds it.
        if match.group() == "." and _continues(text[max(0, match.start() - _WINDOW) : match.start()]):
            continue
        return text[: match.end()].strip()
    return text


def _continues(before: str) -> bool:
    """The period after `before` belongs to an abbreviation ("Mr.", "e.g.") or initials ("U.S.", "J.")."""
    found = _LAST_WORD.findall(before)
    if not found:
        return False
    word = found[0]
    if word.lower() in JUDGE_ABBREVIATIONS:
        return True
    return bool(_INITIALS.fullmatch(word)) and len(word.replace(".", "")) <= 3 and word[0].isupper()


def asserted_lead(answer: AnswerReady | None) -> str:
    """The lead of an answer that asserts something; "" when it abstains (or there is none)."""
    return "" if answer is None or abstained(answer.status, answer.answer) else lead_of(answer)


def says(text: str, phrase: str) -> bool:
    """The phrase as whole words, any case: "No" is not found inside "not" or "Nobody"."""
    left = r"\b" if phrase[:1].isalnum() else ""
    right = r"\b" if phrase[-1:].isalnum() else ""
    return re.search(left + re.escape(phrase) + right, text, re.IGNORECASE) is not None


# --- SQuAD 2.0 scoring ------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """The official SQuAD normalisation: lower case, no punctuation, no a/an/the, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _SQUAD_PUNCTUATION)
    return " ".join(_SQUAD_ARTICLES.sub(" ", text).split())


def exact_match(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def token_f1(gold: str, prediction: str) -> float:
    gold_tokens = normalize_answer(gold).split()
    predicted = normalize_answer(prediction).split()
    if not gold_tokens or not predicted:
        # An empty side scores 1 only when both are empty (a no-answer matched by abstaining).
        return float(gold_tokens == predicted)
    overlap = sum((Counter(gold_tokens) & Counter(predicted)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def gold_list(answers: Iterable[str]) -> list[str]:
    """The official evaluation's gold list: answers whose normalised form is non-empty, else [""]."""
    golds = [a for a in answers if normalize_answer(a)]
    return golds or [""]


def best_scores(golds: Sequence[str], prediction: str) -> tuple[int, float]:
    """(EM, F1) of a prediction against its best gold answer."""
    listed = gold_list(golds)
    return max(exact_match(g, prediction) for g in listed), max(token_f1(g, prediction) for g in listed)


def contains_gold(answer: str, golds: Sequence[str]) -> bool:
    """Some gold's normalised text occurs in the normalised answer (citations removed), not inside
    a longer word or number ("10" is not found in "1000")."""
    said = normalize_answer(strip_citations(answer))
    for gold in golds:
        normal = normalize_answer(gold)
        if normal and re.search(r"(?<!\w)" + re.escape(normal) + r"(?!\w)", said):
            return True
    return False


# --- labelled checks -------------------------------------------------------------------------

# An `expect_answer` check passes when the lead's token F1 against the best gold reaches this:
# "Lady Cordelia Fenwick" for "Cordelia Fenwick" (F1 0.8) passes, a whole quoted sentence does not.
ANSWER_F1_PASS = 0.5


class AnswerVerdict:
    """One answer judged against its query's answer checks (docs/queries.md)."""

    def __init__(self, query: QuerySpec, answer: AnswerReady | None):
        # No answer event at all (the run failed) abstains like a refusal.
        self.status = answer.status if answer else "failed"
        self.text = answer.answer if answer else ""
        # An abstaining answer asserts nothing: its lead is empty and satisfies no mention.
        self.lead = asserted_lead(answer)
        self.em: int | None
        self.f1: float | None
        self.em, self.f1 = best_scores(query.expect_answer, self.lead) if query.expect_answer else (None, None)
        self.problems = tuple(self._problems(query))

    def _problems(self, query: QuerySpec) -> Iterator[str]:
        if query.expect_status and self.status != query.expect_status:
            yield f"status {self.status}, expected {query.expect_status}"
        if query.expect_abstain and (self.status == "grounded" or not is_refusal(self.text)):
            yield f"expected to abstain, came back {self.status}" + (
                "" if is_refusal(self.text) else " without saying it cannot tell"
            )
        where = "the lead" if self.lead else "an abstaining answer"
        missing = [phrase for phrase in query.expect_answer_mentions if not says(self.lead, phrase)]
        if missing:
            yield f"{where} does not mention {', '.join(missing)}"
        present = [phrase for phrase in query.expect_answer_excludes if says(self.lead, phrase)]
        if present:
            yield f"the lead mentions excluded {', '.join(present)}"
        if self.f1 is not None and self.f1 < ANSWER_F1_PASS:
            yield f"lead {self.lead[:80]!r} scores F1 {self.f1:.2f} against the expected answer"
