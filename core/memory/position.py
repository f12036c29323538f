"""Where a follow-up's answer is likely to be: near the evidence the conversation just discussed.

A conversation walks through its text: on CoQA's development stories the next turn's answer is in
the unit the previous turn's answer came from about two times in three, and next in the one after
it. So a kb plugin, answering a turn of a conversation, adds to each pooled candidate's score a
**position prior** by where the candidate stands in its file against the units the latest earlier
turn cited (its *anchor*):

    same     the anchor unit itself          next     the unit right after one
    before   the unit right before one        further  two or more units away, in the same file

and nothing for a unit of another file or when there is no anchor. The prior is a learned weight
in the fused score's own units (scripts/learn_position.py fits a conditional logit over each
turn's candidates with the fused score and the four buckets as features, on CoQA's even
development stories, and stores weight / score weight), so it moves a unit only as much as the
retrieval evidence would have to differ to make the same difference.

Permissions: the anchor is only a record offered to this caller whose cited units are all in
this run's view with the content they had (core/memory/cited.py), and positions are counted over
the units of the file that this caller's view shows, so a unit the caller cannot see neither
anchors nor shifts a position.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from core.memory.cited import CitedView, Offered, usable
from core.units import KnowledgeUnit

WEIGHTS = Path(__file__).resolve().parent / "data" / "position_weights.json"
BUCKETS = ("same", "next", "before", "further")
# Units of one file read to place the candidates (budget: a file of more units is not placed).
MAX_FILE_UNITS = 5_000


class FileView(CitedView, Protocol):
    def in_file(self, file: str) -> Sequence[KnowledgeUnit]: ...


class _Offered(Offered, Protocol):
    # What `usable` reads, and the record's id.
    @property
    def id(self) -> str: ...


@lru_cache(maxsize=1)
def weights(path: Path = WEIGHTS) -> dict[str, float]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {bucket: float(data["weights"][bucket]) for bucket in BUCKETS}


def bucket(offset: int) -> str:
    return "same" if offset == 0 else "next" if offset == 1 else "before" if offset == -1 else "further"


@dataclass(frozen=True)
class Anchor:
    """The latest earlier turn that cited units the caller still sees as they were."""

    record: str
    turn: int
    unit_ids: tuple[str, ...]


@dataclass(frozen=True)
class Placed:
    """A candidate's position against the anchor: its bucket, its offset and the prior added."""

    bucket: str
    offset: int
    prior: float

    def note(self, anchor: Anchor) -> str:
        where = "cited by" if self.offset == 0 else f"{abs(self.offset)} {'after' if self.offset > 0 else 'before'}"
        return f"{self.bucket} ({where} turn {anchor.turn}'s answer) {self.prior:+.3f}"


def anchor_of(memory: Sequence[_Offered], view: CitedView | None) -> Anchor | None:
    kept, _ = usable([m for m in memory if m.kind == "turn" and m.unit_ids], view)
    latest = max(kept, key=lambda m: m.turn, default=None)
    if latest is None:
        return None
    return Anchor(latest.id, latest.turn, tuple(latest.unit_ids))


def placed(
    anchor: Anchor, candidate_ids: Iterable[str], view: FileView, learned: dict[str, float]
) -> dict[str, Placed]:
    """Each candidate in a file the anchor cited, placed against the nearest anchor unit."""
    wanted = set(candidate_ids)
    out: dict[str, Placed] = {}
    for order, at in _files(anchor, view):
        for uid in wanted & order.keys():
            offset = min((order[uid] - a for a in at), key=abs)
            name = bucket(offset)
            if uid not in out or abs(offset) < abs(out[uid].offset):
                out[uid] = Placed(name, offset, learned[name])
    return out


def neighbours(anchor: Anchor, view: FileView, learned: dict[str, float]) -> list[str]:
    """The units around the anchor whose bucket has a prior (the anchor's own, the next, the one
    before): pooled in a conversation whatever the question's words, since a follow-up ("On what
    date?", "Who said them?") often shares none with the passage it is about."""
    near = [offset for offset, name in ((0, "same"), (1, "next"), (-1, "before")) if learned[name] > 0]
    found: list[str] = []
    for order, at in _files(anchor, view):
        ids = list(order)
        found += [ids[a + o] for a in at for o in near if 0 <= a + o < len(ids)]
    return list(dict.fromkeys(found))


