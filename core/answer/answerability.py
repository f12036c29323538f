"""An instrument for the answer/abstain decision: every lead the short answer weighs, with what
an answerability model could know about it (core/support.lead_features), handed to whoever
observes (scripts/train_answerability.py records them over a SQuAD 2.0 split and compares a
logistic model, cross-validated across articles, with the support score).

The engine does not decide with a learned model: on held-out articles the best one raised F1 by
0.2 points only by abstaining on far more answerable questions, and at the support score's
abstention it scored lower (docs/answers.md). Observing costs nothing when no one observes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# What core/support.lead_features measures about a lead; docs/answers.md says what each is.
FEATURES = (
    "share",  # the support score: the share of focus terms said
    "all_said",  # 1 when every focus term is said
    "unsaid",  # focus terms unsaid
    "unsaid_exact",  # unsaid names and numbers
    "unsaid_noun",
    "unsaid_verb",
    "unsaid_other",
    "unsaid_synonym",  # unsaid terms the sentence says a synonym or a sister term of
    "unsaid_in_paragraph",  # unsaid terms another sentence of the lead's unit says
    "fills_gap",  # the lead stands in the question's gap (question_gap.fills_gap)
    "lead_distance",  # log(1 + words between the lead and the nearest said focus word)
    "near_share",  # share of the focus terms said within 5 words of the lead
    "lead_words",  # log(1 + words in the lead)
    "lead_name",  # the lead holds a proper noun or a number
    "terms",  # log(1 + focus terms)
    "sentence_words",  # log(1 + words in the sentence)
    "question_words",  # log(1 + words in the question)
    "type_person",
    "type_place",
    "type_date",
    "type_number",
    "type_kind",
    "type_thing",
)


@dataclass(frozen=True)
class Candidate:
    """One lead the short answer weighed."""

    lead: str
    features: Mapping[str, float]
    # The checks other than the support score pass (type, negation, antonyms, direction, names).
    rules: bool
    # The support check passes as the engine runs it.
    supported: bool
    # Its sentence is of the best coverage (the engine tries only those; the rest are measured).
    top: bool


Observer = Callable[[str, Sequence[Candidate]], None]
OBSERVERS: list[Observer] = []


def observing() -> bool:
    return bool(OBSERVERS)


def observe(question: str, candidates: Sequence[Candidate]) -> None:
    for observer in OBSERVERS:
        observer(question, candidates)
