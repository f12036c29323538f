"""`mrptui eval QUERIES.json`: recall@k and MRR per kb plugin and fusion method, answer checks and
safety gates over labelled queries. Exits 1 when a safety gate fails, so CI can stop a release on it.

`mrptui eval --beir DIR`: a public IR test collection in the BEIR format, every lane alone and every
fusion method, scored with nDCG@10, Recall@100 and MRR@10 (see core/eval/beir.py).

`mrptui eval --squad FILE|DIR`: SQuAD 2.0 reading comprehension, one KB per article, scored with the
official EM/F1 and abstention rates (see core/eval/squad.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.eval.labelled import evaluate, load_queries, with_fusion
from core.eval.labelled_report import ALL_KINDS, EvalReport
from core.infra.config import ConfigError, FusionMethod
from core.infra.resources import sample_queries_file
from core.infra.safe_io import UnsafePath
from core.kernel.contract import PluginType, RegistryError
from core.units import Caller
from mrptui.commands import (
    UsageError,
    add_session_options,
    cache_store,
    config_from_args,
    exit_code,
    open_session,
    warn_health,
)

FUSIONS = {"weighted": ("weighted",), "rrf": ("rrf",), "both": ("weighted", "rrf")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("queries", metavar="QUERIES.json", nargs="?", help="labelled queries (see docs/queries.md)")
    parser.add_argument(
        "--sample", action="store_true", help="the bundled sample queries (over the sample KB unless --kb is given)"
    )
    parser.add_argument(
        "--beir", metavar="DIR", help="evaluate a BEIR collection (corpus.jsonl, queries.jsonl, qrels/)"
    )
    parser.add_argument("--split", default="test", help="the qrels split of --beir (default: test)")
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        help="with --beir only: write one TREC run file per system here (0600; never over a file that is not one)",
    )
    parser.add_argument(
        "--squad",
        metavar="PATH",
        help="evaluate SQuAD 2.0 answers: the official JSON, or a folder of questions.jsonl + articles/",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="with --squad: N questions, half answerable and half impossible (default 0: every question)",
    )
    parser.add_argument("--seed", type=int, default=None, help="with --squad: the sample's random seed (default 0)")
    parser.add_argument(
        "--exclude-self",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --beir only: drop a query's own document from its ranking (default: on when query ids are "
        "also document ids, as BEIR does)",
    )
    add_session_options(parser)
    parser.add_argument(
        "--kb-plugin", action="append", metavar="ID", help="kb plugin to score (repeatable; default: every kb plugin)"
    )
    parser.add_argument("--fusion", choices=sorted(FUSIONS), default="weighted", help="fusion method(s) to compare")
    parser.add_argument("--json", action="store_true", help="print the whole report, per query too, as JSON")
    parser.add_argument(
        "--author-view",
        action="store_true",
        help="also list labelled ids no KB file holds (looks at the whole KB: for the KB's author)",
    )


def run(args: argparse.Namespace) -> int:
    if args.squad:
        return run_squad(args)
    if args.limit is not None or args.seed is not None:
        raise UsageError("--limit and --seed need --squad")
    if args.beir:
        if args.queries or args.sample:
            raise UsageError("give either QUERIES.json or --beir DIR, not both (nor --sample with --beir)")
        return run_beir(args)
    if args.run_dir:
        raise UsageError("--run-dir needs --beir")
    if args.exclude_self is not None:
        raise UsageError("--exclude-self needs --beir")
    # The queries file is read before the KB, so a typo in it fails fast.
    try:
        queries = load_queries(queries_path(args))
    except ConfigError as exc:
        raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None
    session = open_session(args)
    # Its queries have many callers: the counts are the public caller's, the least any of them
    # may see, unless the author asked for the whole KB.
    health = warn_health(session, None if args.author_view else Caller())
    plugins = args.kb_plugin or [p.id for p in session.registry.of_type(PluginType.KB)]
    try:
        report = evaluate(session, queries, plugins, FUSIONS[args.fusion], author_view=args.author_view)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        data = {**report.model_dump(mode="json"), "diagnostics": health.model_dump()}
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(markdown(report))
    return exit_code(0 if report.safe else 1, health, args)


def queries_path(args: argparse.Namespace) -> Path:
    """QUERIES.json, or the bundled file with --sample (which works outside a checkout too)."""
    if args.sample and args.queries:
        raise UsageError("give QUERIES.json or --sample, not both")
    if args.sample:
        return sample_queries_file()
    if not args.queries:
        raise UsageError("name a QUERIES.json file, or use --sample for the bundled queries")
    path = Path(args.queries)
    if not path.exists() and path.as_posix() == "sample_kb/queries.json":
        # The README's example, run outside a checkout: the bundled copy is what it means.
        return sample_queries_file()
    return path


def markdown(report: EvalReport) -> str:
    sections = [_recall_table(report), _kind_table(report), _gate_table(report), _answer_table(report)]
    if report.unknown_ids:
        sections.append(_unknown_ids(report))
    if report.absent_ids is not None:  # --author-view says it looked at the whole KB, also when all is well
        sections.append(_absent_ids(report))
    if any(q.budget_stops for q in report.queries):
        sections.append(_budget_stops(report))
    return "\n\n".join(sections)


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _recall_table(report: EvalReport) -> str:
    rows = [r for r in report.recall if r.kind == ALL_KINDS]
    lines = [
        "## Retrieval (queries with expected evidence; R@k = share kept within maxResults)",
        "",
        _row("plugin", "fusion", "queries", "R@1", "R@3", "R@k", "MRR"),
        _row("---", "---", "---:", "---:", "---:", "---:", "---:"),
    ]
    lines += [
        _row(r.plugin, r.fusion, r.count, *(f"{v:.3f}" for v in (r.recall_at_1, r.recall_at_3, r.recall_at_k, r.mrr)))
        for r in rows
    ]
    return "\n".join(lines)


def _kind_table(report: EvalReport) -> str:
    columns = [(p, f) for p in report.plugins for f in report.fusion_methods]
    lines = [
        "## R@k / MRR by kind",
        "",
        _row("kind", "queries", *(f"{p} {f}" for p, f in columns)),
        _row("---", "---:", *("---:" for _ in columns)),
    ]
    for kind in report.kinds():
        cells = [report.recall_for(p, f, kind) for p, f in columns]
        lines.append(_row(kind, cells[0].count, *(f"{c.recall_at_k:.2f} / {c.mrr:.2f}" for c in cells)))
    return "\n".join(lines)


def _gate_table(report: EvalReport) -> str:
    lines = [
        "## Safety gates",
        "",
        _row("gate", "fusion", "checked", "result", "failing queries"),
        _row("---", "---", "---:", "---", "---"),
    ]
    lines += [
        _row(g.gate, g.fusion, g.checked, "pass" if g.passed else "FAIL", ", ".join(g.failures) or "-")
        for g in report.gates
    ]
    lines += [f"- {g.gate} ({g.fusion}) {qid}: {why}" for g in report.gates for qid, why in g.failures.items()]
    return "\n".join(lines)


def _answer_table(report: EvalReport) -> str:
    lines = [
        "## Answer checks by question type, on each answer's lead (status, mentions, exclusions, expected answers)",
        "",
        _row("type", "fusion", "passed", "lead EM / F1", "failing"),
        _row("---", "---", "---:", "---:", "---"),
    ]
    for a in report.answers:
        failing = "; ".join(f"{qid}: {why}" for qid, why in a.failures.items()) or "-"
        scores = f"{a.answer_em:.2f} / {a.answer_f1:.2f} ({a.scored})" if a.scored else "-"
        lines.append(_row(a.type, a.fusion, f"{a.passed}/{a.checked} ({a.rate:.0%})", scores, failing))
    return "\n".join(lines)


def _unknown_ids(report: EvalReport) -> str:
    lines = ["## Warning: expected evidence the query's caller cannot see (absent or restricted)", ""]
    lines += [f"- {qid}: {', '.join(ids)}" for qid, ids in report.unknown_ids.items()]
    return "\n".join(lines)


def _budget_stops(report: EvalReport) -> str:
    lines = ["## Warning: answers a budget cut short (they may be incomplete)", ""]
    lines += [f"- {q.id} ({q.fusion}): {note}" for q in report.queries for note in q.budget_stops]
    return "\n".join(lines)


def _absent_ids(report: EvalReport) -> str:
    lines = ["## Author view: whole KB. Labelled ids no KB file holds (their checks pass vacuously)", ""]
    lines += [f"- {qid}: {', '.join(ids)}" for qid, ids in (report.absent_ids or {}).items()] or ["- none"]
    return "\n".join(lines)


def run_beir(args: argparse.Namespace) -> int:
    from core.eval import beir as ireval
    from core.infra.config import load_retrieval_config
    from core.infra.embeddings import EmbeddingError, load_embedding_config
    from core.infra.resources import config_dir
    from core.kb.dense import DenseLane

    directory = Path(args.beir)
    if not directory.is_dir():
        raise UsageError(f"--beir needs a folder, not {directory}")
    config_path = config_from_args(args) or config_dir()
    try:
        collection = ireval.load_beir(directory, args.split)
        config = load_retrieval_config(config_path)
        dense = DenseLane(load_embedding_config(config_path), config.dense)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    for warning in (ireval.skipped_warning(collection), ireval.withdrawn_warning(collection)):
        if warning:
            print(warning, file=sys.stderr)
    exclude_self = ireval.excludes_self(collection, args.exclude_self)
    try:
        runs = ireval.run_systems(collection, config, progress=_progress_bar(), dense=dense, exclude_self=exclude_self)
    except EmbeddingError as exc:
        raise UsageError(f"dense lane: {exc.reason}") from None
    try:
        measures = ireval.measure(runs, collection.qrels)
    except ireval.MeasuresUnavailable as exc:
        raise UsageError(str(exc)) from None
    if args.run_dir:
        try:
            written = ireval.write_run_files(Path(args.run_dir), runs)
        except UnsafePath as exc:  # a user's file of that name, a link, a folder: it says why
            raise UsageError(f"--run-dir: {exc}") from None
        except OSError as exc:
            raise UsageError(f"--run-dir: {exc.strerror or exc}") from None
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    document = ireval.report(collection, measures, exclude_self=exclude_self)
    print(ireval.dumps(document) if args.json else ireval.markdown_table(document))
    return 0


def run_squad(args: argparse.Namespace) -> int:
    from core.eval import squad, squad_report
    from core.kernel.session import Session

    if args.queries or args.sample or args.beir or getattr(args, "kb", None):
        raise UsageError("--squad brings its own KBs (one per article): give no QUERIES.json, --sample, --beir or --kb")
    limit, seed = args.limit or 0, args.seed or 0
    if limit < 0:
        raise UsageError(f"--limit must be 0 (every question) or more, not {limit}")
    if args.fusion == "both":
        raise UsageError("--squad runs one fusion method: --fusion weighted or --fusion rrf")
    if args.exclude_self is not None:
        raise UsageError(
            "--exclude-self is for --beir, where a query can be a document; a SQuAD question "
            "is not a unit of its article's KB, so there is nothing of its own to exclude"
        )
    if args.run_dir:
        raise UsageError(
            "--run-dir writes TREC rankings for --beir; --squad scores answers, not rankings: "
            "--json lists every question's prediction"
        )
    config = config_from_args(args)
    try:
        collection = squad.load_squad(Path(args.squad))
    except ConfigError as exc:
        raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None

    def open_article(path: Path) -> Session:
        try:
            session = Session.open([path], config, store=cache_store(args))
        except ConfigError as exc:
            raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None
        if session.retrieval.fusion.method.value == args.fusion:
            return session
        return session.with_retrieval(with_fusion(session.retrieval, FusionMethod(args.fusion)))

    picked = squad.sample(collection.questions, limit, seed)
    rows = squad.run(collection, picked, open_article, progress=_progress_bar())
    result = squad_report.report(collection, rows, seed, limit)
    print(squad_report.dumps(result) if args.json else squad_report.markdown(result))
    return 0


def _progress_bar(width: int = 30):
    """Queries done on stderr: a redrawn bar on a terminal, a line per tenth otherwise."""
    interactive = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        if interactive:
            filled = width * done // total
            end = "\n" if done == total else ""
            print(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} queries",
                end=end,
                file=sys.stderr,
                flush=True,
            )
        elif done == total or done * 10 // total != (done - 1) * 10 // total:
            print(f"{done}/{total} queries", file=sys.stderr, flush=True)

    return show
