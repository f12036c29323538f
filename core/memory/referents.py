"""Whom "she" means: a follow-up's pronoun replaced by the earlier mention that agrees with it and
scores best, or left alone, with the reason, when no mention is likely enough.

Agreement is a filter, never a weight: he/him/his → a person who is not known to be female;
she/her → a person not known to be male; it/its → a thing (a name not known to be someone, or a
noun that is no person); they/them/their → several
(a plural, a group, names joined by "and"). Dates and quantities are never mentions
(core/memory/mentions.py). The agreeing mentions are scored by features

    bias       1 (how likely any agreeing mention is, against none)
    recency    1 / (1 + turns back)          subject    the first phrase of its sentence
    repeated   log(1 + times its head is said)   named  a name, not a common noun
    salience   log(1 + times its head is said in the cited units' whole file, as the caller sees it)
    question / answer / story   where it was said      gender   its known gender is the pronoun's
    evidence   log(1 + times the story text shows the name is someone: gendered, saying or
               thinking, set beside a person noun; core/memory/people.py)
    foremost   the candidate with the most such evidence (the story's protagonist)
    ahead      1 / (1 + sentences) from the previous answer's sentence in the story to the next
               that says it (at or after it; core/memory/passage.py), 0 past 6
    behind     the same to the nearest sentence before it that says it

as `score = w · features`, and the choice is a softmax over the candidates and "none of them"
(score 0): the best candidate's probability is the confidence. The weights and the confidence
threshold are learned from CoQA's development conversations by scripts/learn_referents.py
(core/memory/data/referent_weights.json says from what, and how well they held out).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from core.memory.followup_cues import pronoun_groups
from core.memory.mentions import Mention, TurnText, heads, mentions_of, salience
from core.memory.passage import NOWHERE, Passage
from core.nlp.tagging import tag_text
from core.text.words import ARTICLES, CAUSATIVES, PRONOUN_GROUPS, UNAMBIGUOUS_POSSESSIVES

WEIGHTS = Path(__file__).resolve().parent / "data" / "referent_weights.json"
FEATURES = (
    "bias",
    "recency",
    "subject",
    "repeated",
    "salience",
    "named",
    "personal",
    "question",
    "answer",
    "story",
    "gender",
    "evidence",
    "foremost",
    "ahead",
    "behind",
)
GROUPS = PRONOUN_GROUPS
_WORD = re.compile(r"[A-Za-z']+")
# Candidates shown in an explanation: the rest are listed by count only.
SHOWN = 4


@dataclass(frozen=True)
class Model:
    """The learned referent model: feature weights, and the confidence each pronoun group needs."""

    weights: dict[str, float]
    # Per pronoun group (he, she, it, they): the confidence a rewrite needs.
    thresholds: dict[str, float]

    def score(self, features: dict[str, float]) -> float:
        return sum(self.weights.get(name, 0.0) * value for name, value in features.items())


@lru_cache(maxsize=1)
def model(path: Path = WEIGHTS) -> Model:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Model(
        {k: float(data["weights"].get(k, 0.0)) for k in FEATURES}, {g: float(data["thresholds"][g]) for g in GROUPS}
    )


@dataclass(frozen=True)
class Referent:
    """An agreeing mention as a pronoun's candidate: its features, score and probability."""

    text: str
    features: dict[str, float]
    score: float
    probability: float
    back: int


@dataclass(frozen=True)
class Choice:
    """One pronoun group's decision: the candidates, their features and the one chosen (or none)."""

    pronouns: tuple[str, ...]
    candidates: tuple[Referent, ...]
    chosen: Referent | None
    threshold: float
    weights: dict[str, float] = field(default_factory=dict)

    def note(self) -> str:
        """ "she → Anna (confidence 0.81; Anna 0.81, her mother 0.12; …)" or why not."""
        said = "/".join(self.pronouns)
        listed = ", ".join(f"{c.text} {c.probability:.2f}" for c in self.candidates[:SHOWN])
        more = len(self.candidates) - SHOWN
        listed += f" and {more} more" if more > 0 else ""
        if self.chosen is None:
            if not self.candidates:
                return f"no earlier mention agrees with '{said}' (asked as written)"
            names = " or ".join(c.text for c in self.candidates[:2])
            return f"could not tell who '{said}' is: {names} (confidence {self._best:.2f} < {self.threshold:.2f}; asked as written)"
        if not self.weights:
            return f"{said} → {self.chosen.text} (the subject of the sentence before, in this question)"
        parts = ", ".join(f"{k} {v:.2f}×{self.weights.get(k, 0.0):+.2f}" for k, v in self.chosen.features.items() if v)
        return (
            f"{said} → {self.chosen.text} (confidence {self.chosen.probability:.2f} ≥ {self.threshold:.2f}; "
            f"features {parts}; candidates {listed})"
        )

    @property
    def _best(self) -> float:
        return self.candidates[0].probability if self.candidates else 0.0


