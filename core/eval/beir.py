"""Public IR test collections (BEIR format): each lane alone and each fusion method, scored with
nDCG@10, Recall@100 and MRR@10 by ir-measures (the `test` extra).

A BEIR folder holds `corpus.jsonl` (read by the JSONL KB reader: title → topic, text → claim),
`queries.jsonl` (`_id`, `text`) and `qrels/<split>.tsv` (`query-id corpus-id score`, with or
without the header line). Only the queries the qrels judge are run. A document with neither title
nor text is skipped and counted (Cranfield has two); a document the reader withdraws (a bad line,
a permission field not read) is counted as withdrawn, said on stderr, and the rest is scored.
Both counts, and `exclude_self`, are the public caller's: a restricted document changes none.

Where query ids are also document ids (ArguAna, Quora: the queries are documents), a query's own
document is dropped from every system's ranking before it is cut and scored, as BEIR's
`ignore_identical_ids` does; `exclude_self` turns that on or off explicitly. Every question is ranked on
the public caller's permitted view, through the same lane functions the kb plugins use, with the
act the engine's intent cues detect for it.

A query a system returns nothing for scores 0 on every measure: the mean is over every judged
query, not only those with results (trec_eval's default would skip them and flatter the system).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from core.cnl.source import MAX_JSONL_BYTES, load_bytes, read_file
from core.infra.config import ConfigError, FusionMethod, Lane, RetrievalConfig
from core.infra.diagnostics import Code, Diagnostic, Severity
from core.infra.json_limits import NotUtf8, decode_utf8
from core.infra.json_locate import jsonl_records
from core.infra.safe_io import Marked, atomic_write_text
from core.kb.dense import DenseIndex, DenseLane
from core.kb.knowledge_base import KBView, KnowledgeBase
from core.question.intent_cues import detect_act
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.fusion import fused_scores, normalise_bm25
from core.retrieval.hdc.index import HdcIndex
from core.retrieval.lanes import bm25_pool, hdc_pool, hdc_question
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Caller, KnowledgeUnit, is_public

MEASURES = ("ndcg@10", "recall@100", "mrr@10")
RUN_DEPTH = 100
SHOWN_SKIPPED = 5  # line numbers a skipped-documents warning lists
# Per-query rankings: system → query id → unit id → score.
Run = dict[str, dict[str, float]]
Progress = Callable[[int, int], None]


class _QueryRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(alias="_id", min_length=1)
    text: str = Field(min_length=1)


@dataclass(frozen=True)
class IrCollection:
    """A BEIR collection read as a KB, its queries and relevance judgements, and the documents not
    scored."""

    name: str
    kb: KnowledgeBase
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    skipped: tuple[Diagnostic, ...] = ()  # documents with neither title nor text, with file and line
    # Documents a reader withdrew (an error at their line), the rest scored.
    withdrawn: tuple[Diagnostic, ...] = ()
    duplicates: tuple[Diagnostic, ...] = ()  # later documents of an id already read (not scored)

    def self_ids(self) -> set[str]:
        """Judged query ids that are also ids of documents in the public caller's view: a
        restricted document's id must not change how a query is scored."""
        view = self.kb.view(Caller())
        return {qid for qid in self.queries if qid in view}


