"""The benchmark entry point still runs and emits well-formed rows (speed is measured in benchmarks/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_benchmark_entry_emits_valid_rows(root: Path) -> None:
    command = [sys.executable, "-m", "benchmarks", "--sizes", "200", "--json", "--no-peers"]
    command += ["--ops", "build,bm25_top10,hdc_scan"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120, check=True)
    rows = json.loads(result.stdout)
    assert {(r["engine"], r["op"]) for r in rows} == {
        ("mrptui-bm25", "build"),
        ("mrptui-hdc", "build"),
        ("mrptui", "bm25_top10"),
        ("mrptui", "hdc_scan"),
        ("bandwidth-floor", "hdc_scan"),
    }
    for r in rows:
        assert set(r) == {"engine", "n", "op", "median_ms", "p95_ms", "peak_mb"}
        assert r["n"] == 200
        assert 0 < r["median_ms"] <= r["p95_ms"]
        assert r["peak_mb"] >= 0


def test_store_benchmark_emits_reload_and_context_rows(root: Path) -> None:
    command = [sys.executable, "-m", "benchmarks", "--sizes", "200", "--json", "--ops", "reload_one_file,ask_with_context"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120, check=True)
    rows = json.loads(result.stdout)
    assert {(r["engine"], r["n"], r["op"]) for r in rows} == {
        ("mrptui", 200, "reload_one_file"),
        ("mrptui", 200, "ask_with_context"),
    }
    assert all(0 < r["median_ms"] <= r["p95_ms"] for r in rows)


def test_nlp_benchmark_emits_tag_and_link_rows() -> None:
    from benchmarks import nlp

    rows = nlp.run(ops={"nlp_tag", "nlp_link"})
    assert {r["op"] for r in rows} == {"nlp_tag", "nlp_link"}
    assert all(r["n"] > 0 and 0 < r["median_ms"] <= r["p95_ms"] for r in rows)
