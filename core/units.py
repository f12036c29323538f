"""Knowledge units (DS005), intents, callers and the closed vocabularies they use."""

import builtins
import datetime as dt
import re
import unicodedata
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator


class Role(StrEnum):
    COMPARISON = "Comparison"
    EXPLANATION = "Explanation"
    PROCEDURE = "Procedure"
    DEFINITION = "Definition"
    EVALUATION = "Evaluation"
    DIAGNOSTIC = "Diagnostic"
    CONSTRAINT = "Constraint"
    NARRATIVE = "Narrative"
    DESCRIPTION = "Description"


class Act(StrEnum):
    COMPARE = "compare"
    EXPLAIN = "explain"
    RECOMMEND = "recommend"
    DIAGNOSE = "diagnose"
    IMPLEMENT = "implement"
    VERIFY = "verify"
    DEFINE = "define"
    EVALUATE = "evaluate"
    IDENTIFY = "identify"
    DESCRIBE = "describe"


class Relation(StrEnum):
    USES = "uses"
    PROVIDES = "provides"
    HAS_CAPABILITY = "has_capability"
    DEPENDS_ON = "depends_on"
    PART_OF = "part_of"
    INSTANCE_OF = "instance_of"
    RELEVANT_FOR = "relevant_for"
    SUPPORTS = "supports"
    MENTIONS = "mentions"
    ABOUT = "about"
    CAUSES = "causes"


ROLE_DEFAULT_ACTS: dict[Role, tuple[Act, ...]] = {
    Role.COMPARISON: (Act.COMPARE,),
    Role.EXPLANATION: (Act.EXPLAIN,),
    Role.PROCEDURE: (Act.IMPLEMENT,),
    Role.DEFINITION: (Act.DEFINE,),
    Role.EVALUATION: (Act.EVALUATE,),
    Role.DIAGNOSTIC: (Act.DIAGNOSE,),
    Role.CONSTRAINT: (Act.VERIFY,),
    Role.NARRATIVE: (Act.EXPLAIN, Act.DESCRIBE),
    Role.DESCRIPTION: (Act.DESCRIBE,),
}

ACT_PREFERRED_ROLES: dict[Act, tuple[Role, ...]] = {
    Act.COMPARE: (Role.COMPARISON, Role.EVALUATION),
    Act.EXPLAIN: (Role.EXPLANATION, Role.DIAGNOSTIC, Role.NARRATIVE),
    Act.RECOMMEND: (Role.COMPARISON, Role.EVALUATION, Role.PROCEDURE),
    Act.DIAGNOSE: (Role.DIAGNOSTIC, Role.EXPLANATION),
    Act.IMPLEMENT: (Role.PROCEDURE, Role.CONSTRAINT),
    Act.VERIFY: (Role.CONSTRAINT, Role.DEFINITION),
    Act.DEFINE: (Role.DEFINITION, Role.EXPLANATION),
    Act.EVALUATE: (Role.EVALUATION, Role.COMPARISON, Role.NARRATIVE),
    Act.IDENTIFY: (Role.NARRATIVE, Role.DESCRIPTION, Role.DEFINITION),
    Act.DESCRIBE: (Role.DESCRIPTION, Role.NARRATIVE, Role.EXPLANATION),
}


