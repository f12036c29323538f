"""`python -m benchmarks [--sizes 1000,10000,100000] [--ops build,...] [--json] [--no-peers]`.

Every run starts with the calibration rows (benchmarks/calibration.py), tags each row with the
load average while its module ran, and ends with the ratios of benchmarks/ratios.py."""

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
from benchmarks import SMOKE_ENV, BenchmarkFailed, calibration, ratios

DEFAULT_SIZES = "1000,10000,100000"


def suites() -> dict[str, ModuleType]:
    """Every benchmark module in the package (one that defines `run`), by name."""
    found = {}
    for info in pkgutil.iter_modules(benchmarks.__path__):
        if info.name in ("__main__", "calibration", "ratios"):
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
        before = os.getloadavg()[0]
        try:
            produced = module.run(sizes, **options)
        except BenchmarkFailed as exc:
            produced = exc.rows
            failures.append(str(exc))
            print(f"benchmark failed: {exc}", file=sys.stderr, flush=True)
        rows += _with_load(produced, before)
    return rows, failures


def _with_load(produced: list[dict], before: float) -> list[dict]:
    """Each row with the one-minute load average before and after its module ran: a figure taken
    while other work shared the cores says so beside it."""
    load = [round(before, 2), round(os.getloadavg()[0], 2)]
    return [{**r, "load": load} for r in produced]


def calibrate() -> list[dict]:
    print("benchmarks: calibration (cpu_loop, memory_read, bare_import, py_stem)", file=sys.stderr, flush=True)
    return _with_load(calibration.rows(), os.getloadavg()[0])


def markdown(rows: list[dict]) -> str:
    lines = ["| engine | n | op | median ms | p95 ms | peak MB | load |", "|---|---:|---|---:|---:|---:|---|"]
    for r in sorted(rows, key=lambda r: (r["engine"] != "calibration", r["op"], r["n"], r["median_ms"])):
        load = "–".join(f"{value:.1f}" for value in r.get("load", ()))
        lines.append(
            f"| {r['engine']} | {r['n']:,} | {r['op']} | {r['median_ms']} | {r['p95_ms']} | {r['peak_mb']} | {load} |"
        )
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
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="repeat every measurement as few times as possible: proves each op finishes, its figures mean nothing",
    )
    args = parser.parse_args(argv)
    ops = set(args.ops.split(",")) if args.ops else None
    if args.smoke:
        os.environ[SMOKE_ENV] = "1"  # read by `benchmarks.repeats`, here and in the child processes
    if ops and ops - set(available):
        parser.error(f"unknown ops: {', '.join(sorted(ops - set(available)))}")
    machine = calibrate()
    rows, failures = run([int(size) for size in args.sizes.split(",")], ops, peers=not args.no_peers)
    rows = machine + rows
    found = ratios.ratio_rows(rows)
    if args.json:
        print(json.dumps({"rows": rows, "ratios": found}, indent=1))
    else:
        print(markdown(rows) + "\n\n" + ratios.markdown(found))
    if failures:
        sys.exit(f"{len(failures)} op(s) failed: " + "; ".join(failures))


if __name__ == "__main__":
    main()