def load_beir(directory: Path, split: str = "test") -> IrCollection:
    """Raises ConfigError (file and line) for missing files and malformed lines."""
    files = {"corpus": directory / "corpus.jsonl", "queries": directory / "queries.jsonl"}
    files["qrels"] = directory / "qrels" / f"{split}.tsv"
    missing = [
        Diagnostic(code=Code.PATH_NOT_FOUND, message="missing BEIR file", file=str(p))
        for p in files.values()
        if not p.is_file()
    ]
    if missing:
        raise ConfigError(missing)
    units, problems = read_file(files["corpus"])
    # Counted for the public caller only: a restricted document's problems are its author's.
    shown = [d for d in problems if not d.author_only]
    skipped = tuple(d for d in shown if d.code is Code.EMPTY_DOCUMENT)
    read_lines = {unit.location.line for unit in units if unit.location is not None}
    failed = [d for d in shown if d.is_error and d.code is not Code.EMPTY_DOCUMENT and d.line not in read_lines]
    # A file that gave no document at all is an error; else each failed line is one withdrawn document.
    withdrawn = tuple({d.line: d for d in failed}.values()) if units else ()
    errors = [] if units else [d for d in problems if d.is_error and d.code is not Code.EMPTY_DOCUMENT]
    units, duplicates = _first_of_each_id(units)
    if skipped and not units:
        message = f"all {len(skipped)} documents have neither title nor text"
        errors.append(Diagnostic(code=Code.EMPTY_DOCUMENT, message=message, file=str(files["corpus"])))
    qrels = _read_qrels(files["qrels"], errors)
    queries = _read_queries(files["queries"], set(qrels), errors)
    unknown = sorted(set(qrels) - set(queries)) if queries is not None else []
    if unknown:
        message = f"{len(unknown)} judged query id(s) not in queries.jsonl, e.g. {unknown[0]!r}"
        errors.append(Diagnostic(code=Code.UNKNOWN_REFERENCE, message=message, file=str(files["qrels"])))
    if errors:
        raise ConfigError(errors)
    assert queries is not None  # a queries file that could not be read left its error
    return IrCollection(
        directory.resolve().name, KnowledgeBase.from_units(units), queries, qrels, skipped, withdrawn, duplicates
    )


def _first_of_each_id(units: list[KnowledgeUnit]) -> tuple[list[KnowledgeUnit], tuple[Diagnostic, ...]]:
    """The corpus without the later public documents of an id a public document already has, and
    a DUPLICATE_UNIT_ID warning for each: in a KB a repeated id serves neither unit, which scored
    a judged document as missing. Where either is restricted both stay, and the KB's rule serves
    neither (docs/security.md): a warning would tell that a restricted document is there."""
    first: dict[str, KnowledgeUnit] = {}
    kept: list[KnowledgeUnit] = []
    duplicates = []
    for unit in units:
        earlier = first.setdefault(unit.id, unit)
        if earlier is unit or not (is_public(unit) and is_public(earlier)):
            kept.append(unit)
            continue
        where = f"{earlier.location.file}:{earlier.location.line}" if earlier.location else "an earlier line"
        duplicates.append(
            Diagnostic(
                code=Code.DUPLICATE_UNIT_ID,
                severity=Severity.WARNING,
                message=f"document id {unit.id!r} is already defined at {where}; only the first is scored",
                file=unit.location.file if unit.location else "",
                line=unit.location.line if unit.location else 1,
            )
        )
    return kept, tuple(duplicates)


_SCORE_DIGITS = 9


