"""The semi-naive fixpoint of one query, over its local fact table (`table`).

The table starts as the query's neighbourhood; derived facts are appended per round, and the best
proof of each derived fact is kept (its premises as local ids). The columns are numpy arrays, and
each round joins rule bodies over them with sort + searchsorted, so a round costs a few dozen array
operations instead of one Python call per fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from core.retrieval.rules import MAX_PREMISES
from core.retrieval.thinkingdb.arrays import chunks, member
from core.retrieval.thinkingdb.budget import Budget, budget_reason
from core.retrieval.thinkingdb.results import RuleStats
from core.retrieval.thinkingdb.table import FactTable, Shape, shape

if TYPE_CHECKING:
    from core.retrieval.thinkingdb.facts import CompiledRule, ThinkingDB
    from core.retrieval.thinkingdb.seeds import Neighbourhood

SHOWN_BINDINGS = 8
# Estimated bytes per row, for the memory budget: a table row (fourteen 8-byte columns with the
# premise ids, counted twice because growing the table copies it), a pending conclusion (as many,
# twice for the merge and twice more for the sort temporaries of accepting them), and one int64
# column of a partial join (twice: the old rows and the extended ones).
TABLE_ROW_BYTES = 2 * 14 * 8
CANDIDATE_ROW_BYTES = 4 * 14 * 8
JOIN_COLUMN_BYTES = 2 * 8


@dataclass
class _Rows:
    """Partial rule-body matches: one row per combination of premise facts joined so far."""

    values: dict[int, np.ndarray]  # variable slot → bound symbol per row
    premises: dict[int, np.ndarray]  # premise index → local fact id per row

    def __len__(self) -> int:
        return len(next(iter(self.premises.values())))


@dataclass
class _Candidates:
    """Conclusions of one round, one row per rule-body match."""

    columns: dict[str, list[np.ndarray]] = field(default_factory=dict)
    rows: int = 0

    def add(self, **arrays: np.ndarray) -> None:
        for name, array in arrays.items():
            self.columns.setdefault(name, []).append(array)
        self.rows += len(arrays["key"])

    def merged(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate(arrays) for name, arrays in self.columns.items()}


class Closure(FactTable):
    """One query's fixpoint: the local fact table, the rule statistics and the derived facts."""

    def __init__(self, db: ThinkingDB, hood: Neighbourhood, budget: Budget):
        super().__init__(db, hood)
        self.limits = db.limits
        self.n_sequences = len(db._rules) * MAX_PREMISES
        self.stats = {c.rule.id: RuleStats() for c in db._rules}
        self.current: dict[int, int] = {}  # derived fact key → local id of its best version
        self.join_capped = False
        self.budget = budget
        self.pending_rows = 0  # conclusions of the chunk being joined, not yet accepted
        self._drivers: dict[Shape, np.ndarray] = {}  # the chunk being joined's matches per premise shape

    def run(self) -> tuple[int, bool]:
        """Semi-naive rounds; returns the rounds run and whether the last one left new facts.

        Each round's delta (the facts born in the round before, a contiguous id range) drives the
        joins in growing chunks, nearest facts first: on a dense neighbourhood the first chunk
        often fills maxDerivedFacts, and the rest of the delta is never joined.
        """
        delta_start, delta_end, rounds = 0, len(self.ls), 0
        for round_no in range(1, self.limits.max_depth + 1):
            rounds, added = round_no, False
            for chunk in chunks(delta_start, delta_end):
                candidates, self._drivers = _Candidates(), {}
                for rule_index, compiled in enumerate(self.db._rules):
                    if round_no > compiled.last_round:
                        continue
                    # Round 1's delta is every base fact: nothing older can fill earlier premises.
                    for delta_index in range(1 if round_no == 1 else len(compiled.premises)):
                        if self.budget.check():
                            break
                        self.pending_rows = candidates.rows
                        self._match_body(rule_index, compiled, delta_index, round_no, chunk, candidates)
                # What a stopping chunk already joined is still accepted: it is in memory, and
                # accepting polls the budget too.
                added |= bool(candidates.columns) and self._accept(candidates.merged(), round_no)
                self.pending_rows = 0
                if self.budget.spent:
                    return rounds, False
            if not added:
                return rounds, False
            delta_start, delta_end = delta_end, len(self.ls)
        return rounds, True

    def _match_body(
        self,
        rule_index: int,
        compiled: CompiledRule,
        delta_index: int,
        round_no: int,
        chunk: slice,
        out: _Candidates,
    ) -> None:
        pattern = compiled.premises[delta_index]
        drivers = self._drivers.get(shape(pattern))
        if drivers is None:
            drivers = self._drivers[shape(pattern)] = self.matching(pattern, round_no - 1, chunk)
        if not len(drivers):
            return
        rows = _Rows({}, {delta_index: drivers})
        self._bind_new(rows, pattern, drivers)
        for j, premise in enumerate(compiled.premises):
            if j == delta_index:
                continue
            # Semi-naive: earlier premises take facts older than the delta, later ones anything
            # known before this round, so each combination is joined exactly once.
            newest = round_no - 2 if j < delta_index else round_no - 1
            rows = self._join(rows, premise, j, newest)
            if not len(rows) or self.budget.check():
                return
        self._conclude(rule_index, compiled, delta_index, rows, out)

    def _bind_new(self, rows: _Rows, pattern: tuple[int, int, int], facts: np.ndarray) -> None:
        s, _, o = pattern
        if s < 0 and -1 - s not in rows.values:
            rows.values[-1 - s] = self.ls[facts]
        if o < 0 and -1 - o not in rows.values:
            rows.values[-1 - o] = self.lo[facts]

    def _join(self, rows: _Rows, pattern: tuple[int, int, int], j: int, newest: int) -> _Rows:
        """Extend every row with each fact matching premise `j` (born by round `newest`) on the
        variables already bound."""
        s, _, o = pattern
        bound_s, bound_o = s < 0 and -1 - s in rows.values, o < 0 and -1 - o in rows.values
        if bound_s and bound_o and s != o:
            key, left = "pair", rows.values[-1 - s] * self.n_symbols + rows.values[-1 - o]
        elif bound_s or bound_o:
            key, left = ("s", rows.values[-1 - s]) if bound_s else ("o", rows.values[-1 - o])
        else:
            key, left = "none", np.zeros(len(rows), dtype=np.int64)
        facts, sorted_right = self._sorted_side(pattern, newest, key)
        first = sorted_right.searchsorted(left, "left")
        width = len(rows.values) + len(rows.premises) + 2
        counts = self._within_budget(sorted_right.searchsorted(left, "right") - first, width)
        row_of = np.arange(len(left)).repeat(counts)
        within = np.arange(len(row_of)) - (counts.cumsum() - counts).repeat(counts)
        picked = facts[first[row_of] + within]
        joined = _Rows(
            {slot: v[row_of] for slot, v in rows.values.items()},
            {k: v[row_of] for k, v in rows.premises.items()} | {j: picked},
        )
        self._bind_new(joined, pattern, picked)
        return joined

    def _within_budget(self, counts: np.ndarray, width: int) -> np.ndarray:
        """Drop the rows past maxJoinRows (later drivers first), so one hub cannot blow up a join,
        and the rows that would take the closure past maxClosureMb (which then stops it)."""
        limit = self.limits.max_join_rows
        fits = self.budget.rows_that_fit(self.held_bytes(), width * JOIN_COLUMN_BYTES + CANDIDATE_ROW_BYTES)
        total = int(counts.sum())
        if total > fits and fits < limit:
            self.budget.out_of_memory()
            limit = fits
        elif total > limit:
            self.join_capped = True
        if total <= limit:
            return counts
        return np.where(counts.cumsum() <= limit, counts, 0)

    def held_bytes(self) -> int:
        """Estimated bytes of the fact table and the conclusions waiting to be accepted."""
        return len(self.ls) * TABLE_ROW_BYTES + self.pending_rows * CANDIDATE_ROW_BYTES

    def _conclude(
        self, rule_index: int, compiled: CompiledRule, delta_index: int, rows: _Rows, out: _Candidates
    ) -> None:
        stats, n = self.stats[compiled.rule.id], len(rows)
        stats.fired += n
        shown = max(min(n, SHOWN_BINDINGS - len(stats.bindings)), 0)
        if shown:
            symbols = self.db.symbols
            columns = [rows.values[k][:shown].tolist() for k in range(len(compiled.variables))]
            stats.bindings += [
                {v: symbols[column[row]] for v, column in zip(compiled.variables, columns, strict=True)}
                for row in range(shown)
            ]
        premises = np.full((n, MAX_PREMISES), -1, dtype=np.int64)
        for k, ids in rows.premises.items():
            premises[:, k] = ids
        used = premises[:, : len(compiled.premises)]
        hs, relation, ho = compiled.head
        subjects = np.full(n, hs) if hs >= 0 else rows.values[-1 - hs]
        objects = np.full(n, ho) if ho >= 0 else rows.values[-1 - ho]
        out.add(
            key=self.keys(subjects, relation, objects),
            s=subjects,
            r=np.full(n, relation),
            o=objects,
            conf=self.conf[used].prod(axis=1) * compiled.rule.weight,
            steps=1 + self.steps[used].sum(axis=1),
            # numpy's stub cannot tell a 2-D array's `any` over an axis from the whole array's bool.
            seeded=cast(np.ndarray, self.seeded[used].any(axis=1)),
            named=np.bitwise_or.reduce(self.named[used], axis=1),
            rule=np.full(n, rule_index),
            premises=premises,
            # Discovery order: nearest driving fact first, then rule, delta premise and row.
            discovery=(rows.premises[delta_index] * self.n_sequences + rule_index * MAX_PREMISES + delta_index)
            * (self.limits.max_join_rows + 1)
            + np.arange(n),
        )

    def _accept(self, c: dict[str, np.ndarray], round_no: int) -> bool:
        """Add this round's new facts (in discovery order, up to maxDerivedFacts) and better proofs
        of facts derived earlier; returns whether anything was added."""
        fresh = np.flatnonzero(~member(c["key"], self.base_keys))
        if not len(fresh):
            return False
        keys, discovery = c["key"][fresh], c["discovery"][fresh]
        # Grouped by fact, best proof first (most named entities, highest confidence, fewest steps,
        # earliest).
        connects = np.bitwise_count(c["named"][fresh])
        order = np.lexsort((discovery, c["steps"][fresh], -c["conf"][fresh], -connects, keys))
        starts = np.flatnonzero(np.concatenate(([True], keys[order][1:] != keys[order][:-1])))
        first_seen = np.minimum.reduceat(discovery[order], starts)
        best = fresh[order[starts][first_seen.argsort()]]
        keys = c["key"][best].tolist()
        known = np.array([self.current.get(key, -1) for key in keys], dtype=np.int64)
        new = known < 0
        wanted = new | self._improves(c, best, known)
        # Rows are taken in discovery order until the new facts would pass maxDerivedFacts.
        room = self.limits.max_derived_facts - len(self.current)
        if int(new.sum()) > room:
            self.budget.stop(budget_reason("maxDerivedFacts", self.limits.max_derived_facts))
            cut = int(np.flatnonzero(new)[room])
            wanted[cut:] = False
        taken = np.flatnonzero(wanted)
        accepted = best[taken]
        self.current.update(zip((keys[k] for k in taken.tolist()), range(len(self.ls), len(self.ls) + len(taken))))
        self._note_derived(c, best[taken[new[taken]]].tolist())
        if len(accepted):
            self._append(c, accepted, round_no)
        return bool(len(accepted))

    def _note_derived(self, c: dict[str, np.ndarray], rows: list[int]) -> None:
        """Each new fact, as text, under the rule that derived it (the rules screen lists them)."""
        rules, symbols, relations = self.db._rules, self.db.symbols, self.db.relations
        columns = (c[name][rows].tolist() for name in ("rule", "s", "r", "o"))
        for rule, s, r, o in zip(*columns, strict=True):
            self.stats[rules[rule].rule.id].derived.append(f"{symbols[s]} {relations[r]} {symbols[o]}")

    def _improves(self, c: dict[str, np.ndarray], rows: np.ndarray, known: np.ndarray) -> np.ndarray:
        """Per row, whether it is a better proof of the fact already at `known` (-1: none): more of
        the question's named entities, then higher confidence, then fewer steps."""
        old = np.maximum(known, 0)
        new_named, old_named = np.bitwise_count(c["named"][rows]), np.bitwise_count(self.named[old])
        new_conf, old_conf = c["conf"][rows], self.conf[old]
        fewer = c["steps"][rows] < self.steps[old]
        better = (new_named > old_named) | (
            (new_named == old_named) & ((new_conf > old_conf) | ((new_conf == old_conf) & fewer))
        )
        return better & (known >= 0)

    def first_unmatched(self, compiled: CompiledRule) -> int | None:
        """First premise that no neighbourhood or derived fact matches even on its own."""
        for index, pattern in enumerate(compiled.premises):
            if not len(self.matching(pattern, self.limits.max_depth)):
                return index
        return None