class SourceLocation(BaseModel):
    """Where a unit was read from, so errors and the TUI can point at the file."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    file: str
    line: int = 1
    col: int = 1  # several plain-text units can start on one line: (line, col) is reading order
    # Cut from running prose by the plain-text reader (a few sentences of a paragraph, by count),
    # not a unit an author wrote: answers quote only its sentences about the question.
    prose: bool = Field(default=False, exclude_if=lambda prose: not prose)


_CALENDAR_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class KnowledgeUnit(BaseModel):
    """One DS005 context unit plus the permission fields borrowed from seed 002."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    chunk_id: str = Field(min_length=1)
    role: Role
    topic: str = Field(min_length=1)
    claim: str | None = None
    procedure: str | None = None
    condition: str | None = None
    utility_acts: tuple[Act, ...] = ()
    utility_note: str | None = None
    phase_scopes: tuple[str, ...] = ()
    title: str | None = None
    subject: str | None = None
    relation: Relation | None = None
    object: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    acl: tuple[str, ...] = ()
    region: str | None = None
    effective_from: dt.date | None = None
    effective_to: dt.date | None = None
    location: SourceLocation | None = None
    current_turn: bool = False

    @field_validator("effective_from", "effective_to", mode="before")
    @classmethod
    def _calendar_date(cls, value: builtins.object) -> builtins.object:  # the field `object` shadows the builtin
        # pydantic's lax date also takes Unix timestamps ("0" is 1970-01-01) and datetimes: a
        # permission date is an ISO 8601 calendar date, YYYY-MM-DD, or an error.
        if isinstance(value, str) and not _CALENDAR_DATE.fullmatch(value.strip()):
            raise ValueError("expected an ISO 8601 calendar date such as 2026-04-01")
        if isinstance(value, (int, float)):
            raise ValueError("expected an ISO 8601 calendar date such as 2026-04-01, not a number")
        return value

    @model_validator(mode="after")
    def _check_shape(self) -> "KnowledgeUnit":
        if (self.claim is None) == (self.procedure is None):
            raise ValueError("exactly one of claim and procedure is required")
        if (self.procedure is not None) != (self.role is Role.PROCEDURE):
            raise ValueError("procedure is used if and only if the role is Procedure")
        written = (self.subject is not None) + (self.relation is not None) + (self.object is not None)
        if 0 < written < 3:
            raise ValueError("subject, relation and object are all-or-none")
        return self

    @property
    def acts(self) -> tuple[Act, ...]:
        """The unit's utility acts, or its role's defaults when none were written."""
        return self.utility_acts or ROLE_DEFAULT_ACTS[self.role]

    @property
    def body(self) -> str:
        """The claim, or the procedure for Procedure units."""
        return self.claim if self.claim is not None else (self.procedure or "")

    @property
    def has_triple(self) -> bool:
        return self.relation is not None


def is_public(unit: KnowledgeUnit) -> bool:
    """Whether the unit writes no permission field: every caller on every date sees it."""
    return not unit.acl and unit.region is None and unit.effective_from is None and unit.effective_to is None


MAX_TAG_LENGTH = 200
MAX_CALLER_TAGS = 1000
# Separators of the lists tags arrive in (CLI flags, config files): a tag holding one could pass
# for two tags wherever something joins or splits them.
TAG_SEPARATORS = frozenset(",|;")
# Control, format (zero-width, bidi overrides), surrogate, private-use and unassigned characters
# make two tags that look equal differ, or hide what a tag says.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def check_identity_text(value: str, what: str = "tag") -> str:
    """A caller tag or region as given, or ValueError saying which character is not allowed.

    Rejected rather than repaired: separators, whitespace, invisible characters, and text that
    NFKC normalisation would change (full-width and other compatibility look-alikes). Repairing
    would let "ｍerchant" match an Acl written "merchant"; rejecting keeps matching exact.
    """
    if not value:
        raise ValueError(f"a caller {what} must not be empty")
    if len(value) > MAX_TAG_LENGTH:
        raise ValueError(f"a caller {what} is at most {MAX_TAG_LENGTH} characters, not {len(value)}")
    for char in value:
        if char in TAG_SEPARATORS or char.isspace() or unicodedata.category(char).startswith("Z"):
            raise ValueError(f"caller {what} {value!r} contains the separator or space {char!r}")
        if unicodedata.category(char) in _INVISIBLE_CATEGORIES:
            raise ValueError(f"caller {what} {value!r} contains the invisible or control character U+{ord(char):04X}")
    if unicodedata.normalize("NFKC", value) != value:
        raise ValueError(
            f"caller {what} {value!r} is not in NFKC normal form (write {unicodedata.normalize('NFKC', value)!r})"
        )
    return value


Tag = Annotated[str, AfterValidator(check_identity_text)]
Region = Annotated[str, AfterValidator(lambda value: check_identity_text(value, "region"))]
CallerKey = tuple[frozenset[str], str | None, dt.date]


class Caller(BaseModel):
    """Who is asking: ACL tags, region and the date the KB is viewed as of.

    Validated at construction; caches key on `key`, the caller's value, never on a string
    built from it (a joined string let one tag pass for two).
    """

    model_config = ConfigDict(frozen=True)

    tags: frozenset[Tag] = Field(default=frozenset(), max_length=MAX_CALLER_TAGS)
    region: Region | None = None
    as_of: dt.date = Field(default_factory=dt.date.today)

    @property
    def key(self) -> CallerKey:
        """The caller's value: equal keys see equal views."""
        return (frozenset(self.tags), self.region, self.as_of)


class Intent(BaseModel):
    """One parsed Intent CNL statement (DS004)."""

    model_config = ConfigDict(frozen=True)

    act: Act
    target: str
    output: str
    context: str | None = None
    criterion: str | None = None
    evidence: str | None = None
    constraints: tuple[str, ...] = ()
