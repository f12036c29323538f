"""Every object the found proofs give a subject by one relation: asked "What does Orion depend
on?", the Proofs pane shows Orion depends_on Lumen and Orion depends_on Vault (through Lumen), so
the lead is "Lumen and Vault", not the best-scored proof's "Lumen" alone.

A proof's own tree may hold several such facts (Orion depends_on Lumen under Orion depends_on
Vault); other proofs of the same subject and relation may add more. The answer shows the fewest
proofs whose trees hold them all, best-scored first; each must rest on units the answer may cite.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.retrieval.thinkingdb import Proof


def object_lead(*proofs: Proof) -> str:
    """The objects the proofs' trees give the first proof's subject by its relation, stated or
    derived, in proof order, as one phrase ("Lumen and Vault")."""
    objects = objects_of(proofs)
    return objects[0] if len(objects) == 1 else f"{', '.join(objects[:-1])} and {objects[-1]}"


def objects_of(proofs: Sequence[Proof]) -> list[str]:
    subject, relation = proofs[0].subject, proofs[0].relation
    return list(dict.fromkeys(o for proof in proofs for o in _objects(proof, subject, relation)))


def _objects(proof: Proof, subject: str, relation: str) -> Iterator[str]:
    for premise in proof.premises:
        yield from _objects(premise, subject, relation)
    if proof.subject == subject and proof.relation == relation:
        yield proof.object


def with_every_object(best: Proof, proofs: Sequence[Proof], evidence: set[str]) -> list[Proof]:
    """`best` and the other derived proofs of its subject and relation resting on `evidence` that
    add an object, best-scored first, without a proof whose objects another one's tree holds."""
    same = [
        best,
        *sorted(
            (
                p
                for p in proofs
                if p is not best
                and p.rule is not None
                and p.subject == best.subject
                and p.relation == best.relation
                and set(p.leaf_units()) <= evidence
            ),
            key=lambda p: -p.score,
        ),
    ]
    held = [(p, set(objects_of([p]))) for p in same]
    # A proof whose objects another's tree holds adds only its steps again (Orion depends_on
    # Lumen sits under Orion depends_on Vault): the larger tree is shown instead.
    kept = [
        p
        for i, (p, objects) in enumerate(held)
        if not any(objects < other or (objects == other and j < i) for j, (_, other) in enumerate(held) if j != i)
    ]
    chosen: list[Proof] = []
    seen: set[str] = set()
    for proof in kept:
        objects = set(objects_of([proof]))
        if not objects <= seen:
            chosen.append(proof)
            seen |= objects
    return chosen


def proven_objects(lead: str, proofs: Sequence[Proof], cited: set[str]) -> bool:
    """The lead is every object some subject is given by one relation in proofs resting on cited
    units alone (what `with_every_object` built)."""
    derived = [p for p in proofs if p.rule is not None and set(p.leaf_units()) <= cited]
    return any(lead == object_lead(*with_every_object(p, derived, cited)) for p in derived)