def _files(anchor: Anchor, view: FileView) -> list[tuple[dict[str, int], list[int]]]:
    """Per file the anchor cited: the reading-order index of each unit the view shows, and the
    anchor units' indexes."""
    anchors = [unit for unit in map(view.get, anchor.unit_ids) if unit is not None and unit.location is not None]
    out = []
    for file in dict.fromkeys(unit.location.file for unit in anchors if unit.location is not None):
        units = view.in_file(file)
        if len(units) > MAX_FILE_UNITS:
            continue
        order = {unit.id: index for index, unit in enumerate(units)}
        out.append((order, [order[unit.id] for unit in anchors if unit.id in order]))
    return out


@dataclass(frozen=True)
class Focus:
    """Whether a follow-up's answer may rest on a unit only the conversation's position vouches
    for: the kept unit with the largest prior (its bucket's learned weight, in fused-score units)
    against the learned threshold. Accepted, the answer stage neither asks the unit to say the
    question's own words ("In what city?" after "Where did Anna grow up?": the unit says where,
    not "city") nor calls its score faint: what the follow-up leaves out, the conversation said."""

    unit: str
    prior: float
    threshold: float
    # The least support score (the share of the question's focus terms its sentence says) a lead
    # in the accepted focus unit needs, learned (scripts/learn_focus.py --key min_support): a
    # follow-up rewords what the passage said ("What parts did he usually get?" of "generally as
    # either cops or gangsters"). None: the general threshold, as for any other sentence.
    min_support: float | None = None

    @property
    def accepted(self) -> bool:
        return self.prior >= self.threshold > 0

    def note(self) -> str:
        if self.accepted:
            support = "" if self.min_support is None else f"; a lead there needs support >= {self.min_support:.2f}"
            return (
                f"conversation focus: {self.unit} (position prior {self.prior:.3f} >= {self.threshold:.3f}): "
                f"the follow-up's words need not be said there{support}"
            )
        return f"conversation focus not used: {self.unit} (position prior {self.prior:.3f} < {self.threshold:.3f})"


@lru_cache(maxsize=1)
def focus_threshold(path: Path = WEIGHTS) -> float:
    """The learned least prior a follow-up's answer may rest on (0: never; scripts/learn_focus.py)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return float(data.get("focus", {}).get("min_prior", 0.0))


@lru_cache(maxsize=1)
def focus_min_support(path: Path = WEIGHTS) -> float | None:
    """The learned least support of a lead in the focus unit (None: not learned, the general one)."""
    learned = json.loads(path.read_text(encoding="utf-8")).get("focus", {}).get("min_support")
    return None if learned is None else float(learned["value"])


def focus_of(
    follow_up: bool, kept: Iterable[tuple[str, float]], threshold: float, min_support: float | None = None
) -> Focus | None:
    """The decision for a follow-up (`core.memory.followup.refers_back`) over its kept units'
    (id, position prior); None for a question that stands alone or no unit placed near the
    conversation's last evidence."""
    placed_units = [(uid, prior) for uid, prior in kept if prior > 0]
    if not follow_up or not placed_units:
        return None
    unit, prior = max(placed_units, key=lambda item: item[1])
    return Focus(unit, prior, threshold, min_support)


def explained(anchor: Anchor, places: dict[str, Placed], shown: int = 3) -> str:
    """ "conversation position (learned priors, turn 3's evidence): unit-a same (cited by turn 3's
    answer) +0.588; unit-b next (1 after turn 3's answer) +0.555" for a retrieval reason."""
    ranked = sorted(places.items(), key=lambda item: (-item[1].prior, abs(item[1].offset), item[0]))
    listed = "; ".join(f"{uid} {p.note(anchor)}" for uid, p in ranked[:shown] if p.prior)
    return f"conversation position (learned priors, turn {anchor.turn}'s evidence): {listed or 'no candidate near it'}"
