"""`python -m benchmarks [--sizes 1000,10000,100000] [--ops build,...] [--json] [--no-peers]`."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import sys
from types import ModuleType

import benchmarks
from benchmarks import SMOKE_ENV, BenchmarkFailed

DEFAULT_SIZES = "1000,10000,100000"


def suites() -> dict[str, ModuleType]:
    """Every benchmark module in the package (one that defines `run`), by name."""
    found = {}
    for info in pkgutil.iter_modules(benchmarks.__path__):
        if info.name == "__main__":
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        if callable(getattr(module, "run", None)):
            found[info.name] = module
    return found


def ops_of(name: str, module: ModuleType) -> tuple[str, ...]:
    return tuple(getattr(module, "OPS", (name,)))


def run(sizes: list[int], ops: set[str] | None, peers: bool) -> tuple[list[dict], list[str]]:
    """The rows of every wanted op, and why each op that gave up did (the other modules still run)."""
    rows: list[dict] = []
    failures: list[str] = []
    for name, module in suites().items():
        own = set(ops_of(name, module))
        wanted = own if ops is None or name in ops else own & ops
        if not wanted:
            continue
        accepted = inspect.signature(module.run).parameters
        options = {key: value for key, value in (("ops", wanted), ("peers", peers)) if key in accepted}
        print(f"benchmarks: {name} ({', '.join(sorted(wanted))})", file=sys.stderr, flush=True)
        try:
            rows += module.run(sizes, **options)
        except BenchmarkFailed as exc:
            rows += exc.rows
            failures.append(str(exc))
            print(f"benchmark failed: {exc}", file=sys.stderr, flush=True)
    return rows, failures


def markdown(rows: list[dict]) -> str:
    lines = ["| engine | n | op | median ms | p95 ms | peak MB |", "|---|---:|---|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["op"], r["n"], r["median_ms"])):
        lines.append(f"| {r['engine']} | {r['n']:,} | {r['op']} | {r['median_ms']} | {r['p95_ms']} | {r['peak_mb']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="Speed and scale runs: rows from every benchmark module."
    )
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="comma-separated KB sizes")
    available = sorted({op for name, module in suites().items() for op in (name, *ops_of(name, module))})
    parser.add_argument("--ops", help=f"comma-separated, from: {', '.join(available)} (default: all)")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    parser.add_argument("--no-peers", action="store_true", help="skip the BM25 peers (bm25s, rank-bm25, PISA, tantivy)")
    parser.add_argument("--smoke", action="store_true",
                        help="repeat every measurement as few times as possible: proves each op finishes, "
                             "its figures mean nothing")
    args = parser.parse_args(argv)
    ops = set(args.ops.split(",")) if args.ops else None
    if args.smoke:
        os.environ[SMOKE_ENV] = "1"  # read by `benchmarks.repeats`, here and in the child processes
    if ops and ops - set(available):
        parser.error(f"unknown ops: {', '.join(sorted(ops - set(available)))}")
    rows, failures = run([int(size) for size in args.sizes.split(",")], ops, peers=not args.no_peers)
    print(json.dumps(rows, indent=1) if args.json else markdown(rows))
    if failures:
        sys.exit(f"{len(failures)} op(s) failed: " + "; ".join(failures))


if __name__ == "__main__":
    main()
