"""Units of one small KB file, `kb::chunk-001::unit-NNN`, for the lane tests (BM25, HDC/VSA)."""

from __future__ import annotations

from core.units import KnowledgeUnit, Role


def unit(n: int, role: Role, topic: str, body: str, **extra) -> KnowledgeUnit:
    """Unit `n`: `body` is a procedure's steps or any other role's claim."""
    text = {"procedure": body} if role is Role.PROCEDURE else {"claim": body}
    return KnowledgeUnit(
        id=f"kb::chunk-001::unit-{n:03d}", source_id="kb", chunk_id="chunk-001", role=role, topic=topic, **text, **extra
    )
