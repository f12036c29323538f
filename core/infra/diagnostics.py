"""Errors and warnings as values: a code, a place and a message, collected rather than raised."""

import bisect
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Code(StrEnum):
    # Knowledge-unit validation (DS007 codes).
    MISSING_REQUIRED_FIELD = "MISSING_REQUIRED_FIELD"
    INVALID_ROLE_VALUE = "INVALID_ROLE_VALUE"
    INVALID_ACT_VALUE = "INVALID_ACT_VALUE"
    INVALID_RELATION_VALUE = "INVALID_RELATION_VALUE"
    INCOMPLETE_SYMBOLIC_FACT = "INCOMPLETE_SYMBOLIC_FACT"
    INVALID_CONFIDENCE_VALUE = "INVALID_CONFIDENCE_VALUE"
    CLAIM_AND_PROCEDURE_CONFLICT = "CLAIM_AND_PROCEDURE_CONFLICT"
    PROCEDURE_ROLE_MISMATCH = "PROCEDURE_ROLE_MISMATCH"
    UNKNOWN_FIELD = "UNKNOWN_FIELD"
    DUPLICATE_UNIT_ID = "DUPLICATE_UNIT_ID"
    DUPLICATE_FIELD = "DUPLICATE_FIELD"
    MALFORMED_LINE = "MALFORMED_LINE"
    INVALID_ID_FORMAT = "INVALID_ID_FORMAT"
    INVALID_DATE_VALUE = "INVALID_DATE_VALUE"
    UNTERMINATED_STRING = "UNTERMINATED_STRING"
    UNKNOWN_REFERENCE = "UNKNOWN_REFERENCE"
    EMPTY_DOCUMENT = "EMPTY_DOCUMENT"  # a JSONL document with neither title nor text
    # A line or key that reads like a permission field but is not read as one
    # (core/cnl/permissions.py), inside a unit and outside any.
    PERMISSION_NOT_READ = "PERMISSION_NOT_READ"
    PERMISSION_OUTSIDE_UNIT = "PERMISSION_OUTSIDE_UNIT"
    # Intent CNL (DS004).
    MISSING_INTENT_OUTPUT = "MISSING_INTENT_OUTPUT"
    EMPTY_INTENT_DOCUMENT = "EMPTY_INTENT_DOCUMENT"
    # Files.
    PATH_NOT_FOUND = "PATH_NOT_FOUND"
    FILE_UNREADABLE = "FILE_UNREADABLE"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    BINARY_FILE = "BINARY_FILE"
    INVALID_ENCODING = "INVALID_ENCODING"
    UNSUPPORTED_FILE_TYPE = "UNSUPPORTED_FILE_TYPE"
    TOO_MANY_PROBLEMS = "TOO_MANY_PROBLEMS"
    STALE_UNITS_KEPT = "STALE_UNITS_KEPT"
    # Whole-KB checks (`mrptui check`).
    EMPTY_KB = "EMPTY_KB"
    KB_TOO_LARGE = "KB_TOO_LARGE"  # past a whole-KB budget (inputs.maxKbUnits, ...): not opened
    SKIPPED_FILE = "SKIPPED_FILE"
    UNREACHABLE_UNIT = "UNREACHABLE_UNIT"
    LONG_UNIT = "LONG_UNIT"  # past HDC's maxUnitTokens: encoded from its start, quoted whole
    RULE_RELATION_NOT_IN_KB = "RULE_RELATION_NOT_IN_KB"
    UNKNOWN_LABELLED_ID = "UNKNOWN_LABELLED_ID"
    UNITS_WITHDRAWN = "UNITS_WITHDRAWN"
    INDEX_CACHE = "INDEX_CACHE"
    # Rules and configuration.
    INVALID_JSON = "INVALID_JSON"
    INVALID_CONFIG = "INVALID_CONFIG"
    RULE_UNBOUND_HEAD_VARIABLE = "RULE_UNBOUND_HEAD_VARIABLE"
    RULE_TOO_MANY_PREMISES = "RULE_TOO_MANY_PREMISES"
    RULE_EMPTY_BODY = "RULE_EMPTY_BODY"
    RULE_UNKNOWN_RELATION = "RULE_UNKNOWN_RELATION"
    RULE_DUPLICATE_ID = "RULE_DUPLICATE_ID"
    RULE_WEIGHT_OUT_OF_RANGE = "RULE_WEIGHT_OUT_OF_RANGE"
    RULE_MALFORMED = "RULE_MALFORMED"
    INVALID_SYNONYM = "INVALID_SYNONYM"
    RULES_LAST_GOOD_KEPT = "RULES_LAST_GOOD_KEPT"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Diagnostic(BaseModel):
    """One problem found in a file; `line` and `col` are 1-based."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    code: Code
    message: str
    file: str
    line: int = 1
    col: int = 1
    severity: Severity = Severity.ERROR
    # About a unit that writes a permission field (or a look-alike of one), or about a file that
    # holds such units: shown on author surfaces only, never counted for a caller (docs/security.md).
    author_only: bool = Field(default=False, exclude_if=lambda value: not value)
    # UNITS_WITHDRAWN only: how many units the note names (0: it names none its readers may see).
    units: int = Field(default=0, ge=0, exclude_if=lambda value: not value)

    def format(self) -> str:
        tag = "" if self.severity is Severity.ERROR else "warning: "
        return f"{self.file}:{self.line}:{self.col}: {tag}{self.code.value} {self.message}"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


PERMISSION_CODES = frozenset({Code.PERMISSION_NOT_READ, Code.PERMISSION_OUTSIDE_UNIT})


def for_author(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """`diagnostics` marked author-only."""
    return [d if d.author_only else d.model_copy(update={"author_only": True}) for d in diagnostics]


# Ids compared for a "did you mean" of a unit id: difflib costs ~80 µs an id of the usual
# `src::chunk::unit` shape, so a 200k-unit KB compared whole takes 16 s. A typo past the first
# characters sorts beside the id meant.
_ID_WINDOW = 1000


def did_you_mean_id(unit_id: str, sorted_ids: Sequence[str]) -> str:
    """`did_you_mean` among the ids of `sorted_ids` (in order) that sort around `unit_id`: the caller
    passes only ids its reader may see, so a suggestion never names a unit outside them."""
    at = bisect.bisect_left(sorted_ids, unit_id)
    near = range(max(0, at - _ID_WINDOW), min(len(sorted_ids), at + _ID_WINDOW))
    return did_you_mean(unit_id, [sorted_ids[i] for i in near])


def did_you_mean(word: str, choices: Iterable[str], key: Callable[[str], str] = str) -> str:
    """ "; did you mean 'X'?" for the closest known name to a misspelt `word`, else "".
    `key` is the part of a choice compared with `word` (the choice itself by default)."""
    from difflib import get_close_matches  # only a misspelt name pays for it

    options = {key(choice).casefold(): choice for choice in choices}
    match = get_close_matches(word.strip().casefold(), list(options), n=1, cutoff=0.6)
    return f"; did you mean {options[match[0]]!r}?" if match else ""
