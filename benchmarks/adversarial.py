"""ThinkingDB under an adversarial rule set (issue 14, "No budget stops a rule explosion").

Five extra rules on top of the default ones — two transitive, two symmetric and one 3-premise rule —
over ~6,800 synthetic facts on one densely connected graph, with every limit at the highest value
its pydantic model accepts (out-of-range values such as `maxDepth: 1000` are rejected when the
file is loaded). Symmetric + transitive rules over one connected component derive every pair of
its entities, so only the closure budgets (derived facts, rounds, wall time, memory) stop it; the
row reports how long a query takes to stop and the process's peak memory. Each size runs in a fresh
subprocess so `peak_mb` is that run's resident high-water mark, interpreter and imports included.

    python -m benchmarks.adversarial
"""

from __future__ import annotations

import dataclasses
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks import repeats, row
from benchmarks.synthetic import pseudo_words
from core.retrieval.rules import Limits, Pattern, Rule, RuleSet, load_rules
from core.retrieval.thinkingdb import ThinkingDB
from core.units import KnowledgeUnit, Role

OPS = ("closure_adversarial", "ask_adversarial")
DEFAULT_FACTS = 6_800
QUERIES = 12
RELATIONS = ("supports", "part_of", "depends_on", "uses", "provides", "relevant_for")
_SHARE = (0.3, 0.15, 0.2, 0.15, 0.1, 0.1)


def _rule(rule_id: str, when: list[tuple[str, str, str]], then: tuple[str, str, str]) -> Rule:
    return Rule(
        id=rule_id,
        when=[Pattern(s=s, r=r, o=o) for s, r, o in when],
        then=Pattern(s=then[0], r=then[1], o=then[2]),
        weight=1.0,
        max_depth=Limits.model_fields["max_depth"].metadata[-1].le,
    )


def adversarial_rules() -> RuleSet:
    """The default rules plus five explosive ones, every limit at its upper bound."""
    defaults = load_rules()
    extra = (
        _rule("supports_transitive", [("?x", "supports", "?y"), ("?y", "supports", "?z")], ("?x", "supports", "?z")),
        _rule("supports_symmetric", [("?x", "supports", "?y")], ("?y", "supports", "?x")),
        _rule("part_transitive", [("?x", "part_of", "?y"), ("?y", "part_of", "?z")], ("?x", "part_of", "?z")),
        _rule("depends_symmetric", [("?x", "depends_on", "?y")], ("?y", "depends_on", "?x")),
        _rule(
            "three_hop",
            [("?x", "uses", "?y"), ("?y", "supports", "?z"), ("?z", "part_of", "?w")],
            ("?x", "supports", "?w"),
        ),
    )
    highest = {
        name: f.metadata[-1].le
        for name, f in Limits.model_fields.items()
        if f.metadata and getattr(f.metadata[-1], "le", None)
    }
    limits = defaults.limits.model_copy(update={k: v for k, v in highest.items() if k != "min_confidence"})
    return dataclasses.replace(defaults, rules=(*defaults.rules, *extra), limits=limits)


