"""One loaded workspace: KB, rules, configs, plugins and engine, as the CLI and the TUI use it.

A reload builds a new KB object and swaps it in; runs already under way keep the view they
started with, so no run ever sees a mix of old and new units.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from core.infra import leases
from core.infra.collector import back_into_collections, collector_paused, keep_out_of_collections
from core.infra.config import ConfigError, EngineConfig, RetrievalConfig, load_engine_config, load_retrieval_config
from core.infra.diagnostics import Diagnostic
from core.infra.embeddings import load_embedding_config
from core.infra.llm import LlmClient, LlmConfig, load_llm_config
from core.infra.progress import LoadProgress, Progress
from core.infra.resources import config_dir, config_file, sample_kb_dir
from core.kb.dense import DenseLane
from core.kb.health import Health, caller_diagnostics, health_of
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KBView, KnowledgeBase
from core.kernel.catalog import build_registry
from core.kernel.contract import STAGE_NAMES, PluginType, Registry, RegistryError, Request
from core.kernel.engine import Engine
from core.kernel.planners import default_planners
from core.kernel.services import Services
from core.kernel.steering import Steering
from core.nlp.unpacked import use_cache_of
from core.retrieval.rules import RULES_FILE, RuleSet, load_rules
from core.store import SegmentStore, default_store
from core.store.mapped import damaged as damaged_mappings
from core.text import synonyms as synonyms_file
from core.units import Caller, KnowledgeUnit


def _tagger_while_building(progress: Progress | None, store: SegmentStore) -> Progress:
    """`progress`, which also starts loading the tagger's data in a thread (`core.nlp.preload`,
    unpacked into `store`'s folder) when a cold open's build workers start: this process only
    waits for them then, and every answer tags its question, so the first answer no longer
    loads it (~0.2 CPU s). nltk's stemmer loads in another thread: the first answer stems cue
    words a new cache has no stems of."""
    started: list[threading.Thread] = []

    def report(event: LoadProgress) -> None:
        if event.stage == "building" and not started:
            from core.nlp import preload
            from core.text.tokenizer import load_stemmer

            started.append(preload(store.root if store.enabled else None))
            started.append(threading.Thread(target=load_stemmer, name="stemmer-preload", daemon=True))
            started[-1].start()
        if progress is not None:
            progress(event)

    return report


class Session:
    def __init__(
        self,
        kb_paths: Sequence[Path],
        config_path: Path,
        kb: KnowledgeBase | None = None,
        progress: Progress | None = None,
        store: SegmentStore | None = None,
    ):
        """`store`: the index cache to read and write (None: the one the environment names)."""
        self.kb_paths = list(kb_paths)
        self.config_path = config_path
        self.retrieval = load_retrieval_config(config_path)
        self.engine_config = load_engine_config(config_path)
        self._lock = threading.Lock()
        self._guard = threading.Lock()
        leases.arm()  # in the main thread only; a worker thread's session uses what the CLI armed
        self._rebuilt_for: set[int] = set()  # damaged mappings this session has rebuilt without
        self._index_cache: Callable[..., IndexCache] = IndexCache
        self._view_of: Callable[[KBView], KBView] = _same_view
        if kb is None:
            store = store if store is not None else default_store()
            kb = KnowledgeBase.load(
                self.kb_paths,
                store,
                hdc=self.retrieval.hdc,
                progress=_tagger_while_building(progress, store),
                bm25=self.retrieval.bm25,
                budgets=self.retrieval.inputs,
            )
        self.kb = kb
        if progress is not None:
            progress(LoadProgress("preparing", len(self.kb.files), len(self.kb.files), self.kb.unit_count))
        self._own_rules = False
        self.ruleset = load_rules(self._rules_file())
        self.synonyms, self.synonym_problems = synonyms_file.load(self.kb_paths)
        use_cache_of(self._cache_root())
        self._build()
        _outside_collections(self.kb)

    @classmethod
    def from_kb(cls, kb: KnowledgeBase, config_path: Path | None = None) -> Session:
        """A session over a KB built in memory (benchmarks, tests); it has no files to reload."""
        return cls(list(kb.paths), config_path or config_dir(), kb)

    @classmethod
    def open(
        cls,
        kb_paths: Sequence[Path] | None = None,
        config_path: Path | None = None,
        progress: Progress | None = None,
        store: SegmentStore | None = None,
    ) -> Session:
        """Raises ConfigError (with diagnostics) when a config file is unusable; `progress` hears
        the KB load file by file (core/infra/progress.py) and may raise to stop it; `store`: the index
        cache (None: the one the environment names), which reloads keep using."""
        return cls(
            list(kb_paths) if kb_paths else [sample_kb_dir()],
            config_path or config_dir(),
            progress=progress,
            store=store,
        )

    def _build(self) -> None:
        self.dense = DenseLane(load_embedding_config(self.config_path), self.retrieval.dense)
        # HDC vectors and BM25 parts of unchanged files survive a reload (keyed by content).
        previous = getattr(self, "indexes", None)
        self.indexes = self._index_cache(
            self.retrieval,
            self.ruleset,
            vectors=previous.vectors if previous else None,
            parts=previous.parts if previous and previous.config == self.retrieval else None,
            dense=self.dense,
        )
        self.llm = LlmClient(load_llm_config(self.config_path))
        services = Services(self.retrieval, self.engine_config, self.ruleset, self.indexes, self.llm, self.synonyms)
        # Plugin factories are contained: one that fails is a diagnostic here, never an exception.
        self.registry, self.plugin_problems = build_registry(services, config_file(self.config_path, "engine.json"))
        self.planners = default_planners(self.engine_config.planners)
        self.engine = Engine(self.registry, self.planners, self.engine_config, services)

    def use_indexes(self, index_cache: Callable[..., IndexCache]) -> None:
        """Index caches come from `index_cache` (IndexCache's arguments) from now on, e.g. one
        that searches a KB's shards on a cluster (core/kb/sharding/sharded.py)."""
        self._index_cache = index_cache
        self._build()

    def use_views(self, view_of: Callable[[KBView], KBView]) -> None:
        """A run reads `view_of(the caller's view)` from now on, e.g. one whose units are fetched
        from the shards that hold them (core/kb/sharding/sharded_view.py). `view` stays the KB's
        own: the explorer's screens and memory read it on the UI thread, never across a network."""
        self._view_of = view_of

    def with_retrieval(self, retrieval: RetrievalConfig) -> Session:
        """A sibling on the same KB and rules with another retrieval config (e.g. RRF fusion)."""
        sibling = copy.copy(self)
        sibling.retrieval = retrieval
        sibling._lock = threading.Lock()
        sibling._guard = threading.Lock()
        sibling._rebuilt_for = set(self._rebuilt_for)
        sibling._build()
        return sibling

    def view(self, caller: Caller) -> KBView:
        return self._current()[0].view(caller)

    def _current(self) -> tuple[KnowledgeBase, IndexCache, Engine]:
        """KB, indexes and engine, read together; first rebuilt from the KB files when a cache
        file they map was truncated or rewritten under this session (reading it could kill the
        process with SIGBUS: core/store/mapped.py). Said once, as an INDEX_CACHE warning."""
        if damaged_mappings().keys() - self._rebuilt_for:
            self._rebuild_damaged()
        with self._lock:
            return self.kb, self.indexes, self.engine

    def _rebuild_damaged(self) -> None:
        with self._guard:
            damaged = damaged_mappings()
            if not damaged.keys() - self._rebuilt_for:
                return  # another thread rebuilt meanwhile
            store = self.kb.store
            if store is not None:
                from core.store.vector_sets import vectors_of  # only a damaged cache needs it here

                store.drop_damaged(sorted(set(damaged.values())))
                vectors_of(store).forget_all()
            self._rebuilt_for |= damaged.keys()
            kb = self.kb.rebuilt()
            with self._lock:
                self.kb, self.indexes = kb, None  # type: ignore[assignment]  # until _build: it reuses nothing damaged
                self._build()

    def check_request(self, request: Request) -> None:
        """Refuse pins, exclusions and planners the registry does not know (RegistryError)."""
        for stage, plugin_id in request.pins.items():
            expected = next(t for t, name in STAGE_NAMES.items() if name == stage)
            self.registry.get(plugin_id, expected)
        for plugin_id in request.excluded:
            self.registry.get(plugin_id)
        if request.planner and request.planner not in self.engine.planners:
            raise RegistryError(f"unknown planner {request.planner!r} (known: {', '.join(self.engine.planners)})")

    def run(self, request: Request, steering: Steering | None = None) -> Iterator[object]:
        # KB and engine are read together, so a run racing a reload never pairs one KB with the
        # other build's rules and indexes.
        kb, _, engine = self._current()
        view = self._view_of(kb.view(request.caller))
        # The caller's view's version, not the KB's: it must not change when only units the
        # caller cannot see do.
        return _guarded(engine.run(request, view, kb_version=view.version, steering=steering), steering is not None)

    def costly_plugins(self) -> frozenset[str]:
        """Plugins worth holding before: costly by their descriptor, and able to run (an LLM plugin
        with no endpoint configured answers `unsupported` at once, so it costs nothing)."""
        return frozenset(
            plugin.id
            for stage in STAGE_NAMES
            for plugin in self.registry.of_type(stage)
            if plugin.descriptor.costly and (not plugin.descriptor.uses_llm or self.llm.configured)
        )

    def warm_up(self, caller: Caller) -> None:
        """Build what the first question needs (the stemmer, the caller's BM25 and ThinkingDB
        indexes) ahead of time, then merge BM25's per-file parts into one index (saved in the
        cache, so the next open reads it); the explorer calls it in a worker after first paint."""
        kb, indexes, _ = self._current()
        view_indexes = indexes.for_view(kb.view(caller))
        view_indexes.bm25
        view_indexes.tdb
        view_indexes.merge_bm25()

    def hdc_ready(self, caller: Caller) -> bool:
        """Whether the caller's HDC index exists (stored vectors make building it quick)."""
        kb, indexes, _ = self._current()
        return indexes.for_view(kb.view(caller)).has("hdc")

    def warm_up_hdc(self, caller: Caller) -> None:
        """Build the caller's HDC index (the escalation lane); the explorer runs it after warm_up."""
        kb, indexes, _ = self._current()
        indexes.for_view(kb.view(caller)).hdc

    def warm_up_tags(
        self,
        caller: Caller,
        cancelled: Callable[[], bool] = lambda: False,
        busy: Callable[[], bool] = lambda: False,
        pause: Callable[[], object] = lambda: None,
    ) -> int:
        """Tag the caller's view's sentences the index store does not hold yet, a slice at a time
        and resting between slices (waiting while `busy()`, and at `pause()` before each sentence),
        then store them (core/nlp/tag_store.py); the explorer runs it in a worker once the indexes
        are ready. Returns how many it tagged."""
        from core.cnl import split_sentences
        from core.nlp.tag_store import warm
        from core.nlp.tagging import tag_text

        view = self.view(caller)
        sentences = (s.text for unit in view.units for s in split_sentences(unit.body))
        return warm(self._cache_root(), sentences, tag_text, cancelled=cancelled, busy=busy, pause=pause)

    def _cache_root(self) -> Path | None:
        """The KB's own store's folder (the one the session was opened with, not the environment's);
        none when that store is off or was refused (not ours, writable by others)."""
        from core.store.location import cache_root

        store = self.kb.store
        return (store.root if store.enabled else None) if store is not None else cache_root()

    def unit(self, unit_id: str, caller: Caller) -> KnowledgeUnit | None:
        return self.view(caller).get(unit_id)

    def view_version(self, caller: Caller) -> str:
        """The version a run asked now would carry (`RunStarted.kb_version`)."""
        return self.view(caller).version

    def units(self, caller: Caller) -> Sequence[KnowledgeUnit]:
        """The caller's view in id order; a stored unit is restored when read, so listing a
        million units costs nothing until they are shown."""
        return self.view(caller).units

    def diagnostics(self) -> list[Diagnostic]:
        return [*self.kb.diagnostics, *self.synonym_problems, *self.ruleset.diagnostics, *self.plugin_problems]

    def health(self, caller: Caller | None = None) -> Health:
        """The diagnostics counted by origin, with the one-line summary the CLI prints: for
        `caller`, only those about what the caller's view holds (`caller_diagnostics`); without
        one, the whole KB's, for author surfaces."""
        with self._lock:
            kb = self.kb
        kb_diagnostics = kb.diagnostics if caller is None else caller_diagnostics(kb.diagnostics, kb.view(caller))
        # Synonyms live in the KB folder: their problems count as the KB's, as diagnostics() lists them.
        return health_of([*kb_diagnostics, *self.synonym_problems], self.ruleset, self.plugin_problems)

    def rules(self) -> list[dict[str, Any]]:
        """The loaded rules as plain rows for display: premises, conclusion, weight and position."""
        rules_file = str(self._rules_file())
        return [
            {
                "id": rule.id,
                "premises": [str(p) for p in rule.when],
                "conclusion": str(rule.then),
                "weight": rule.weight,
                "description": rule.description,
                "file": rules_file,
                "line": self.ruleset.rule_lines.get(rule.id, 1),
            }
            for rule in self.ruleset.rules
        ]

    def plugin_ids(self) -> dict[str, list[str]]:
        ids = {
            STAGE_NAMES[t]: [p.id for p in self.registry.of_type(t)] for t in PluginType if t is not PluginType.PLANNER
        }
        ids["planner"] = list(self.engine.planners)
        return ids

    def owns_file(self, path: Path) -> bool:
        """Whether `path` is a KB file (or would be read as one) or a JSON file of the config
        folder: the files a trace or export must never replace (`core.infra.safe_io`'s `protected`)."""
        if self.kb.holds(path):
            return True
        target = Path(os.path.realpath(path))
        return target.suffix.lower() == ".json" and target.parent == Path(os.path.realpath(self.config_path))

    def _rules_file(self) -> Path:
        """The config folder's rules once it has had them (deleted mid-edit, the last good ones
        stay), the bundled ones while it never has."""
        path = config_file(self.config_path, RULES_FILE)
        self._own_rules = self._own_rules or path.parent == self.config_path
        return self.config_path / RULES_FILE if self._own_rules else path

    def fingerprint(self) -> str:
        files = synonyms_file.synonym_files(self.kb_paths)
        return KnowledgeBase.fingerprint_of([*self.kb_paths, self._rules_file(), *files])

    def reload(self) -> list[Diagnostic]:
        """Re-read KB and rules; a KB that now has errors still loads its valid units (DESIGN §4),
        and a unit whose new text fails is withdrawn, never kept in its last good version."""
        # Only files whose stat changed are read and tokenised again (their segments rebuilt).
        current = self._current()[0]
        back_into_collections()  # the KB being replaced may be collected again once no run holds it
        kb = current.reload().failing_closed(current)
        # Broken JSON mid-edit keeps every last good rule; one broken rule keeps its last good
        # version. Rules only derive facts from the caller's view, so this never widens it.
        ruleset = load_rules(self._rules_file()).keeping_last_good(self.ruleset)
        synonyms, synonym_problems = synonyms_file.load(self.kb_paths)
        with self._lock:
            self.kb, self.ruleset = kb, ruleset
            self.synonyms, self.synonym_problems = synonyms, synonym_problems
            self._build()
        _outside_collections(kb)
        return self.diagnostics()


def _same_view(view: KBView) -> KBView:
    return view


# From this many units a loaded KB's objects are kept out of the cyclic collector (below).
FROZEN_FROM_UNITS = 20_000


def _outside_collections(kb: KnowledgeBase) -> None:
    """A large KB's objects, which live as long as the session, moved out of the cyclic garbage
    collector's generations (`gc.freeze`, after one collection so no garbage is kept with them).
    A question allocates enough to trigger collections, and each full one walked every object of
    the KB: at 100k units two of them in 25 questions took 6 s of wall at load 34, most of those
    questions' CPU. Frozen objects are still freed by reference counting; a reload unfreezes
    them first. Small KBs (tests, the sample KB) skip it, and the collection it starts with."""
    if kb.unit_count >= FROZEN_FROM_UNITS:
        keep_out_of_collections()


def _guarded(events: Iterator[object], steered: bool) -> Iterator[object]:
    """A run's events, pulled inside `leases.question()`: a cache file mapped for it that another
    process would truncate meanwhile waits until the run ends (core/infra/leases.py).

    A run nobody steers is pulled through (`ask`, eval, benchmarks), and the cyclic collector
    waits until it ends (collector_paused): a question keeps ~1,000 pooled candidates and a
    trace's rows alive at once, reference counting frees them (a question leaves ~5 objects in
    cycles), and collections walking them again and again took ~10% of an `ask`'s CPU at 100k
    units (docs/benchmarks.md). The run's budgets bound the pause (requestTimeoutMs), as they
    bound the lease. A steered run (the explorer, `ask --step`) may be held at an event while the
    user looks, so the collector runs as before."""
    with leases.question(), contextlib.nullcontext() if steered else collector_paused():
        yield from events


def check_config_dir(directory: Path) -> list[Diagnostic]:
    """Everything wrong with a config folder's engine.json, retrieval.json and llm.json, and with the
    plugins engine.json names (factories that fail, unknown ids in planner orders), as `check` reports it.
    Each file is checked on its own, so one bad file does not hide another's problems."""
    problems: list[Diagnostic] = []
    loaded = []
    for load in (load_retrieval_config, load_engine_config, load_llm_config):
        try:
            loaded.append(load(directory))
        except ConfigError as exc:
            problems += exc.diagnostics
    if problems:
        return problems
    retrieval, engine, llm = cast("tuple[RetrievalConfig, EngineConfig, LlmConfig]", tuple(loaded))  # loaders' order
    ruleset = load_rules(config_file(directory, RULES_FILE))
    services = Services(retrieval, engine, ruleset, IndexCache(retrieval, ruleset), LlmClient(llm))
    return build_registry(services, config_file(directory, "engine.json"))[1]


__all__ = ["ConfigError", "Registry", "RuleSet", "Session", "check_config_dir"]
