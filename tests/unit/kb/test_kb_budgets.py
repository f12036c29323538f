"""Whole-KB budgets (core/kb/budgets.py): a KB with more files, bytes or units than
`inputs.maxKbFiles`, `maxKbBytes` or `maxKbUnits` is refused with the budget named, at the file
that passed it, on an open and on a reload; never opened in part."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl import caps as caps_module
from core.cnl.caps import InputCaps
from core.infra.config import OverBudget
from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.store import SegmentStore
from tests.support.store_kb import write_kb

PER_FILE = 20


@pytest.fixture
def kb(tmp_path: Path) -> tuple[Path, list[Path]]:
    files = write_kb(tmp_path / "kb", files=3, per_file=PER_FILE)
    return tmp_path / "kb", files


def capped(monkeypatch: pytest.MonkeyPatch, **caps: int) -> None:
    monkeypatch.setattr(caps_module, "CAPS", InputCaps(**caps))


def refusal(folder: Path, store: SegmentStore) -> tuple[str, str]:
    with pytest.raises(OverBudget) as raised:
        KnowledgeBase.load([folder], store)
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
def test_a_kb_past_a_budget_is_refused_at_the_file_that_passed_it(kb, tmp_path, monkeypatch, caps, budget, at) -> None:
    folder, files = kb
    capped(monkeypatch, **caps)
    file, message = refusal(folder, SegmentStore(tmp_path / "cache"))
    assert file == str(files[at]) and budget in message and "not opened" in message


def test_bytes_are_counted_from_the_scan_before_any_file_is_read(kb, tmp_path, monkeypatch) -> None:
    folder, files = kb
    first_two = sum(f.stat().st_size for f in files[:2])
    capped(monkeypatch, max_kb_bytes=first_two)
    store = SegmentStore(tmp_path / "cache")
    file, message = refusal(folder, store)
    assert file == str(files[2]) and f"more than {first_two:,} bytes (inputs.maxKbBytes)" in message
    assert not (tmp_path / "cache" / "segments").exists() or not any((tmp_path / "cache" / "segments").iterdir())


def test_a_kb_at_its_budgets_opens_whole(kb, tmp_path, monkeypatch) -> None:
    folder, files = kb
    size = sum(f.stat().st_size for f in files)
    capped(monkeypatch, max_kb_files=3, max_kb_units=3 * PER_FILE, max_kb_bytes=size)
    assert KnowledgeBase.load([folder], SegmentStore(tmp_path / "cache")).unit_count == 3 * PER_FILE


def test_a_cached_kb_is_refused_as_a_cold_one_is(kb, tmp_path, monkeypatch) -> None:
    folder, files = kb
    store = SegmentStore(tmp_path / "cache")
    KnowledgeBase.load([folder], store)
    capped(monkeypatch, max_kb_units=PER_FILE)
    assert refusal(folder, store)[0] == str(files[1])


def test_a_reload_past_a_budget_raises_and_leaves_the_kb_it_came_from_untouched(kb, tmp_path, monkeypatch) -> None:
    folder, files = kb
    opened = KnowledgeBase.load([folder], SegmentStore(tmp_path / "cache"))
    write_kb(folder, files=4, per_file=PER_FILE, seed=5)
    capped(monkeypatch, max_kb_files=3)
    with pytest.raises(OverBudget, match=r"inputs\.maxKbFiles"):
        opened.reload()
    assert opened.unit_count == 3 * PER_FILE


def test_each_budget_has_a_range_and_a_default_well_above_the_benchmarks() -> None:
    properties = InputCaps.model_json_schema()["properties"]
    for name in ("max_kb_files", "max_kb_bytes", "max_kb_units"):
        assert properties[name]["minimum"] >= 1 and properties[name]["maximum"] > properties[name]["default"]
    # The 1M-unit benchmark (200 files), the 50,000-file one.
    assert InputCaps().max_kb_units >= 2_000_000 and InputCaps().max_kb_files >= 100_000
