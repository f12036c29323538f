"""Author-controlled synonyms, in the Solr `synonyms.txt` format, applied to questions.

A KB folder may hold a file named `synonyms.txt` (at any depth; it is never read as KB text):
- `notebook, laptop`: equivalent terms; a question naming any of them also searches for the rest;
- `reconditioned => refurbished`: explicit mapping; a question naming the left side searches for
  the right side instead (Solr's replace semantics); several terms may stand on either side;
- blank lines and `#` comments are ignored; terms may be several words (`sea biscuit, seabiscuit`).

Terms go through the same text pipeline as questions and units (core.text.tokenizer), so `notebooks`
matches `notebook`. Synonyms change only the question's terms for the BM25 and HDC lanes; the
units are indexed as written, and every expansion is reported (`notebook → laptop`) in the score
breakdown and why-not. A bad line is a diagnostic with file and line; the other lines still apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.infra.diagnostics import Code, Diagnostic
from core.text.tokenizer import tokenize

FILE_NAME = "synonyms.txt"
MAX_FILE_BYTES = 1 << 20
MAX_RULES = 10_000
# A question expands through at most this many synonym matches, so a pathological file cannot
# blow one query up into thousands of terms.
MAX_EXPANSIONS = 64


@dataclass(frozen=True)
class SynonymRule:
    """`sources` found in a question add `targets`; `replace` drops the matched source terms."""

    sources: tuple[tuple[str, ...], ...]
    targets: tuple[tuple[str, ...], ...]
    replace: bool
    file: str
    line: int
    # Each phrase as the author wrote it, for explanations ("reconditioned", not its stem).
    written: dict[tuple[str, ...], str] = field(default_factory=dict, compare=False, hash=False)

    def words(self, phrase: tuple[str, ...]) -> str:
        return self.written.get(phrase, " ".join(phrase))


@dataclass(frozen=True)
class SynonymMatch:
    """One expansion applied to a question: what it said, what was searched, and where the rule is."""

    source: str
    target: str
    file: str
    line: int

    def label(self) -> str:
        return f"{self.source} → {self.target}"


@dataclass(frozen=True)
class Expansion:
    """A query's terms after synonym expansion, and the synonyms that added each new term."""

    terms: list[str]
    matches: tuple[SynonymMatch, ...] = ()
    # Each added term and the matches that added it, for explanations.
    added: dict[str, tuple[SynonymMatch, ...]] = field(default_factory=dict)

    def via(self, term: str) -> str:
        """`notebook → laptop` when `term` came from a synonym, else ""."""
        return ", ".join(m.label() for m in self.added.get(term, ()))


class Synonyms:
    """The rules of every synonyms file of a KB; empty when there is none."""

    def __init__(self, rules: Sequence[SynonymRule] = (), files: Sequence[Path] = ()):
        self.rules = tuple(rules)
        self.files = tuple(files)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def expand(self, tokens: Sequence[str]) -> Expansion:
        """The question's terms with synonyms applied (originals first, added terms after)."""
        if not self.rules or not tokens:
            return Expansion(list(tokens))
        kept = list(tokens)
        removed: set[int] = set()
        added: dict[str, list[SynonymMatch]] = {}
        matches: list[SynonymMatch] = []
        for rule in self.rules:
            for source, positions in _occurrences(tokens, rule.sources):
                if len(matches) >= MAX_EXPANSIONS:
                    break
                if rule.replace:
                    removed.update(positions)
                for target in rule.targets:
                    if target == source:
                        continue
                    match = SynonymMatch(rule.words(source), rule.words(target), rule.file, rule.line)
                    matches.append(match)
                    for term in target:
                        added.setdefault(term, []).append(match)
        terms = [t for i, t in enumerate(kept) if i not in removed]
        terms += [t for t in added if t not in terms]
        return Expansion(terms, tuple(dict.fromkeys(matches)), {t: tuple(dict.fromkeys(m)) for t, m in added.items()})


def _occurrences(tokens: Sequence[str], phrases: Iterable[tuple[str, ...]]) -> list[tuple[tuple[str, ...], range]]:
    found = []
    for phrase in phrases:
        n = len(phrase)
        for start in range(len(tokens) - n + 1):
            if tuple(tokens[start : start + n]) == phrase:
                found.append((phrase, range(start, start + n)))
    return found


def parse(text: str, file: str) -> tuple[list[SynonymRule], list[Diagnostic]]:
    rules: list[SynonymRule] = []
    problems: list[Diagnostic] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if len(rules) >= MAX_RULES:
            problems.append(_problem(f"more than {MAX_RULES} rules; the rest are ignored", file, number))
            break
        rule = _rule(line, file, number, problems)
        if rule is not None:
            rules.append(rule)
    return rules, problems


def _rule(line: str, file: str, number: int, problems: list[Diagnostic]) -> SynonymRule | None:
    sides = line.split("=>")
    if len(sides) > 2:
        problems.append(_problem("more than one '=>' on a line", file, number))
        return None
    groups = []
    written: dict[tuple[str, ...], str] = {}
    for side in sides:
        words = [w.strip() for w in side.split(",")]
        if any(not w for w in words):
            problems.append(_problem(f"empty term in {side.strip()!r}", file, number))
            return None
        phrases = []
        for word in words:
            stems = tuple(tokenize(word))
            if not stems:
                problems.append(
                    _problem(f"{word!r} has no searchable word (only stopwords or punctuation)", file, number)
                )
                return None
            phrases.append(stems)
            written.setdefault(stems, " ".join(word.split()))
        groups.append(tuple(dict.fromkeys(phrases)))
    if len(groups) == 1:
        if len(groups[0]) < 2:
            problems.append(_problem("an equivalence needs at least two terms: 'a, b'", file, number))
            return None
        return SynonymRule(groups[0], groups[0], replace=False, file=file, line=number, written=written)
    return SynonymRule(groups[0], groups[1], replace=True, file=file, line=number, written=written)


def _problem(message: str, file: str, line: int) -> Diagnostic:
    return Diagnostic(code=Code.INVALID_SYNONYM, message=message, file=file, line=line)


def synonym_files(paths: Iterable[Path]) -> list[Path]:
    """Every `synonyms.txt` under the KB paths (a path may also name one directly), sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += [
                p for p in path.rglob(FILE_NAME) if not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
        elif path.name == FILE_NAME and path.is_file():
            found.append(path)
    return sorted(dict.fromkeys(found))


def load(paths: Iterable[Path]) -> tuple[Synonyms, list[Diagnostic]]:
    """The synonyms of the KB at `paths`, with a diagnostic for each bad line or unreadable file."""
    rules: list[SynonymRule] = []
    problems: list[Diagnostic] = []
    files = synonym_files(paths)
    for file in files:
        try:
            if file.stat().st_size > MAX_FILE_BYTES:
                problems.append(_problem(f"over the {MAX_FILE_BYTES}-byte limit for a synonyms file", str(file), 1))
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            problems.append(Diagnostic(code=Code.FILE_UNREADABLE, message=exc.strerror or str(exc), file=str(file)))
            continue
        found, bad = parse(text, str(file))
        rules += found
        problems += bad
    return Synonyms(rules, files), problems
