"""A small synthetic KB on disk for the index-store tests: tide-table and beekeeping notes,
several files, some units restricted by ACL, region or dates. Deterministic per seed."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from core.cnl import to_markdown
from core.units import KnowledgeUnit, Role

WORDS = (
    "tide ebb flood neap spring harbour buoy chart sounding datum swell fetch estuary shoal "
    "hive brood comb queen drone nectar pollen varroa smoker super frame propolis swarm forage "
    "gauge lunar surge bar channel pier slack current wax honey mite colony apiary"
).split()
ROLES = [Role.DEFINITION, Role.EXPLANATION, Role.PROCEDURE, Role.COMPARISON, Role.DIAGNOSTIC]


def unit(rng: random.Random, source: str, index: int) -> KnowledgeUnit:
    role = rng.choice(ROLES)
    body = " ".join(rng.choices(WORDS, k=rng.randint(4, 30)))
    restricted = rng.random()
    return KnowledgeUnit(
        id=f"{source}::chunk-{index // 10:03d}::unit-{index % 10:03d}",
        source_id=source,
        chunk_id=f"{source}::chunk-{index // 10:03d}",
        role=role,
        topic=" ".join(rng.choices(WORDS, k=rng.randint(1, 5))),
        **({"procedure": body} if role is Role.PROCEDURE else {"claim": body}),
        condition=" ".join(rng.choices(WORDS, k=3)) if rng.random() < 0.2 else None,
        utility_note=" ".join(rng.choices(WORDS, k=6)) if rng.random() < 0.3 else None,
        acl=("crew:night",) if restricted < 0.15 else (),
        region="NORTH" if 0.15 <= restricted < 0.25 else None,
        effective_to=dt.date(2020, 1, 1) if 0.25 <= restricted < 0.3 else None,
    )


def write_kb(folder: Path, files: int = 4, per_file: int = 40, seed: int = 3) -> list[Path]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(files):
        source = f"notes{number}"
        path = folder / f"{source}.md"
        path.write_text(to_markdown(unit(rng, source, i) for i in range(per_file)), encoding="utf-8")
        paths.append(path)
    return paths