def agrees(group: str, mention: Mention) -> bool:
    if group == "he":
        return mention.person and mention.gender != "she" and not (mention.several and not mention.named)
    if group == "she":
        return mention.person and mention.gender != "he" and not (mention.several and not mention.named)
    if group == "it":
        # A name may be a thing or someone ("Petrel is a car ferry"): only one known to be someone
        # (a gender, a title, "X, the actor") is never "it"; a person noun never is.
        return mention.thing and not mention.personal and not mention.gender
    return mention.several and not mention.person


def features(
    mention: Mention, group: str, counts: dict[str, int], said: dict[str, int], passage: Passage = NOWHERE
) -> dict[str, float]:
    ahead, behind = passage.nearness(mention.text)
    return {
        "bias": 1.0,
        "recency": 1.0 / (1 + mention.back),
        "subject": float(mention.subject),
        "repeated": math.log1p(counts.get(mention.head, 0)),
        "salience": math.log1p(said.get(mention.head, 0)),
        "named": float(mention.named),
        "personal": float(mention.personal),
        "question": float(mention.source == "question"),
        "answer": float(mention.source == "answer"),
        "story": float(mention.source == "story"),
        "gender": float(bool(mention.gender) and mention.gender == group),
        "evidence": math.log1p(mention.evidence),
        "foremost": 0.0,  # set over the candidates together (_foremost)
        "ahead": ahead,
        "behind": behind,
    }


def candidates(
    group: str, mentions: Sequence[Mention], scorer: Model, document: str = "", passage: Passage = NOWHERE
) -> list[Referent]:
    """The agreeing mentions, one per referent, best first, with their
    probability against each other and "none of them"; `passage` places them against the previous
    answer's sentence of `document`."""
    counts = heads(mentions)
    said = salience(document)
    names = _full_names(mentions)
    merged: dict[str, tuple[dict[str, float], int]] = {}
    for mention in mentions:
        if not agrees(group, mention):
            continue
        # One referent said in several places (asked about, and the subject of the cited text)
        # has every place's features: each feature is its largest over the sayings.
        feats = features(mention, group, counts, said, passage)
        key = _key(mention, names)
        if key in merged:
            old, back = merged[key]
            feats = {k: max(v, old[k]) for k, v in feats.items()}
            mention_back = min(back, mention.back)
        else:
            mention_back = mention.back
        merged[key] = (feats, mention_back)
    merged = _foremost(merged)
    best = {key: (scorer.score(feats), feats, back) for key, (feats, back) in merged.items()}
    texts = {_key(m, names): m.text for m in mentions}
    texts.update({name.lower(): name for name in names.values()})
    total = 1.0 + sum(math.exp(s) for s, _, _ in best.values())
    found = [Referent(texts[k], f, s, math.exp(s) / total, back) for k, (s, f, back) in best.items()]
    return sorted(found, key=lambda c: (-c.score, c.back, c.text))


def _foremost(merged: dict[str, tuple[dict[str, float], int]]) -> dict[str, tuple[dict[str, float], int]]:
    """The candidate the story shows most often to be someone is its protagonist, likelier than
    the others whatever their counts (a comparison a weighted sum of each one's count cannot make)."""
    most = max((feats["evidence"] for feats, _ in merged.values()), default=0.0)
    if most <= 0:
        return merged
    return {k: ({**f, "foremost": float(f["evidence"] == most)}, back) for k, (f, back) in merged.items()}


