"""Whole-KB budgets (core/kb/budgets.py): a KB with more files, bytes or units than
`inputs.maxKbFiles`, `maxKbBytes` or `maxKbUnits` is refused with the budget named, at the file
that passed it, on an open and on a reload; never opened in part."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.infra.config import KbBudgets, OverBudget
from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.store import SegmentStore
from tests.support.store_kb import write_kb

PER_FILE = 20


@pytest.fixture
def kb(tmp_path: Path) -> tuple[Path, list[Path]]:
    files = write_kb(tmp_path / "kb", files=3, per_file=PER_FILE)
    return tmp_path / "kb", files


def refusal(folder: Path, store: SegmentStore, **budgets: int) -> tuple[str, str]:
    with pytest.raises(OverBudget) as raised:
        KnowledgeBase.load([folder], store, budgets=KbBudgets(**budgets))
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code is Code.KB_TOO_LARGE and diagnostic.is_error
    return diagnostic.file, diagnostic.message


@pytest.mark.parametrize(
    ("caps", "budget", "at"),
    [
        ({"max_kb_files": 2}, "inputs.maxKbFiles", 2),
        ({"max_kb_units": 2 * PER_FILE + 1}, "inputs.maxKbUnits", 2),
        ({"max_kb_units": PER_FILE - 1}, "inputs.maxKbUnits", 0),
    ],
)
def test_a_kb_past_a_budget_is_refused_at_the_file_that_passed_it(kb, tmp_path, caps, budget, at) -> None:
    folder, files = kb
    file, message = refusal(folder, SegmentStore(tmp_path / "cache"), **caps)
    assert file == str(files[at]) and budget in message and "not opened" in message


def test_bytes_are_counted_from_the_scan_before_any_file_is_read(kb, tmp_path) -> None:
    folder, files = kb
    first_two = sum(f.stat().st_size for f in files[:2])
    store = SegmentStore(tmp_path / "cache")
    file, message = refusal(folder, store, max_kb_bytes=first_two)
    assert file == str(files[2]) and f"more than {first_two:,} bytes (inputs.maxKbBytes in retrieval.json)" in message
    assert not (tmp_path / "cache" / "segments").exists() or not any((tmp_path / "cache" / "segments").iterdir())


def test_a_kb_at_its_budgets_opens_whole(kb, tmp_path) -> None:
    folder, files = kb
    size = sum(f.stat().st_size for f in files)
    budgets = KbBudgets(max_kb_files=3, max_kb_units=3 * PER_FILE, max_kb_bytes=size)
    assert KnowledgeBase.load([folder], SegmentStore(tmp_path / "cache"), budgets=budgets).unit_count == 3 * PER_FILE


def test_a_cached_kb_is_refused_as_a_cold_one_is(kb, tmp_path) -> None:
    folder, files = kb
    store = SegmentStore(tmp_path / "cache")
    KnowledgeBase.load([folder], store)
    assert refusal(folder, store, max_kb_units=PER_FILE)[0] == str(files[1])


def test_a_reload_keeps_the_budgets_it_was_opened_under(kb, tmp_path) -> None:
    """A reload past them raises and leaves the KB it came from untouched; so does a rebuild."""
    folder, files = kb
    opened = KnowledgeBase.load([folder], SegmentStore(tmp_path / "cache"), budgets=KbBudgets(max_kb_files=3))
    write_kb(folder, files=4, per_file=PER_FILE, seed=5)
    for again in (opened.reload, opened.rebuilt):
        with pytest.raises(OverBudget, match=r"inputs\.maxKbFiles in retrieval\.json"):
            again()
    assert opened.unit_count == 3 * PER_FILE


def test_each_budget_has_a_range_and_a_default_well_above_the_benchmarks() -> None:
    properties = KbBudgets.model_json_schema(by_alias=True)["properties"]
    for name in ("maxKbFiles", "maxKbBytes", "maxKbUnits"):
        assert properties[name]["minimum"] >= 1 and properties[name]["maximum"] > properties[name]["default"]
    # The 1M-unit benchmark (200 files), the 50,000-file one.
    assert KbBudgets().max_kb_units >= 2_000_000 and KbBudgets().max_kb_files >= 100_000
