"""ThinkingDB over the shards: a question's seed facts and forward neighbourhood are fetched
from the shards that hold them, and the closure runs here, over just those facts.

Each shard indexes its part of the caller's view by subject and object (the view is sent, never
the units). The coordinator asks every shard for the facts that could make the question's seed
cut, picks the seeds, then walks forward one hop a round trip (the frontier's followed facts
from every shard) as far as the one-process walk goes: maxDepth hops, one more to see whether
the walk was cut there, or until maxNeighbourhoodFacts stops it. Symbols and relations are
numbered where the whole view first names them (each shard reports its first place), so the
seeds, the walk and the closure's ties fall as in one process and the proofs are the same.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Container, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from core.kb.sharding import shard_tasks
from core.kb.sharding.fact_source import FactReply, FactRow, FactSource
from core.retrieval.rules import RuleSet, is_variable, symbol_key
from core.retrieval.thinkingdb import ThinkingDB
from core.retrieval.thinkingdb.budget import StopHook
from core.retrieval.thinkingdb.results import TdbResult
from core.retrieval.thinkingdb.seeds import walk_front

# Questions whose gathered facts are kept (a request asks the same question from several kb plugins).
_QUESTIONS_KEPT = 8

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView
    from core.kb.sharding.cluster import Cluster


class Shards(Protocol):
    """What this needs of `sharded.ShardSet` (which builds it: no import back)."""

    cluster: Cluster

    def each(self, task: Callable[..., Any], view: KBView, *args: Any) -> list[Any]: ...


def rule_constants(ruleset: RuleSet) -> list[str]:
    """The symbol keys the rules name (a rule's constants are numbered where facts name them)."""
    terms = (t for rule in ruleset.rules for p in (*rule.when, rule.then) for t in (p.s, p.o))
    return list(dict.fromkeys(symbol_key(t) for t in terms if not is_variable(t) and symbol_key(t)))


def local_source(units: Sequence[Any], ruleset: RuleSet) -> FactSource:
    """The facts of units held here (the current-turn units that state one)."""
    return FactSource(ThinkingDB.build(units, ruleset), units)


class ShardedThinkingDB:
    """`ThinkingDB.query` over the shards; a question's facts are fetched, then closed here."""

    def __init__(self, shards: Shards, view: KBView, ruleset: RuleSet, local: FactSource | None):
        self._shards = shards
        self._view = view
        self._ruleset = ruleset
        self._local = local
        self._constants = rule_constants(ruleset)
        # A question's facts, kept for its replans and other kb candidates (which ask it again).
        self._gathered: OrderedDict[tuple[str, tuple[str, ...]], ThinkingDB] = OrderedDict()

    def for_members(self, _members: Container[str]) -> ShardedThinkingDB:
        """The same facts for a view that adds only units stating none."""
        return self

    def query(self, query_text: str, preferred_terms: Sequence[str] | None = None, stop: StopHook = None) -> TdbResult:
        preferred = tuple(preferred_terms or ())
        key = (query_text, preferred)
        db = self._gathered.get(key)
        if db is None:
            db = self._gathered[key] = self.gather(query_text, preferred)
            while len(self._gathered) > _QUESTIONS_KEPT:
                self._gathered.popitem(last=False)
        return db.query(query_text, preferred, stop)

    def gather(self, text: str, preferred: Sequence[str]) -> ThinkingDB:
        """A ThinkingDB of the facts this question's seeds, walk and closure read."""
        keys = self._constants
        reply = self._fetch(
            shard_tasks.tdb_seeds, lambda source: source.seeds(text, preferred, keys), text, tuple(preferred), keys
        )
        limits, asked = self._ruleset.limits, set(reply.symbols)
        for hops in range(limits.max_depth + 1):
            db = self._build(reply)
            front, capped, held = walk_front(db, text, preferred, hops)
            if capped or not len(front):
                break
            subjects = [symbol_key(db.symbols[s]) for s in front.tolist()]
            pending = self._unplaced(reply, asked)
            # The hop after the last one only tells whether the walk was cut there: one fact will do.
            limit = 1 if hops == limits.max_depth else limits.max_neighbourhood_facts + held
            reply.absorb(
                self._fetch(
                    shard_tasks.tdb_hop, lambda source: source.hop(subjects, limit, pending), subjects, limit, pending
                )
            )
            asked.update(pending)
            if hops == limits.max_depth:
                return self._build(reply)  # that hop's new symbols are outside the walk: unplaced is fine
        pending = self._unplaced(reply, asked)
        if pending:
            reply.absorb(self._fetch(shard_tasks.tdb_hop, lambda source: source.hop((), 0, pending), (), 0, pending))
        return self._build(reply)

    def _fetch(self, task: Callable[..., FactReply], here: Callable[[FactSource], FactReply], *args: Any) -> FactReply:
        merged = FactReply()
        rules = self._shards.cluster.shared(self._ruleset)
        for reply in self._shards.each(task, self._view, rules, *args):
            merged.absorb(reply)
        if self._local is not None:
            merged.absorb(here(self._local))
        return merged

    @staticmethod
    def _unplaced(reply: FactReply, asked: set[str]) -> list[str]:
        """Symbols of the fetched facts whose first place in the view is not known yet."""
        names = (name for row in reply.rows for name in (row.subject or "", row.object or ""))
        return [key for key in dict.fromkeys(symbol_key(n) for n in names) if key and key not in asked]

    def _build(self, reply: FactReply) -> ThinkingDB:
        rows: list[FactRow] = sorted({row.id: row for row in reply.rows}.values(), key=lambda row: row.id)
        symbols = sorted(reply.symbols.items(), key=lambda item: (item[1][0], item[0]))
        relations = sorted(reply.relations, key=lambda key: (reply.relations[key], key))
        order = ([spelling for _, (_, spelling) in symbols], relations)
        return ThinkingDB.build(rows, self._ruleset, order=order)  # type: ignore[arg-type]
