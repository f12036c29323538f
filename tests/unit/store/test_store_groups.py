"""Small files of one folder cached as one segment (core/store/groups.py): the same units and
diagnostics as a segment per file, edits and deletions seen by a reload, and a warm open whose
work per file is the scan's one `stat` (issue 36: 50,000 one-unit files took 258 s warm)."""

from __future__ import annotations

import builtins
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.kb.knowledge_base import KnowledgeBase
from core.store import SegmentStore
from core.store.atomic import TEMP_FOLDER, temp_dir
from core.store.groups import FileGroup, GroupCaps, plan_groups
from core.units import Caller


def note(folder: Path, number: int, extra: str = "") -> Path:
    path = folder / f"note-{number:03d}.md"
    path.write_text(
        f"## Context Unit bells::chunk-{number:03d}::unit-000\nRole: Explanation\nTopic: Bell {number}\n"
        f"Claim: Bell {number} was cast in bronze {extra}.\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for number in range(40):
        note(folder, number)
    (folder / "note-999.md").write_text(
        "## Context Unit bells::chunk-999::unit-000\nRole: Wrong\nTopic: x\nClaim: y.\n"
    )
    big = (
        "## Context Unit bells::chunk-500::unit-000\nRole: Explanation\nTopic: Big bell\nClaim: The big bell is loud.\n"
    )
    (folder / "big.md").write_text(big + "\n" * 20_000, encoding="utf-8")
    return folder


def test_a_folder_of_small_files_is_one_group_and_large_or_few_files_stay_alone(notes: Path) -> None:
    files = sorted(notes.iterdir())
    stats = {str(f): (0, f.stat().st_size, 0, 0) for f in files}
    sources = plan_groups(files, stats)
    groups = [s for s in sources if isinstance(s, FileGroup)]
    assert len(groups) == 1 and len(groups[0].files) == 41 and notes / "big.md" in sources
    assert plan_groups(files, stats, GroupCaps(min_files=100)) == files
    assert [len(g.files) for g in plan_groups(files, stats, GroupCaps(max_files=20)) if isinstance(g, FileGroup)] == [
        20,
        20,
        1,
    ]


def test_a_group_holds_what_a_segment_per_file_holds(notes: Path, tmp_path: Path, monkeypatch) -> None:
    grouped = KnowledgeBase.load([notes], store=SegmentStore(tmp_path / "a"))
    monkeypatch.setattr("core.store.groups.CAPS", GroupCaps(min_files=1_000))
    monkeypatch.setattr(
        "core.kb.knowledge_base.plan_groups", lambda files, stats: plan_groups(files, stats, GroupCaps(min_files=1_000))
    )
    alone = KnowledgeBase.load([notes], store=SegmentStore(tmp_path / "b"))
    assert grouped.units == alone.units and len(grouped.units) == 41
    assert sorted(d.format() for d in grouped.diagnostics) == sorted(d.format() for d in alone.diagnostics)
    assert any(d.file == str(notes / "note-999.md") and d.line == 2 for d in grouped.diagnostics)
    assert grouped.view(Caller()).units.ids_roles_acts()[0] == alone.view(Caller()).units.ids_roles_acts()[0]


def test_a_reload_sees_an_edit_and_a_deletion_inside_a_group(notes: Path, tmp_path: Path) -> None:
    kb = KnowledgeBase.load([notes], store=SegmentStore(tmp_path / "cache"))
    note(notes, 7, "and tin")
    os.utime(notes / "note-007.md", ns=(1, 1))
    (notes / "note-020.md").unlink()
    reloaded = kb.reload()
    ids = {u.id: u for u in reloaded.units}
    assert "bells::chunk-020::unit-000" not in ids and "and tin" in ids["bells::chunk-007::unit-000"].claim
    assert len(reloaded.units) == len(kb.units) - 1


def test_a_warm_open_reads_a_constant_number_of_files_whatever_the_file_count(tmp_path: Path, monkeypatch) -> None:
    def opens_for(count: int) -> int:
        folder = tmp_path / f"kb{count}"
        folder.mkdir()
        for number in range(count):
            note(folder, number)
            os.utime(folder / f"note-{number:03d}.md", ns=(10**18, 10**18))  # not racy: trusted at once
        cache = tmp_path / f"cache{count}"
        KnowledgeBase.load([folder], store=SegmentStore(cache))
        opened = []
        real_open = builtins.open

        def counted(file, *args, **kwargs):
            opened.append(file)
            return real_open(file, *args, **kwargs)

        with monkeypatch.context() as patch:
            patch.setattr(builtins, "open", counted)
            patch.setattr(io, "open", counted)  # pathlib's read_bytes
            store = SegmentStore(cache)
            KnowledgeBase.load([folder], store=store)
        assert (store.builds, store.loads) == (0, 1)
        return len(opened)

    assert opens_for(20) == opens_for(60)


def test_a_temp_folder_is_removed_at_the_next_open_once_its_writer_is_gone(notes: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / TEMP_FOLDER).mkdir(parents=True, mode=0o700)
    os.chmod(cache, 0o700)
    code = f"from pathlib import Path; from core.store.atomic import temp_dir; print(temp_dir(Path({str(cache / TEMP_FOLDER)!r}), 'seg'))"
    dead = Path(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip())
    (dead / "units.jsonl").write_bytes(b"half")
    live = temp_dir(cache / TEMP_FOLDER, "mine")
    KnowledgeBase.load([notes], store=SegmentStore(cache))
    assert not dead.exists() and live.is_dir()
    assert sorted(p.name for p in (cache / TEMP_FOLDER).iterdir()) == [live.name]