def _read_qrels(path: Path, errors: list[Diagnostic]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate((_text(path, errors) or "").splitlines(), start=1):
        parts = line.split()
        if not parts or (number == 1 and parts[0] == "query-id"):
            continue
        # BEIR writes `query-id corpus-id score`; TREC qrels add an iteration column.
        if len(parts) == 4:
            parts = [parts[0], parts[2], parts[3]]
        # A score is a small integer: `²` is a digit `int` refuses, 5,000 digits one it cannot read.
        score = parts[2].lstrip("-") if len(parts) == 3 else ""
        if not (score.isascii() and score.isdigit() and len(score) <= _SCORE_DIGITS):
            message = f"expected 'query-id corpus-id score', found {line.strip()[:80]!r}"
            errors.append(Diagnostic(code=Code.MALFORMED_LINE, message=message, file=str(path), line=number))
            continue
        qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def _read_queries(path: Path, wanted: set[str], errors: list[Diagnostic]) -> dict[str, str] | None:
    """The wanted queries by id; None when the file cannot be read as text (its error is in `errors`)."""
    text = _text(path, errors)
    if text is None:
        return None
    queries: dict[str, str] = {}
    for _, record in jsonl_records(text, _QueryRecord, str(path)):
        if isinstance(record, Diagnostic):
            errors.append(record)
        elif record.id in wanted:
            queries[record.id] = record.text
    return queries


def _text(path: Path, errors: list[Diagnostic]) -> str | None:
    """A BEIR file's text; None with an error (file, and line where knowable) when it cannot be
    read, is too large or is not UTF-8."""
    data = load_bytes(path, MAX_JSONL_BYTES)
    if isinstance(data, Diagnostic):
        errors.append(data)
        return None
    try:
        return decode_utf8(data)
    except NotUtf8 as exc:
        errors.append(
            Diagnostic(code=Code.INVALID_ENCODING, message=str(exc), file=str(path), line=exc.line, col=exc.col)
        )
        return None


@dataclass
class LaneIndexes:
    """The indexes of one permitted view that the IR systems rank with (dense when configured)."""

    view: KBView
    bm25: Bm25Index
    hdc: HdcIndex
    dense: tuple[DenseLane, DenseIndex] | None = None

    @classmethod
    def build(cls, view: KBView, config: RetrievalConfig, dense: DenseLane | None = None) -> LaneIndexes:
        """Raises EmbeddingError when a configured dense endpoint cannot embed the units."""
        dense_index = (dense, dense.build(view.units, view.stored)) if dense is not None and dense.configured else None
        return cls(view, Bm25Index.build(view.units, config.bm25), HdcIndex.build(view.units, config.hdc), dense_index)


def lane_scores(indexes: LaneIndexes, question: str, config: RetrievalConfig) -> dict[Lane, dict[str, float]]:
    """Each lane's normalised pool for one question, as a kb plugin would fuse them."""
    act, _ = detect_act(question)
    terms = tokenize(question)
    raw = bm25_pool(indexes.bm25, terms, ACT_PREFERRED_ROLES[act], config.bm25.lane_pool)
    hdc = hdc_pool(indexes.hdc, hdc_question(indexes.hdc, terms, act, config.hdc, list(raw)), config.hdc)
    lanes = {Lane.BM25: normalise_bm25(raw), Lane.HDC: hdc}
    if indexes.dense is not None:
        lane, index = indexes.dense
        lanes[Lane.DENSE] = lane.pool(index, question)
    return lanes


def system_scores(lanes: Mapping[Lane, Mapping[str, float]], config: RetrievalConfig) -> dict[str, Mapping[str, float]]:
    """Every lane alone and every fusion method over all lanes, keyed by system name."""
    systems: dict[str, Mapping[str, float]] = {lane.value: scores for lane, scores in lanes.items()}
    for method in FusionMethod:
        fusion = config.fusion.model_copy(update={"method": method})
        systems[f"fusion:{method.value}"] = fused_scores(lanes, fusion)
    return systems


def run_systems(
    collection: IrCollection,
    config: RetrievalConfig,
    *,
    depth: int = RUN_DEPTH,
    progress: Progress | None = None,
    dense: DenseLane | None = None,
    exclude_self: bool | None = None,
) -> dict[str, Run]:
    """The top `depth` units of every system for every judged query; raises EmbeddingError when
    a configured dense endpoint fails (a measurement without its lane would mislead).
    `exclude_self` drops the document whose id is the query's (None: when any ids overlap)."""
    view = collection.kb.view(Caller())
    indexes = LaneIndexes.build(view, config, dense)
    runs: dict[str, Run] = {}
    total = len(collection.queries)
    excluding = excludes_self(collection, exclude_self)
    for done, (qid, question) in enumerate(sorted(collection.queries.items()), start=1):
        for system, scores in system_scores(lane_scores(indexes, question, config), config).items():
            runs.setdefault(system, {})[qid] = _top(scores, depth, skip=qid if excluding else None)
        if progress is not None:
            progress(done, total)
    return runs


def excludes_self(collection: IrCollection, exclude_self: bool | None) -> bool:
    """The explicit choice, else BEIR's rule: on when query ids and document ids overlap."""
    return bool(collection.self_ids()) if exclude_self is None else exclude_self


def _top(scores: Mapping[str, float], depth: int, skip: str | None = None) -> dict[str, float]:
    ranked = sorted(((doc, score) for doc, score in scores.items() if doc != skip), key=lambda kv: (-kv[1], kv[0]))
    return dict(ranked[:depth])


class MeasuresUnavailable(RuntimeError):
    """ir-measures is not installed (it is in the `test` extra)."""


def measure(runs: Mapping[str, Run], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float]]:
    """nDCG@10, Recall@100 and MRR@10 per system, averaged over every judged query."""
    try:
        import ir_measures
        from ir_measures import RR, R, nDCG
    except ImportError:
        raise MeasuresUnavailable(
            "IR measures need the ir-measures package: pip install 'mrptui[test]' (or pip install ir-measures)"
        ) from None
    names = {nDCG @ 10: "ndcg@10", R @ 100: "recall@100", RR @ 10: "mrr@10"}
    out: dict[str, dict[str, float]] = {}
    for system, run in runs.items():
        sums = dict.fromkeys(MEASURES, 0.0)
        for metric in ir_measures.iter_calc(list(names), qrels, {q: dict(d) for q, d in run.items() if d}):
            sums[names[metric.measure]] += metric.value
        out[system] = {name: round(value / max(len(qrels), 1), 4) for name, value in sums.items()}
    return out