def adversarial_units(n: int, seed: int = 5) -> tuple[list[KnowledgeUnit], list[str]]:
    """`n` facts over n/17 entities (one connected hub-heavy graph), and queries naming 1–3 of them."""
    rng = np.random.default_rng(seed)
    count = max(n // 17, 8)
    names = [w.title() for w in pseudo_words(count, rng)]
    weights = 1.0 / np.arange(1, count + 1) ** 0.8
    weights /= weights.sum()
    subjects, objects = rng.choice(count, size=n, p=weights), rng.choice(count, size=n, p=weights)
    relations = rng.choice(len(RELATIONS), size=n, p=_SHARE)
    units = [
        KnowledgeUnit(
            id=f"adv::chunk-{i // 1000:04d}::unit-{i % 1000:03d}",
            source_id="adv",
            chunk_id=f"adv::chunk-{i // 1000:04d}",
            role=Role.EXPLANATION,
            topic=names[s],
            claim=f"{names[s]} {RELATIONS[r].replace('_', ' ')} {names[o]}.",
            subject=names[s],
            relation=RELATIONS[r],
            object=names[o],
            confidence=1.0,
        )
        for i, (s, r, o) in enumerate(zip(subjects, relations, objects, strict=True))
        if s != o
    ]
    picks = rng.choice(count, size=(QUERIES, 3), p=weights)
    queries = [f"Why is {names[a]} supported by {names[b]} and relevant for {names[c]}?" for a, b, c in picks]
    return units, queries


def _row(n: int, op: str, times: list[float], stops: Counter) -> dict:
    """The shared row, with the whole process's RSS peak (interpreter and imports included: what a
    machine needs free for one ask) and how often each stop reason ended a query."""
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row("mrptui", n, op, times, peak_mb) | {"stop_reasons": dict(stops)}


def measure_closure(n: int) -> dict:
    """The closure alone in this process: build, then every query; times, stop reasons, RSS peak."""
    units, queries = adversarial_units(n)
    queries = queries[: repeats(QUERIES, 2)]  # a smoke run proves the op runs
    db = ThinkingDB.build(units, adversarial_rules())
    times, stops = [], Counter()
    for query in queries:
        started = time.perf_counter()
        stops[db.query(query).stop_reason] += 1
        times.append((time.perf_counter() - started) * 1000)
    return _row(len(units), "closure_adversarial", times, stops)


def rules_json(ruleset: RuleSet) -> dict:
    """A rules file holding `ruleset`, as an author would write it."""
    return {
        "limits": ruleset.limits.model_dump(by_alias=True),
        "rules": [rule.model_dump(by_alias=True, exclude_none=True) for rule in ruleset.rules],
    }


def measure_ask(n: int) -> dict:
    """A whole `ask` pinned to kb-thinkingdb, with the adversarial rules read from a config folder."""
    from core.infra.resources import config_dir
    from core.kb.knowledge_base import KnowledgeBase
    from core.kernel.contract import Request
    from core.kernel.session import Session

    units, queries = adversarial_units(n)
    queries = queries[: repeats(QUERIES, 2)]  # a smoke run proves the op runs
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder)
        for source in config_dir().glob("*.json"):
            shutil.copy(source, config / source.name)
        (config / "thinkingdb.json").write_text(json.dumps(rules_json(adversarial_rules())), encoding="utf-8")
        session = Session.from_kb(KnowledgeBase.from_units(units), config)
        times, stops = [], Counter()
        for query in queries:
            started = time.perf_counter()
            for event in session.run(Request(question=query, pins={"kb": "kb-thinkingdb"})):
                if getattr(event, "kind", "") == "proofs_found":
                    stops[event.stop_reason] += 1
            times.append((time.perf_counter() - started) * 1000)
    return _row(len(units), "ask_adversarial", times, stops)


def _in_subprocess(function: str, n: int) -> dict:
    code = f"import json; from benchmarks.adversarial import {function}; print(json.dumps({function}({n})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(sizes: list[int] | None = None, ops: set[str] | None = None) -> list[dict]:
    """Rows for `benchmarks.__main__` at the issue's ~6,800 facts (fewer when every size asked for is
    smaller); each row runs in a fresh process so its peak is its own. `ask_adversarial` also
    asks over the worst single unit (benchmarks/huge_unit.py: peak memory and cancel-to-stop)."""
    n = min(DEFAULT_FACTS, max(sizes or [DEFAULT_FACTS]))
    ops = set(OPS) if ops is None else ops
    rows = [_in_subprocess("measure_closure", n)] if "closure_adversarial" in ops else []
    if "ask_adversarial" in ops:
        from benchmarks import huge_unit

        rows += [_in_subprocess("measure_ask", n), *huge_unit.rows()]
    return rows


if __name__ == "__main__":
    for row in run():
        print(json.dumps(row))