def _full_names(mentions: Sequence[Mention]) -> dict[str, str]:
    """A one-word name → the one longer name it ends ("Farina" → "Dennis Farina"), when only one does."""
    longer: dict[str, set[str]] = {}
    for m in mentions:
        if m.named and len(m.text.split()) > 1:
            longer.setdefault(m.text.split()[-1].lower(), set()).add(m.text)
    return {short: next(iter(full)) for short, full in longer.items() if len(full) == 1}


def _key(mention: Mention, names: dict[str, str]) -> str:
    """A name said whole once and by its last word since ("Dennis Farina", "Farina") is one referent."""
    text = mention.text.lower()
    if mention.named and len(mention.text.split()) == 1:
        return names.get(text, mention.text).lower()
    return text


def choose(
    question: str,
    mentions: Sequence[Mention],
    scorer: Model | None = None,
    before: Sequence[Mention] = (),
    document: str = "",
    answer: str = "",
) -> list[Choice]:
    """A choice for each pronoun group the question holds. `before`: the mentions of the sentences
    asked before it in the same input, where a pronoun continues their subject ("Why was Ruth Berg
    …? What made her …?"), as English reads a text (core/answer/coref.py); memory is asked only when none
    there agrees. `answer`: the previous answer's text, placed in `document` (core/memory/passage.py)."""
    scorer = scorer or model()
    passage = Passage.of(document, answer)
    out = []
    own = mentions_of([TurnText(0, question)])
    # "Where did he put it?": two pronouns of one question are two referents, so a referent one
    # group took (he, she, it, they in that order) is no candidate of the next.
    taken: set[str] = set()
    for group, said in pronoun_groups(question).items():
        if _said_before(group, said, question, own):
            continue  # "Where does Anna sell her honey?": "her" is Anna, in the question itself
        earlier = sorted((m for m in before if agrees(group, m)), key=lambda m: not m.subject)
        if earlier:
            here = Referent(earlier[0].text, {"same question": 1.0, "subject": float(earlier[0].subject)}, 0.0, 1.0, 0)
            out.append(Choice(tuple(dict.fromkeys(said)), (here,), here, scorer.thresholds[group], {}))
            continue
        found = [c for c in candidates(group, mentions, scorer, document, passage) if c.text not in taken]
        threshold = scorer.thresholds[group]
        chosen = found[0] if found and found[0].probability >= threshold else None
        taken |= {chosen.text} if chosen is not None else set()
        out.append(Choice(tuple(dict.fromkeys(said)), tuple(found), chosen, threshold, scorer.weights))
    return out


def _said_before(group: str, said: list[str], question: str, own: Sequence[Mention]) -> bool:
    first = min(m.start() for m in _WORD.finditer(question) if m.group(0).lower() in said)
    return any(agrees(group, m) and 0 <= question.find(m.text) < first for m in own)


def _bare_infinitive(tokens, index: int) -> bool:
    """ "What made her move?": after a verb of causing or perceiving, "her" is the object and the
    next word a verb, whatever the tagger called it."""
    before = tokens[index - 1].word.lower() if index else ""
    return before in CAUSATIVES and index + 1 < len(tokens) and tokens[index + 1].word.lower() not in ARTICLES


def rewrite(question: str, choices: Sequence[Choice]) -> str:
    """The question with each chosen group's pronouns replaced: a possessive by "X's", any other by X."""
    tokens = tag_text(question)
    pieces, at = [], 0
    for index, token in enumerate(tokens):
        lower = token.word.lower()
        chosen = next((c.chosen for c in choices if c.chosen is not None and lower in c.pronouns), None)
        if chosen is None:
            continue
        following = tokens[index + 1].tag if index + 1 < len(tokens) else ""
        possessive = lower in UNAMBIGUOUS_POSSESSIVES or (
            lower == "her" and following in ("NOUN", "ADJ", "NUM", "PROPN") and not _bare_infinitive(tokens, index)
        )
        text = chosen.text
        pieces += [question[at : token.start], f"{text}'s" if possessive else text]
        at = token.end
    return "".join(pieces) + question[at:]
