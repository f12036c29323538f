"""Answers from ThinkingDB proofs: which derived proof is about what the question names, and
the chain of stated facts that answers with it, each fact cited by its unit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from core.answer.answer_forms import Draft
from core.question.intent_cues import QuestionCues, focus_coverage
from core.retrieval.fusion import RetrievalOutcome
from core.text.tokenizer import stem, tokenize

if TYPE_CHECKING:
    from core.retrieval.thinkingdb import Proof

_EDGE = ".,;:!?()[]{}\"'`"


def proofs_of(outcome: RetrievalOutcome) -> list[Proof]:
    """ThinkingDB proofs, when the kb plugin ran that lane."""
    return list(getattr(outcome.lane_details.get("tdb"), "proofs", ()))


def best_proof(
    proofs: Sequence[Proof],
    question: str,
    cues: QuestionCues,
    evidence: set[str],
    seeds: Sequence[Proof] = (),
    kind: str = "",
) -> Proof | None:
    """The derived proof about what the question names.

    A proof qualifies when it rests only on kept units (the answer may cite nothing else) and its
    subject and object mention every focus term that names a symbol of the found facts (seeds
    included, since ThinkingDB ranks by derivations and a seed may take part in none): asked
    about a goal, a chain ending at another goal is no answer; only when no conclusion names
    them all does a proof whose tree names them qualify. Among those: most of its subject
    and object written in the question (matched as written, since a name such as "A" is a
    stopword that focus terms drop), then most focus words in its fact, then the best pathScore.
    """
    asked = _stems(question)
    # The kind asked for ("which services") is what the answer is, not a symbol it must name.
    entities = (set(cues.focus_terms) - set(tokenize(kind))) & _symbol_terms([*proofs, *seeds])
    best, best_key = None, (False, 0, 0, 0.0)
    for proof in proofs:
        if proof.rule is None or not set(proof.leaf_units()) <= evidence:
            continue
        # Entities named by the conclusion first; failing that, a chain that passes through the
        # rest of them on its way ("A benefits from isolation for secure execution": A → … →
        # isolation → secure execution).
        in_conclusion = entities <= set(tokenize(f"{proof.subject} {proof.object}"))
        if not in_conclusion and not entities <= _symbol_terms([proof]):
            continue
        named = sum(_contains(asked, _stems(name)) for name in (proof.subject, proof.object))
        touched = len(focus_coverage(cues, [proof.fact]).covered)
        key = (in_conclusion, named, touched, proof.score)
        if (named or touched) and key > best_key:
            best, best_key = proof, key
    return best


def _symbol_terms(proofs: Iterable[Proof]) -> set[str]:
    terms: set[str] = set()
    for proof in proofs:
        terms.update(tokenize(f"{proof.subject} {proof.object}"))
        terms |= _symbol_terms(proof.premises)
    return terms


def chain_steps(proof: Proof) -> list[str]:
    """Stated facts in proof order; each derivation is noted after the premise that completes it."""
    if not proof.premises:
        return [f"{proof.fact} {_brackets(proof.units)}"]
    steps = [step for premise in proof.premises for step in chain_steps(premise)]
    steps[-1] += f" (so {proof.fact} by {proof.rule})"
    return steps


def chain_answer(proof: Proof, lead: str = "", *, reason_first: bool = False, more: Sequence[Proof] = ()) -> Draft:
    """The proof's conclusion (or `lead`), because of its chain (and those of `more`); with
    `reason_first` (a question asking why), the chain itself, since restating what was asked
    answers nothing: its last step still ends "(so <conclusion> by <rule>)"."""
    steps = "; ".join(step for each in (proof, *more) for step in chain_steps(each))
    cited = _distinct(uid for each in (proof, *more) for uid in each.leaf_units())
    method = f"proof chain for '{proof.fact}' by {proof.rule}"
    if reason_first:
        return Draft(f"Because {steps}.", cited, method)
    return Draft.led(lead or proof.fact, f"{steps}.", cited, method)


def names_both_ends(question: str, proof: Proof) -> bool:
    """The question writes the proof's subject and its object (asked "Does A depend on C?")."""
    asked = _stems(question)
    return all(_contains(asked, _stems(name)) for name in (proof.subject, proof.object))


def names_subject_only(question: str, proof: Proof) -> bool:
    """The question writes the proof's subject and not its object ("What does A depend on?")."""
    asked = _stems(question)
    return _contains(asked, _stems(proof.subject)) and not _contains(asked, _stems(proof.object))


def _stems(text: str) -> list[str]:
    """Every word stemmed, stopwords kept, so short names survive."""
    words = (word.strip(_EDGE).lower().removesuffix("'s") for word in text.replace("_", " ").split())
    return [stem(word) for word in words if word]


def _contains(words: Sequence[str], part: Sequence[str]) -> bool:
    size = len(part)
    return size > 0 and any(list(words[i : i + size]) == list(part) for i in range(len(words) - size + 1))


def _brackets(unit_ids: Iterable[str]) -> str:
    return " ".join(f"[{uid}]" for uid in _distinct(unit_ids))


def _distinct(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))
