"""The import contracts of docs/architecture.md, read from the source (every import counts: those
inside functions and under TYPE_CHECKING too, since they are couplings all the same).

- core never imports mrptui or textual;
- a core package imports only packages below it in LAYERS (lowest first);
- import cycles stay inside one package, and the ones there are listed in CYCLES, so a new one
  (or one that went away) shows up here.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS = [
    "core.infra",  # plumbing: safe io, cancellation, leases, progress, config, endpoints
    "core.text",  # tokenizer, sentences, synonyms
    "core.units",  # KnowledgeUnit, Intent, Caller: the shared data model
    "core.cnl",  # format readers, Intent CNL
    "core.retrieval",  # bm25/, hdc/, thinkingdb/, fusion, lanes: pure array code
    "core.store",  # persistent index segments
    "core.nlp",  # tagger, chunker, lexicon, tagged words
    "core.kb",  # KB, permitted view, per-view index cache, health, checks, sharding/ (a cluster's shards)
    "core.question",  # what a question asks
    "core.kernel",  # contract, engine, planners, steering, events, session
    "core.answer",  # answer stages
    "core.memory",  # conversation memory
    "core.plugins",  # sd/kb/gs/val adapters
    "core.eval",  # labelled, BEIR, SQuAD evaluation
]

# Strongly connected groups of modules (more than one module), each inside one package.
CYCLES: list[set[str]] = [
    # steering names the Request it steers (a type-only import); the contract carries Intervention
    {"core.kernel.contract", "core.kernel.steering"},
    # the build pool starts vector builds; vector reads wait for the pool's HDC sets
    {"core.store.pool", "core.store.vectors"},
    # ThinkingDB: facts run closure (over its fact table) and proofs, which read facts and seeds
    {
        "core.retrieval.thinkingdb.closure",
        "core.retrieval.thinkingdb.facts",
        "core.retrieval.thinkingdb.proofs",
        "core.retrieval.thinkingdb.seeds",
        "core.retrieval.thinkingdb.table",
    },
]
# The same for the explorer, whose folders (mrptui, screens, widgets, commands) count as packages:
# none (the app hands each component its collaborators; screens read the app as `mrptui.explorer`).
EXPLORER_CYCLES: list[set[str]] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(top: str = "core") -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / top).rglob("*.py"))}


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports: modules of `known` where one is named, else the dotted name."""
    found: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found[name].update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found[name].add(full if full in known else node.module)
    return found


def layer_of(module: str) -> str | None:
    return next((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), None)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative; groups of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


@pytest.fixture(scope="module")
def core_imports() -> dict[str, set[str]]:
    """core's imports, parsed once for the three tests that read them (~0.8 CPU s a parse of core)."""
    return imports(modules())


def test_core_never_imports_the_ui(core_imports: dict[str, set[str]]) -> None:
    found = core_imports
    bad = sorted(f"{m} imports {t}" for m, ts in found.items() for t in ts if t.split(".")[0] in ("mrptui", "textual"))
    assert bad == []


def test_every_core_module_is_in_a_layer() -> None:
    loose = [m for m in modules() if m != "core" and layer_of(m) is None]
    assert loose == [], "add the package to LAYERS (and to docs/architecture.md)"


def test_lower_layers_never_import_higher_ones(core_imports: dict[str, set[str]]) -> None:
    found = core_imports
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = []
    for module, targets in sorted(found.items()):
        own = layer_of(module)
        for target in sorted(targets):
            theirs = layer_of(target)
            if own and theirs and rank[theirs] > rank[own]:
                upward.append(f"{module} ({own}) imports {target} ({theirs})")
    assert upward == []


def test_import_cycles_stay_inside_one_package_and_are_the_known_ones(core_imports: dict[str, set[str]]) -> None:
    known = modules()
    found = core_imports
    graph = {m: {t for t in found.get(m, ()) if t in known} for m in known}
    groups = strongly_connected(graph)
    crossing = [sorted(g) for g in groups if len({layer_of(m) for m in g}) > 1]
    assert crossing == []
    assert sorted(sorted(g) for g in groups) == sorted(sorted(g) for g in CYCLES)


def test_the_explorers_import_cycles_are_the_known_ones() -> None:
    known = modules("mrptui")
    found = imports(known)
    graph = {m: {t for t in found.get(m, ()) if t in known} for m in known}
    groups = strongly_connected(graph)
    assert sorted(sorted(g) for g in groups) == sorted(sorted(g) for g in EXPLORER_CYCLES)


def test_core_has_at_most_fifteen_top_level_entries() -> None:
    # A newcomer reads core/ as a map (docs/architecture.md): a new concept goes into the package
    # it belongs to, not beside them.
    entries = sorted(p.name for p in (ROOT / "core").iterdir() if p.name != "__pycache__")
    assert len(entries) <= 15, entries
