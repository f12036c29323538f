"""Validated engine configuration (`config/*.json`), loaded into pydantic models."""

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from core.infra.diagnostics import Code, Diagnostic, did_you_mean
from core.infra.json_limits import (
    DuplicateKey,
    NotUtf8,
    TooDeep,
    check_depth,
    decode_utf8,
    duplicate_key_offset,
    long_number,
    unique_object,
)
from core.infra.resources import config_file
from core.infra.safe_io import UnsafePath, read_regular

# Config, rule and query files above this are refused unread (a FIFO or device is refused too):
# 10,000 rules take about 2 MB.
MAX_CONFIG_BYTES = 8_000_000


class _Model(BaseModel):
    # No inf or NaN anywhere: `k1: 1e999` parses to inf and would turn every score into NaN.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid", allow_inf_nan=False
    )


# Every number has a range (a value that validates must never crash the engine later). The upper
# bounds are far above any sensible setting; they exist so that nothing overflows or runs forever.
Weight = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
Pool = Annotated[int, Field(ge=1, le=1_000_000)]
Count = Annotated[int, Field(ge=1, le=10_000)]


class Lane(StrEnum):
    BM25 = "bm25"
    HDC = "hdc"
    TDB = "tdb"
    DENSE = "dense"


class Bm25Config(_Model):
    k1: float = Field(default=1.2, gt=0, le=100)
    b: float = Field(default=0.75, ge=0, le=1)
    field_weights: dict[str, Weight] = {
        "topic": 1.5,
        "claim": 1.0,
        "procedure": 1.0,
        "utilityActs": 0.8,
        "utilityNote": 0.6,
        "condition": 0.6,
        "role": 0.5,
    }
    role_boost: float = Field(default=1.3, ge=1.0, le=100)
    # Only the lane's best units go on to fusion: ranks beyond this cannot reach any profile's
    # maxResults, and fusing every unit that shares a word would cost more than ranking them.
    lane_pool: Pool = 1000


class HdcConfig(_Model):
    dimensions: Literal[4096] = 4096
    seed: str = Field(default="mrptui-hdc-v1", min_length=1, max_length=200)
    field_weights: dict[str, Weight] = {"topic": 0.35, "claim": 0.35, "role": 0.20, "acts": 0.10}
    # Field scores subtract this many standard deviations of chance similarity (1/64 each), so an
    # unrelated field scores 0 (core/retrieval/hdc/encoding.py, docs/scoring.md).
    noise_sigmas: float = Field(default=3.0, ge=0, le=20)
    # Claim windows of this many consecutive sentences, best window scored; 0 = the whole claim.
    claim_window: int = Field(default=1, ge=0, le=20)
    # Token vectors also bundle the token's character n-grams of this size; 0 = off.
    char_ngrams: int = Field(default=3, ge=0, le=6)
    # Token vectors learned from the KB by random indexing, this many ±1 positions per unit; 0 = off.
    context_vectors: int = Field(default=0, ge=0, le=1024)
    # Pseudo-relevance feedback: the question vector also bundles BM25's best this-many units; 0 = off.
    # A profile may set its own (`Profile.feedback_units`).
    feedback_units: int = Field(default=1, ge=0, le=20)
    # Calibrated scores are 0 for unrelated units, so the floor asks for some matched text.
    lane_min_score: float = Field(default=0.02, ge=0, le=1)
    # As deep as the BM25 pool, so RRF and weighted fusion compare lanes over equal-depth pools.
    lane_pool: Pool = 1000
    # A topic or claim window longer than this is encoded from its first this-many tokens: encoding
    # takes 1 KB of memory a token, and a bundle of thousands of tokens is already noise.
    max_unit_tokens: int = Field(default=5_000, ge=16, le=100_000)

    @model_validator(mode="after")
    def _char_ngrams_size(self) -> "HdcConfig":
        if self.char_ngrams == 1:
            raise ValueError("charNgrams is 0 (off) or a size from 2 to 6")
        return self


class DenseConfig(_Model):
    """The optional dense lane (its endpoint is config/embeddings.json)."""

    lane_min_score: float = Field(default=0.2, ge=0, le=1)
    lane_pool: Pool = 1000


class FusionMethod(StrEnum):
    WEIGHTED = "weighted"
    RRF = "rrf"


