"""ThinkingDB rules and limits (`config/thinkingdb.json`): positive Horn rules, validated one by one.

A bad rule never stops the others: each problem becomes a diagnostic pointing at the rule's line,
the rule is dropped (unknown relations only warn), and the engine runs with whatever is left.
"""

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from core.infra.config import ConfigError, read_json
from core.infra.diagnostics import Code, Diagnostic, Severity, did_you_mean
from core.infra.resources import config_file
from core.units import Relation

MAX_PREMISES = 3
BUILTIN_RELATIONS = frozenset(r.value for r in Relation)
_TOP_LEVEL_KEYS = ("limits", "relations", "rules")
# Quotes and brackets are stripped at both edges and sentence punctuation at the end; `+`, `#`
# and a leading `.` are kept so that "C++", "C#" and ".NET" stay distinct symbols. The only
# whitespace left after the join is " ". str.strip, not a `[...]+$` regex: that one is quadratic
# in a run of these characters inside a name ("a....b").
_LEADING = "\"'`([{< "
_TRAILING = "\"'`)]}>.,;:!? "


def symbol_key(name: str) -> str:
    """Case-insensitive identity of a symbol ("Orion_Cluster." and "orion cluster" are one)."""
    text = " ".join(name.casefold().replace("_", " ").replace("-", " ").split())
    return text.lstrip(_LEADING).rstrip(_TRAILING)


def relation_key(name: str) -> str:
    """Relation names compare as lowercase words joined by `_` ("Depends on" is depends_on)."""
    return "_".join(name.casefold().replace("-", " ").replace("_", " ").split())


def is_variable(term: str) -> bool:
    return term.startswith("?")


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid", strict=True)


class Pattern(_Model):
    """One premise or conclusion: subject, relation and object; `?name` terms are variables."""

    s: str
    r: str
    o: str

    @field_validator("s", "o")
    @classmethod
    def _term(cls, value: str) -> str:
        if is_variable(value):
            if not value[1:].strip():
                raise ValueError("a variable needs a name after '?'")
            return value.strip()
        if not symbol_key(value):
            raise ValueError("a constant term must contain a name")
        return value.strip()

    @field_validator("r")
    @classmethod
    def _relation(cls, value: str) -> str:
        if is_variable(value):
            raise ValueError("relations must be names; relation variables are not supported")
        key = relation_key(value)
        if not key:
            raise ValueError("a relation name is required")
        return key

    def variables(self) -> set[str]:
        return {t for t in (self.s, self.o) if is_variable(t)}

    def __str__(self) -> str:
        return f"{self.s} {self.r} {self.o}"


# Upper bounds of the rule limits. A value past one is an error at its line and the default is
# used (docs/decisions.md): a clamp would silently run a different configuration from the file.
# The closure budgets below stop a query whatever these allow; the bounds keep each figure in a
# range where the budgets, not the machine, are what stops it.
MAX_DEPTH = 32


class Rule(_Model):
    id: str = Field(min_length=1)
    description: str = ""
    when: list[Pattern]
    then: Pattern
    weight: float
    # Rounds of the fixpoint in which this rule may fire (capped by the global maxDepth).
    max_depth: int | None = Field(default=None, ge=1, le=MAX_DEPTH)


class Limits(_Model):
    max_depth: int = Field(default=3, ge=1, le=MAX_DEPTH)
    max_seed_facts: int = Field(default=8, ge=1, le=1_024)
    max_derived_facts: int = Field(default=64, ge=0, le=100_000)
    max_proofs: int = Field(default=32, ge=1, le=1_000)
    min_confidence: float = Field(default=0.15, ge=0, le=1)
    distance_penalty: float = Field(default=0.25, ge=0, le=10)
    goal_bonus: float = Field(default=1.15, gt=0, le=10)
    seed_bonus: float = Field(default=1.10, gt=0, le=10)
    # Our additions, bounding a query's work on hub-heavy KBs: forward hops from a hub can still
    # reach most of a KB, so the neighbourhood keeps this many facts (nearest hops first), and
    # one rule-body join keeps this many rows (nearest driving facts first).
    max_neighbourhood_facts: int = Field(default=2048, ge=1, le=200_000)
    max_join_rows: int = Field(default=65536, ge=1, le=1_000_000)
    # Closure budgets (ours): whatever the limits above allow, a query's fixpoint stops after this
    # much wall time, or once the arrays it holds (fact table, pending conclusions, join rows)
    # would pass this size; the stop reason names the budget.
    max_closure_ms: int = Field(default=2_000, ge=1, le=60_000)
    max_closure_mb: int = Field(default=256, ge=1, le=1_024)