def report(
    collection: IrCollection, measures: Mapping[str, Mapping[str, float]], *, exclude_self: bool = False
) -> dict[str, object]:
    """The `eval --beir --json` document."""
    return {
        "collection": collection.name,
        "queries": len(collection.queries),
        "skipped_documents": len(collection.skipped),
        "withdrawn_documents": len(collection.withdrawn),
        "duplicate_documents": len(collection.duplicates),
        "exclude_self": exclude_self,
        "systems": dict(measures),
    }


def skipped_warning(collection: IrCollection) -> str:
    """'' when no document was skipped; else how many, why, and where (the first few lines)."""
    warnings = []
    if collection.skipped:
        warnings.append(_skipped_line(collection.skipped, "with neither title nor text"))
    if collection.duplicates:
        warnings.append(_skipped_line(collection.duplicates, "repeating an earlier document's id (DUPLICATE_UNIT_ID)"))
    return "\n".join(warnings)


def _skipped_line(skipped: tuple[Diagnostic, ...], why: str) -> str:
    lines = ", ".join(str(d.line) for d in skipped[:SHOWN_SKIPPED])
    more = ", …" if len(skipped) > SHOWN_SKIPPED else ""
    return (
        f"warning: {skipped[0].file}: skipped {len(skipped)} document(s) {why} (line {lines}{more}); the rest is scored"
    )


def withdrawn_warning(collection: IrCollection) -> str:
    """'' when no document was withdrawn; else how many, where, and the first one's reason."""
    if not collection.withdrawn:
        return ""
    first = collection.withdrawn[0]
    lines = ", ".join(str(d.line) for d in collection.withdrawn[:SHOWN_SKIPPED])
    more = ", …" if len(collection.withdrawn) > SHOWN_SKIPPED else ""
    return (
        f"warning: {first.file}:{first.line}: {first.message}; withdrew {len(collection.withdrawn)} "
        f"document(s) the reader could not read (line {lines}{more}); the rest is scored"
    )


def run_file_name(system: str) -> str:
    return system.replace(":", "-") + ".trec"


def write_run_files(directory: Path, runs: Mapping[str, Run]) -> list[Path]:
    """One TREC run file per system (`qid Q0 docid rank score tag`), each written atomically and
    0600 (its rankings may come from restricted units), in a folder made 0700; an existing file
    is replaced only when it is a run file of ours (its tag), never a user's."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # a new folder: only its owner may enter
    written = []
    for system, run in runs.items():
        lines = [
            f"{qid} Q0 {doc} {rank} {score:.6f} mrptui-{system.replace(':', '-')}\n"
            for qid in sorted(run)
            for rank, (doc, score) in enumerate(run[qid].items(), start=1)
        ]
        path = directory / run_file_name(system)
        atomic_write_text(path, "".join(lines), mode=0o600, ours=_is_run_file)
        written.append(path)
    return written


def _is_run_file(marked: Marked) -> bool:
    first = marked.head.split(b"\n", 1)[0].split()
    return len(first) == 6 and first[1] == b"Q0" and first[5].startswith(b"mrptui-")


def markdown_table(document: Mapping[str, object]) -> str:
    systems: Mapping[str, Mapping[str, float]] = document["systems"]  # type: ignore[assignment]
    excluded = ", each query's own document excluded" if document.get("exclude_self") else ""
    lines = [
        f"## {document['collection']}: {document['queries']} queries{excluded}",
        "",
        "| system | nDCG@10 | Recall@100 | MRR@10 |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in MEASURES) + " |" for name, m in systems.items()]
    return "\n".join(lines)


def dumps(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2)