class FusionConfig(_Model):
    method: FusionMethod = FusionMethod.WEIGHTED
    weights: dict[Lane, Weight] = {Lane.BM25: 1.0, Lane.HDC: 0.2, Lane.TDB: 0.85, Lane.DENSE: 0.5}
    agreement_bonus: float = Field(default=0.15, ge=0, le=10)
    # The bonus needs every lane's normalised score at or above this, on top of each lane's own
    # floor (calibrated HDC scores are already 0 for chance matches; docs/scoring.md).
    agreement_min_score: float = Field(default=0.0, ge=0, le=1)
    rrf_k: int = Field(default=60, ge=1, le=1_000_000)
    # RRF weighs ranks, not scores, so it has its own lane weights: a proof unit ThinkingDB ranks
    # third must not sink below BM25's twelfth, while the weaker HDC lane still counts less.
    rrf_weights: dict[Lane, Weight] = {Lane.BM25: 1.0, Lane.HDC: 0.2, Lane.TDB: 1.0, Lane.DENSE: 0.5}
    # RRF counts every lane's ranks down to the same depth (the lanes' pools are this deep by
    # default), so a deeper pool cannot outvote a shallower one with its long tail.
    rrf_depth: Pool = 1000


class Profile(_Model):
    """One kb plugin's lanes and cut-offs (DESIGN §8)."""

    lanes: tuple[Lane, ...]
    escalation_lanes: tuple[Lane, ...] = ()
    # Lane weights and agreement bonus for this profile's fusion; unset ones keep fusion's.
    weights: dict[Lane, Weight] = {}
    agreement_bonus: float | None = Field(default=None, ge=0, le=10)
    # HDC feedback depth for this profile's HDC lane; unset keeps `hdc.feedbackUnits`.
    feedback_units: int | None = Field(default=None, ge=0, le=20)
    max_results: Count
    # Scores are normalised to about [0, 1] plus the agreement bonus, so 100 already keeps nothing.
    min_score: float = Field(ge=0, le=100)
    gap_threshold: float = Field(ge=0, le=1)
    min_acceptable_candidates: Count

    @model_validator(mode="after")
    def _lanes_present(self) -> "Profile":
        if not self.lanes:
            raise ValueError("a profile needs at least one lane")
        return self


class KbBudgets(_Model):
    """How large a whole KB may be before it is opened at all (core/kb/budgets.py): past any of
    these the KB is refused, the budget named. A 2M-unit KB opened cold in 377 s and ~1 GB with
    nothing to stop it; the defaults sit well above the 1M-unit benchmark (200 files) and the
    50,000-file one, and an author with a larger KB raises them here (`inputs` in retrieval.json)."""

    max_kb_files: int = Field(default=500_000, ge=1, le=10_000_000)
    max_kb_bytes: int = Field(default=8_000_000_000, ge=1_000, le=1_000_000_000_000)
    max_kb_units: int = Field(default=3_000_000, ge=1, le=100_000_000)


class RetrievalConfig(_Model):
    inputs: KbBudgets = KbBudgets()
    bm25: Bm25Config = Bm25Config()
    hdc: HdcConfig = HdcConfig()
    dense: DenseConfig = DenseConfig()
    fusion: FusionConfig = FusionConfig()
    profiles: dict[str, Profile]