@dataclass(frozen=True)
class RuleSet:
    """The rules and limits read from thinkingdb.json, and what was wrong with the file."""

    rules: tuple[Rule, ...] = ()
    limits: Limits = field(default_factory=Limits)
    relations: frozenset[str] = BUILTIN_RELATIONS
    diagnostics: tuple[Diagnostic, ...] = ()
    # Line of each kept rule in its file, for editors and the rules screen.
    rule_lines: Mapping[str, int] = field(default_factory=dict)
    # False when the file could not be read as a JSON object: no rule in it could be looked at.
    file_valid: bool = True
    # Entries in the file's "rules" list (None when the file was not readable).
    declared: int | None = None
    # Ids of the entries that failed validation and were dropped.
    rejected_ids: frozenset[str] = frozenset()
    path: str = ""

    def keeping_last_good(self, previous: "RuleSet") -> "RuleSet":
        """This rule set, with the previous version of each rule that no longer validates.

        A running session calls it on reload: a file that no longer parses keeps all the previous
        rules, and a single broken rule keeps its last good version; both are named in warnings.
        """
        if not self.file_valid:
            if not previous.rules:
                return self
            kept = Diagnostic(
                code=Code.RULES_LAST_GOOD_KEPT,
                file=self.path or previous.path,
                severity=Severity.WARNING,
                message=f"rules file invalid: the last good {len(previous.rules)} rules are kept",
            )
            return replace(previous, diagnostics=(*self.diagnostics, kept), file_valid=False)
        kept_rules = [rule for rule in previous.rules if rule.id in self.rejected_ids]
        if not kept_rules:
            return self
        notes = tuple(
            Diagnostic(
                code=Code.RULES_LAST_GOOD_KEPT,
                file=self.path,
                line=previous.rule_lines.get(rule.id, 1),
                severity=Severity.WARNING,
                message=f"rule {rule.id}: invalid edit, last good version kept",
            )
            for rule in kept_rules
        )
        lines = {**{rule.id: previous.rule_lines.get(rule.id, 1) for rule in kept_rules}, **self.rule_lines}
        return replace(
            self, rules=(*self.rules, *kept_rules), diagnostics=(*self.diagnostics, *notes), rule_lines=lines
        )


RULES_FILE = "thinkingdb.json"


def load_rules(path: Path | None = None) -> RuleSet:
    """Load and validate a rules file; never raises, problems are in `.diagnostics`."""
    path = path or config_file(None, RULES_FILE)
    try:
        data = read_json(path)
    except ConfigError as exc:
        return RuleSet(diagnostics=tuple(exc.diagnostics), file_valid=False, path=str(path))
    return _Loader(path, path.read_text(encoding="utf-8")).load(data)


def check_rules_file(path: Path) -> list[Diagnostic]:
    """Every problem in a rules file, for `mrptui check`."""
    return list(load_rules(path).diagnostics)


