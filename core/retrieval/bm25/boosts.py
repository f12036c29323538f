"""The role boost of a BM25 index: units whose role the question's act prefers score
`role_boost` × their raw score (DESIGN §6)."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from core.units import Role

ROLES: tuple[Role, ...] = tuple(Role)


class RoleBoosts:
    """Per preferred-role set, each unit's boost and the boost table by role. A few acts share
    each preferred-role set, so both are kept."""

    def __init__(self, roles: np.ndarray, role_boost: float):
        self._roles = roles  # each unit's role as an index into `Role`
        self._role_boost = role_boost
        self._per_unit: dict[frozenset[Role], np.ndarray] = {}
        self._tables: dict[frozenset[Role], tuple[np.ndarray, float]] = {}

    def per_unit(self, preferred_roles: Collection[Role]) -> np.ndarray:
        """Each unit's boost, in row order: the table at each unit's role."""
        key = frozenset(preferred_roles)
        if key not in self._per_unit:
            self._per_unit[key] = self._table(key)[self._roles]
        return self._per_unit[key]

    def table_and_max(self, preferred_roles: Collection[Role]) -> tuple[np.ndarray, float]:
        """The boost of each role (in `Role` order) and the largest of them."""
        key = frozenset(preferred_roles)
        if key not in self._tables:
            table = self._table(key)
            self._tables[key] = (table, float(table.max()))
        return self._tables[key]

    def _table(self, preferred_roles: frozenset[Role]) -> np.ndarray:
        return np.array([self._role_boost if r in preferred_roles else 1.0 for r in ROLES])