class ConfigError(Exception):
    """A config file that cannot be used; carries diagnostics with file and position."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics


class OverBudget(ConfigError):
    """An input past a whole-input budget (core/kb/budgets.py): refused, not served in part. Its
    diagnostic names the budget; a build pool stopped by it re-raises it (never a serial retry)."""


def read_json(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> object:
    """Parse a JSON file, turning I/O and syntax problems into a `ConfigError` with a position."""
    try:
        text = decode_utf8(read_regular(path, max_bytes))
    except UnsafePath as exc:
        raise ConfigError([Diagnostic(code=Code.FILE_UNREADABLE, message=exc.reason, file=str(path))]) from None
    except NotUtf8 as exc:
        problem = Diagnostic(code=Code.INVALID_ENCODING, message=str(exc), file=str(path), line=exc.line, col=exc.col)
        raise ConfigError([problem]) from None
    except OSError as exc:
        raise ConfigError(
            [Diagnostic(code=Code.FILE_UNREADABLE, message=exc.strerror or str(exc), file=str(path))]
        ) from None
    try:
        check_depth(text)
        return json.loads(text, object_pairs_hook=unique_object)
    except TooDeep as exc:
        line, col = _line_col(text, exc.col)
        raise ConfigError(
            [Diagnostic(code=Code.INVALID_JSON, message=str(exc), file=str(path), line=line, col=col)]
        ) from None
    except DuplicateKey as exc:
        line, col = _line_col(text, duplicate_key_offset(text, exc.key) + 1)
        raise ConfigError(
            [Diagnostic(code=Code.INVALID_JSON, message=str(exc), file=str(path), line=line, col=col)]
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            [Diagnostic(code=Code.INVALID_JSON, message=exc.msg, file=str(path), line=exc.lineno, col=exc.colno)]
        ) from None
    except (ValueError, RecursionError) as exc:
        # Valid syntax json cannot take: nesting deeper than the interpreter's recursion limit, or
        # an integer over int's digit limit (found again here, since json does not say where).
        message, line, col = str(exc), 1, 1
        if (number := long_number(text)) is not None:
            message, offset = number
            line, col = _line_col(text, offset + 1)
        diagnostic = Diagnostic(code=Code.INVALID_JSON, message=message, file=str(path), line=line, col=col)
        raise ConfigError([diagnostic]) from None


def _line_col(text: str, col: int) -> tuple[int, int]:
    """The line and column of the 1-based offset `col` of `text`."""
    offset = col - 1
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def json_pointer_line(text: str, loc: tuple[str | int, ...]) -> int:
    """Best-effort line of a JSON path: the first line, after the parents, naming the last key."""
    lines = text.split("\n")
    start = 0
    for part in loc:
        if isinstance(part, int):
            continue
        needle = f'"{part}"'
        for index in range(start, len(lines)):
            if needle in lines[index]:
                start = index
                break
    return start + 1


def validated(model: type[BaseModel], path: Path):
    """Load `path` into `model`; pydantic errors become diagnostics pointing at the JSON line."""
    data = read_json(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        text = path.read_text(encoding="utf-8")
        raise ConfigError([_config_diagnostic(model, path, text, err) for err in exc.errors()]) from None


def _config_diagnostic(model: type[BaseModel], path: Path, text: str, err) -> Diagnostic:
    loc = tuple(err["loc"])
    message = f"{'.'.join(str(p) for p in loc) or '<root>'}: {err['msg']}"
    if err["type"] == "extra_forbidden" and loc:
        message += did_you_mean(str(loc[-1]), field_names(model))
    line = json_pointer_line(text, loc)
    named = [part for part in loc if isinstance(part, str)]
    col = text.split("\n")[line - 1].find(f'"{named[-1]}"') + 1 if named else 1
    return Diagnostic(code=Code.INVALID_CONFIG, message=message, file=str(path), line=line, col=max(col, 1))


def field_names(model: type[BaseModel]) -> set[str]:
    """Every field name (as written in JSON) of `model` and the models inside it."""
    schema = model.model_json_schema()
    names: set[str] = set()
    for part in [schema, *schema.get("$defs", {}).values()]:
        names.update(part.get("properties", {}))
    return names


def load_retrieval_config(directory: Path | None = None) -> RetrievalConfig:
    return validated(RetrievalConfig, config_file(directory, "retrieval.json"))


class Budgets(_Model):
    """Per-request budgets; each one that stops something is named in the reason it gives."""

    max_replans: int = Field(default=1, ge=0, le=10)
    max_llm_calls_per_request: int = Field(default=4, ge=0, le=100)
    # One plugin call; past it the kernel cancels the call's token and records the attempt.
    plugin_timeout_ms: int = Field(default=10_000, ge=1, le=600_000)
    # The whole request: a plugin call never runs past what is left of it.
    request_timeout_ms: int = Field(default=120_000, ge=1, le=3_600_000)
    # Wall time all LLM calls of one request may take together (a dripping endpoint stops here).
    llm_deadline_ms: int = Field(default=60_000, ge=1, le=3_600_000)
    # A longer question is refused with a message naming this budget, before any plugin runs.
    max_question_chars: int = Field(default=20_000, ge=1, le=1_000_000)
    # Questions beyond this many in one input are dropped, and the trace says so.
    max_sub_questions: int = Field(default=10, ge=1, le=100)
    # The process may grow this much during one request; past it the running plugin call is
    # cancelled, naming this budget (core/kernel/call_budgets.py).
    max_request_memory_mb: int = Field(default=768, ge=16, le=65_536)


class TraceLimits(_Model):
    """Caps on what one event carries, so a 100k-unit KB cannot flood the trace or the UI."""

    max_candidates_per_event: int = Field(default=200, ge=1, le=100_000)
    explained_candidates: int = Field(default=40, ge=0, le=100_000)
    # A plugin's reason, and its answer, beyond these are cut with a marker saying how much.
    max_reason_chars: int = Field(default=2_000, ge=80, le=1_000_000)
    max_answer_chars: int = Field(default=50_000, ge=80, le=10_000_000)


class ScopeNumbers(_Model):
    """One number per memory scope (seed 001): the active session, durable user memory, global memory."""

    session: float = Field(ge=0, le=1)
    user: float = Field(ge=0, le=1)
    global_: float = Field(alias="global", ge=0, le=1)

    def of(self, scope: str) -> float:
        return {"session": self.session, "user": self.user, "global": self.global_}[scope]


class MemoryConfig(_Model):
    """Conversation memory (core/memory): seed 001's numbers are the defaults."""

    # base = alpha·sim + beta·R + gamma·S; the seed keeps alpha + beta + gamma = 1 so base stays in [0, 1].
    alpha: float = Field(default=0.7, ge=0, le=1)
    beta: float = Field(default=0.2, ge=0, le=1)
    gamma: float = Field(default=0.1, ge=0, le=1)
    # Q = 1 − delta·decay_rate for summaries.
    delta: float = Field(default=0.5, ge=0, le=1)
    # Per-second decay constants λ; half-lives ln 2 / λ of 1.9 h, 19 h and 4 days.
    decay: ScopeNumbers = ScopeNumbers(session=1e-4, user=1e-5, **{"global": 2e-6})
    scope_weight: ScopeNumbers = ScopeNumbers(session=1.0, user=0.6, **{"global": 0.3})
    # A record scoring below this never completes a follow-up: with sim 0, a session turn stays
    # usable for ~48 minutes (0.2·R + 0.1 ≥ 0.25), an older one must share words with the question.
    min_score: float = Field(default=0.25, ge=0, le=1)
    # Compaction: past this many raw turns, buckets of about `bucket_turns` turns become summaries.
    compact_after_turns: int = Field(default=24, ge=2, le=10_000)
    bucket_turns: int = Field(default=4, ge=1, le=1_000)
    # Prompt budget B, in estimated tokens, for memory records packed into an LLM prompt.
    prompt_budget_tokens: int = Field(default=512, ge=0, le=1_000_000)
    # What one conversation or user file may hold; past either bound the oldest records go first.
    max_records: int = Field(default=2_000, ge=1, le=1_000_000)
    max_file_bytes: int = Field(default=4_000_000, ge=1_000, le=1_000_000_000)

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> "MemoryConfig":
        total = self.alpha + self.beta + self.gamma
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"alpha + beta + gamma must be 1 (seed 001), not {total:g}")
        return self


class PlannerOrder(_Model):
    """A planner's base order per stage; the planner reorders from cues and pins."""

    sd: tuple[str, ...]
    kb: tuple[str, ...]
    gs: tuple[str, ...]
    val: tuple[str, ...]


class EngineConfig(_Model):
    plugins: tuple[str, ...]
    planners: dict[str, PlannerOrder]
    planner_sequence: tuple[str, ...] = Field(default=("planner-default", "planner-depth"), min_length=1)
    budgets: Budgets = Budgets()
    trace: TraceLimits = TraceLimits()
    memory: MemoryConfig = MemoryConfig()

    @model_validator(mode="after")
    def _sequence_known(self) -> "EngineConfig":
        unknown = [p for p in self.planner_sequence if p not in self.planners]
        if unknown:
            raise ValueError(f"plannerSequence names unknown planners: {', '.join(unknown)}")
        return self


def load_engine_config(directory: Path | None = None) -> EngineConfig:
    return validated(EngineConfig, config_file(directory, "engine.json"))