class _Loader:
    def __init__(self, path: Path, text: str):
        self.path = path
        self.position = _Positions(text)
        self.diagnostics: list[Diagnostic] = []
        self.rejected: set[str] = set()

    def report(self, code: Code, message: str, loc: tuple[str | int, ...], warning: bool = False) -> None:
        line, col = self.position(loc)
        severity = Severity.WARNING if warning else Severity.ERROR
        self.diagnostics.append(
            Diagnostic(code=code, message=message, file=str(self.path), line=line, col=col, severity=severity)
        )

    def load(self, data: object) -> RuleSet:
        if not isinstance(data, dict):
            self.report(Code.INVALID_CONFIG, "the rules file must be a JSON object", ())
            return RuleSet(diagnostics=tuple(self.diagnostics), file_valid=False, path=str(self.path))
        for key in data:
            if key not in _TOP_LEVEL_KEYS:
                self.report(Code.INVALID_CONFIG, f"unknown key {key!r}{did_you_mean(key, _TOP_LEVEL_KEYS)}", (key,))
        limits = self._limits(data.get("limits", {}))
        relations = BUILTIN_RELATIONS | self._relations(data.get("relations", []))
        raw_rules = data.get("rules", [])
        rules, lines = self._rules(raw_rules, relations)
        declared = len(raw_rules) if isinstance(raw_rules, list) else 0
        return RuleSet(
            tuple(rules),
            limits,
            relations,
            tuple(self.diagnostics),
            lines,
            declared=declared,
            rejected_ids=frozenset(self.rejected),
            path=str(self.path),
        )

    def _limits(self, raw: object) -> Limits:
        """Valid limits are kept; each invalid one is reported at its line and takes its default."""
        try:
            return Limits.model_validate(raw)
        except ValidationError as exc:
            bad: set[str] = set()
            for err in exc.errors():
                loc = ("limits", *err["loc"])
                key = err["loc"][0] if err["loc"] else None
                if err["type"] == "extra_forbidden" and isinstance(key, str):
                    # A misspelt limit is dropped alone: falling back to every default would
                    # quietly undo the limits spelt right beside it.
                    self.report(Code.INVALID_CONFIG, f"{_dotted(loc)}: {_unknown_key(key, Limits)}; ignored", loc)
                    bad.add(key)
                    continue
                default = Limits.model_fields.get(_snake(key)) if isinstance(key, str) else None
                fallback = f"using the default {default.default}" if default else "using default limits"
                self.report(Code.INVALID_CONFIG, f"{_dotted(loc)}: {err['msg']}; {fallback}", loc)
                bad.add(key if default and isinstance(key, str) else "")
            if not isinstance(raw, dict) or "" in bad:
                return Limits()
            return Limits.model_validate({k: v for k, v in raw.items() if k not in bad})

    def _relations(self, raw: object) -> frozenset[str]:
        try:
            names = TypeAdapter(list[str]).validate_python(raw, strict=True)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ("relations", *err["loc"])
                self.report(Code.INVALID_CONFIG, f"{_dotted(loc)}: {err['msg']}", loc)
            return frozenset()
        return frozenset(relation_key(n) for n in names if relation_key(n))

    def _rules(self, raw: object, relations: frozenset[str]) -> tuple[list[Rule], dict[str, int]]:
        if not isinstance(raw, list):
            self.report(Code.INVALID_CONFIG, "rules must be a list", ("rules",))
            return [], {}
        kept: list[Rule] = []
        lines: dict[str, int] = {}
        seen: set[str] = set()
        for index, item in enumerate(raw):
            where = ("rules", index)
            rule_id = item.get("id") if isinstance(item, dict) else None
            if isinstance(rule_id, str) and rule_id in seen:
                message = f"rule id {rule_id!r} is already used; rule dropped"
                self.report(Code.RULE_DUPLICATE_ID, message, (*where, "id"))
                continue
            if isinstance(rule_id, str):
                seen.add(rule_id)
            rule = self._rule(item, where, relations)
            if rule is not None:
                kept.append(rule)
                lines[rule.id] = self.position(where)[0]
            elif isinstance(rule_id, str):
                self.rejected.add(rule_id)
        return kept, lines

    def _rule(self, item: object, where: tuple[str | int, ...], relations: frozenset[str]) -> Rule | None:
        if not isinstance(item, dict):
            self.report(Code.RULE_MALFORMED, "a rule must be a JSON object", where)
            return None
        try:
            rule = Rule.model_validate(item)
        except ValidationError as exc:
            label = item.get("id") if isinstance(item.get("id"), str) else f"#{where[-1]}"
            for err in exc.errors():
                key = err["loc"][-1] if err["loc"] else None
                if err["type"] == "extra_forbidden" and isinstance(key, str):
                    detail = _unknown_key(key, Rule if len(err["loc"]) == 1 else Pattern)
                else:
                    detail = err["msg"]
                message = f"rule {label}: {_dotted(err['loc'])}: {detail}"
                self.report(Code.RULE_MALFORMED, message, (*where, *err["loc"]))
            return None
        errors = len(self.diagnostics)
        self._check_body(rule, where)
        self._check_relations(rule, where, relations)
        has_errors = any(d.is_error for d in self.diagnostics[errors:])
        return None if has_errors else rule

    def _check_body(self, rule: Rule, where: tuple[str | int, ...]) -> None:
        name = f"rule {rule.id}"
        if not rule.when:
            self.report(Code.RULE_EMPTY_BODY, f"{name}: 'when' needs at least one premise", (*where, "when"))
        if len(rule.when) > MAX_PREMISES:
            self.report(
                Code.RULE_TOO_MANY_PREMISES,
                f"{name}: {len(rule.when)} premises, at most {MAX_PREMISES} are allowed",
                (*where, "when", MAX_PREMISES),
            )
        if not 0 < rule.weight <= 1:
            message = f"{name}: weight {rule.weight} is not in (0, 1]"
            self.report(Code.RULE_WEIGHT_OUT_OF_RANGE, message, (*where, "weight"))
        bound = set().union(*(p.variables() for p in rule.when))
        for var in sorted(rule.then.variables() - bound):
            self.report(
                Code.RULE_UNBOUND_HEAD_VARIABLE, f"{name}: {var} in 'then' is bound by no premise", (*where, "then")
            )

    def _check_relations(self, rule: Rule, where: tuple[str | int, ...], relations: frozenset[str]) -> None:
        patterns = [((*where, "when", i, "r"), p) for i, p in enumerate(rule.when)]
        for loc, pattern in [*patterns, ((*where, "then", "r"), rule.then)]:
            if pattern.r not in relations:
                self.report(
                    Code.RULE_UNKNOWN_RELATION,
                    f"rule {rule.id}: relation {pattern.r!r} is neither built in nor declared in 'relations'"
                    f"{did_you_mean(pattern.r, relations)}",
                    loc,
                    warning=True,
                )


