"""Where a labelled query's run showed a unit id it must not: in any event's JSON (free text,
in any case, as a whole id) or in the unit-id fields events rank, prove and cite, and in each
directly run plugin's candidates. The safety gates of core/eval/labelled.py read these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from core.kernel.events import AnswerReady, Event, IntentDetected, ProofNode, ProofsFound, RetrievalScored


class IdFinder:
    """Finds whole unit ids in text, in any case, so "a::unit-1" is not reported inside
    "a::unit-10" and "A::UNIT-1" echoed in lower case is still "a::unit-1"."""

    def __init__(self, ids: Iterable[str]):
        self.ids = frozenset(ids)
        self._by_folded: dict[str, set[str]] = {}
        for uid in self.ids:
            self._by_folded.setdefault(uid.casefold(), set()).add(uid)
        # Longest first, so an id that is a prefix of another never shadows it.
        alternatives = "|".join(re.escape(i) for i in sorted(self.ids, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w:-])(?:{alternatives})(?![\w-])", re.IGNORECASE) if self.ids else None

    def find(self, text: str) -> set[str]:
        if not self._pattern:
            return set()
        return {uid for match in self._pattern.findall(text) for uid in self._by_folded.get(match.casefold(), ())}

    def among(self, ids: Iterable[str]) -> set[str]:
        """The sought ids that name one of `ids`, compared in any case."""
        return {uid for other in ids for uid in self._by_folded.get(other.casefold(), ())}


class Seen:
    """What one query's run showed: every event's JSON, the unit ids events rank, prove or cite,
    and each directly run plugin's candidate list."""

    def __init__(self, question: str, events: Sequence[Event], candidates: dict[str, list[str]]):
        self.question = question
        self.texts = [(f"event {e.seq} {e.kind}", e.model_dump_json()) for e in events]
        self.unit_ids = [(f"event {e.seq} {e.kind}", _unit_ids(e)) for e in events]
        self.candidates = candidates

    def sightings(self, finder: IdFinder, exact: frozenset[str] | None = None) -> tuple[str, ...]:
        """Each forbidden id the run showed, as "<id> in <where>".

        An id the question itself contains, in any case, is echoed in query terms and reasons
        without being shown to anyone, so for those ids only the unit-id fields count, not free
        text. Ids compare in any case everywhere: a gate that failed only for an id typed in
        another case than the KB's would tell the caller that the restricted id exists. `exact`:
        ids that count in unit-id fields and candidate lists only as written (the hidden units').
        """
        typed = finder.find(self.question)
        in_text = IdFinder(finder.ids - typed) if typed else finder
        seen = [f"{uid} in {where}" for where, text in self.texts for uid in sorted(in_text.find(text))]
        if exact is None:
            seen += [f"{uid} in {where}" for where, ids in self.unit_ids for uid in sorted(typed & finder.among(ids))]
            seen += [
                f"{uid} in {pid} candidates"
                for pid, ids in self.candidates.items()
                for uid in sorted(finder.among(ids))
            ]
        else:
            seen += [f"{uid} in {where}" for where, ids in self.unit_ids for uid in sorted(exact & ids)]
            seen += [
                f"{uid} in {pid} candidates"
                for pid, ids in self.candidates.items()
                for uid in sorted(exact.intersection(ids))
            ]
        return tuple(dict.fromkeys(seen))


def _unit_ids(event: object) -> set[str]:
    """The ids an event ranks, proves, cites or adds as context."""
    if isinstance(event, RetrievalScored):
        return {c.id for c in event.candidates} | set(event.evidence_ids)
    if isinstance(event, ProofsFound):
        return {uid for proof in event.proofs for uid in _proof_units(proof)}
    if isinstance(event, AnswerReady):
        return set(event.evidence_ids) | {uid for part in event.parts for uid in part.cited_ids}
    if isinstance(event, IntentDetected):
        return set(event.context_unit_ids)
    return set()


def _proof_units(node: ProofNode) -> Iterator[str]:
    yield from node.units
    for premise in node.premises:
        yield from _proof_units(premise)
