"""The targets of issue 41 as ratios between rows of one run: ours against a peer, or against the
calibration (benchmarks/calibration.py), both measured on the same machine in the same hour.
Absolute milliseconds do not transfer between machines; these do (README, docs/benchmarks.md)."""

from __future__ import annotations

from dataclasses import dataclass

Key = tuple[str, str]  # (engine, op)


@dataclass(frozen=True)
class Ratio:
    name: str
    ours: Key
    against: tuple[Key, ...]  # summed: the question path is compared with BM25 + HDC together
    target: float
    same_n: bool = True  # False: the denominator is a machine figure (n 0), not a KB of size n


RATIOS = (
    Ratio("BM25 top-10 / PISA", ("mrptui", "bm25_top10"), (("pisa", "bm25_top10"),), 1.5),
    Ratio("BM25 top-10 / tantivy", ("mrptui", "bm25_top10"), (("tantivy", "bm25_top10"),), 1.5),
    Ratio("cold open to first answer / tantivy build", ("mrptui", "cold_open"), (("tantivy", "build"),), 3.0),
    Ratio("first run / cold open (CLI)", ("mrptui", "first_run"), (("mrptui-cli", "cold_open"),), 1.5),
    Ratio("ask / (BM25 top-10 + HDC scan)", ("mrptui", "ask"), (("mrptui", "bm25_top10"), ("mrptui", "hdc_scan")), 3.0),
    Ratio("HDC scan / its bandwidth floor", ("mrptui", "hdc_scan"), (("bandwidth-floor", "hdc_scan"),), 2.0),
    Ratio(
        "CLI ask on the sample KB / bare import",
        ("mrptui-sample-kb", "cli_ask_wall"),
        (("calibration", "bare_import"),),
        1.5,
        same_n=False,
    ),
)


def ratio_rows(rows: list[dict]) -> list[dict]:
    """Every ratio whose rows this run produced, per KB size: value, target and whether it is met."""
    median = {(r["engine"], r["op"], r["n"]): r["median_ms"] for r in rows}
    found = []
    for ratio in RATIOS:
        for (engine, op, n), ours in sorted(median.items(), key=lambda item: item[0][2]):
            if (engine, op) != ratio.ours:
                continue
            parts = [median.get((*key, n if ratio.same_n else 0)) for key in ratio.against]
            if None in parts or not sum(parts):
                continue
            value = ours / sum(parts)
            found.append(
                {
                    "ratio": ratio.name,
                    "n": n,
                    "value": round(value, 3),
                    "target": ratio.target,
                    "met": value <= ratio.target,
                }
            )
    return found


def markdown(found: list[dict]) -> str:
    lines = ["| ratio | n | value | target | met |", "|---|---:|---:|---:|---|"]
    for r in found:
        lines.append(f"| {r['ratio']} | {r['n']:,} | {r['value']:.2f} | ≤ {r['target']} | {'✓' if r['met'] else '✗'} |")
    return "\n".join(lines)