def _unknown_key(key: str, model: type[_Model]) -> str:
    names = [field.alias or name for name, field in model.model_fields.items()]
    return f"unknown key{did_you_mean(key, names) or '; expected one of ' + ', '.join(names)}"


def _snake(key: str) -> str:
    """Field name of a limits key written in camelCase (the file's spelling) or snake_case."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _dotted(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in loc) or "<root>"


_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


def _members(text: str, start: int) -> dict[str | int, int]:
    """Offset of each member of the JSON object or array whose value begins at `start` (the first
    of a repeated key)."""
    opener = text[start : start + 1]
    if opener not in ("{", "["):
        return {}
    found: dict[str | int, int] = {}
    index, position = 0, _skip(text, start + 1)
    while position < len(text) and text[position] not in "}]":
        key: str | int = index
        if opener == "{":
            key, position = _DECODER.raw_decode(text, position)
            position = _skip(text, _skip(text, position) + 1)  # past the colon
        found.setdefault(key, position)
        _value, position = _DECODER.raw_decode(text, position)
        position = _skip(text, position)
        if text[position : position + 1] == ",":
            position = _skip(text, position + 1)
        index += 1
    return found


class _Positions:
    """Line and column of JSON paths in one (valid) JSON text. Each container is scanned once and
    lines come from a table of newline offsets, so placing every rule of a 10,000-rule file is
    linear in its size (walking from the start for each rule was quadratic)."""

    def __init__(self, text: str):
        self.text = text
        self._members: dict[int, dict[str | int, int]] = {}
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def _children(self, offset: int) -> dict[str | int, int]:
        found = self._members.get(offset)
        if found is None:
            found = self._members[offset] = _members(self.text, offset)
        return found

    def __call__(self, loc: tuple[str | int, ...]) -> tuple[int, int]:
        """1-based line and column of the deepest part of `loc` present in the text."""
        offset = _skip(self.text, 0)
        for part in loc:
            try:
                child = self._children(offset).get(part)
            except (ValueError, RecursionError):
                # read_json decoded this file, but raw_decode here runs a few frames deeper and can
                # overflow on nesting near the limit (and the file is read twice, so it may have
                # changed in between); the parent's position is still close enough.
                break
            if child is None:
                break
            offset = child
        line = bisect.bisect_left(self._newlines, offset)
        line_start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - line_start + 1
