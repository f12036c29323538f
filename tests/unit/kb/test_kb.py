from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller, KnowledgeUnit, Role

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl"
SECRET = "ZX-991"


def unit_md(uid: str, claim: str = "A claim.", **extra: str) -> str:
    lines = [f"## Context Unit {uid}", "Role: Explanation", "Topic: Topic words", f"Claim: {claim}"]
    lines += [f"{name}: {value}" for name, value in extra.items()]
    return "\n".join(lines) + "\n\n"


def make_unit(uid: str, **fields) -> KnowledgeUnit:
    source, chunk = uid.split("::")[0], "::".join(uid.split("::")[:2])
    values = {"role": Role.EXPLANATION, "topic": "t", "claim": "c", **fields}
    return KnowledgeUnit(id=uid, source_id=source, chunk_id=chunk, **values)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- loading -----------------------------------------------------------------------------------


def test_loads_folders_recursively_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path / "b.md", unit_md("b::chunk-000::unit-000"))
    write(tmp_path / "a" / "z.txt", "Orion uses Kafka.\n")
    write(
        tmp_path / "a" / "y.cnl",
        '@k1 ku atomic "y::chunk-000::unit-000"\nset $k1 role Explanation\nset $k1 topic t\nset $k1 claim c\n',
    )
    write(tmp_path / "c.nl", "Atlas provides storage.\n")
    write(tmp_path / ".hidden" / "h.md", unit_md("h::chunk-000::unit-000"))
    write(tmp_path / ".h.md", unit_md("h::chunk-000::unit-001"))
    write(tmp_path / "queries.json", "[]")
    write(tmp_path / "notes.docx", "ignored")
    kb = KnowledgeBase.load([tmp_path])
    assert [f.relative_to(tmp_path).as_posix() for f in kb.files] == ["a/y.cnl", "a/z.txt", "b.md", "c.nl"]
    assert [u.id.split("::chunk-")[0] for u in kb.units] == ["b", "c", "y", "z"]
    assert kb.diagnostics == ()


def test_named_files_with_unsupported_type_and_missing_paths_are_diagnosed(tmp_path: Path) -> None:
    docx = write(tmp_path / "notes.docx", "x")
    kb = KnowledgeBase.load([docx, tmp_path / "gone"])
    assert sorted((d.code, Path(d.file).name) for d in kb.diagnostics) == [
        (Code.PATH_NOT_FOUND, "gone"),
        (Code.UNSUPPORTED_FILE_TYPE, "notes.docx"),
    ]


def test_duplicate_ids_across_files_name_both_places(tmp_path: Path) -> None:
    first = write(tmp_path / "a.md", unit_md("dup::chunk-000::unit-000", "first"))
    second = write(tmp_path / "b.md", "# Title\n\n" + unit_md("dup::chunk-000::unit-000", "second"))
    kb = KnowledgeBase.load([tmp_path])
    assert [u.claim for u in kb.units] == ["first", "second"], "the author's list holds both"
    assert len(kb.view(Caller())) == 0, "a caller who sees both is served neither"
    [diagnostic] = kb.diagnostics
    assert (diagnostic.code, diagnostic.file, diagnostic.line) == (Code.DUPLICATE_UNIT_ID, str(second), 3)
    assert f"first defined at {first}:1" in diagnostic.message


def test_duplicate_ids_within_one_file(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", unit_md("d::chunk-000::unit-000") + unit_md("d::chunk-000::unit-000"))
    kb = KnowledgeBase.load([path])
    assert len(kb.units) == 2 and len(kb.view(Caller())) == 0
    assert [(d.code, d.line) for d in kb.diagnostics] == [(Code.DUPLICATE_UNIT_ID, 6)]
    assert f"{path}:1" in kb.diagnostics[0].message


def test_broken_files_do_not_stop_the_rest() -> None:
    kb = KnowledgeBase.load([FIXTURES])
    assert {Path(d.file).name for d in kb.diagnostics if d.is_error} == {"broken.md"}
    assert len(kb.units) == 2 + 5 + 2 + 3


# --- change detection ----------------------------------------------------------------------------


def test_version_fingerprint_and_changed_files(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", unit_md("a::chunk-000::unit-000"))
    kb = KnowledgeBase.load([tmp_path])
    assert kb.fingerprint() == kb.version == KnowledgeBase.fingerprint_of([tmp_path])
    assert kb.changed_files() == ()
    path.write_text(unit_md("a::chunk-000::unit-000", "edited claim"))
    os.utime(path, ns=(1, 1))
    added = write(tmp_path / "b.txt", "Orion uses Kafka.\n")
    assert kb.fingerprint() != kb.version
    assert kb.changed_files() == (path, added)
    fresh = kb.reload()
    assert fresh is not kb and fresh.version != kb.version
    assert [u.claim for u in kb.units] == ["A claim."], "the old KB is never changed in place"
    assert "edited claim" in [u.claim for u in fresh.units]
    path.unlink()
    assert fresh.changed_files() == (path,)


def test_unchanged_files_keep_the_version(tmp_path: Path) -> None:
    write(tmp_path / "a.md", unit_md("a::chunk-000::unit-000"))
    assert KnowledgeBase.load([tmp_path]).version == KnowledgeBase.load([tmp_path]).version


def test_a_path_that_appears_later_changes_the_fingerprint(tmp_path: Path) -> None:
    kb = KnowledgeBase.load([tmp_path / "later.md"])
    write(tmp_path / "later.md", unit_md("l::chunk-000::unit-000"))
    assert kb.fingerprint() != kb.version


# --- the permitted view ----------------------------------------------------------------------


@pytest.fixture
def restricted_kb(tmp_path: Path) -> KnowledgeBase:
    text = (
        unit_md("pub::chunk-000::unit-000", "Public returns policy.")
        + unit_md("sec::chunk-000::unit-000", f"Escalation code {SECRET} for staff.", Acl="staff, legal")
        + unit_md("eu::chunk-000::unit-000", "EU-only rule.", Region="EU")
    )
    return KnowledgeBase.load([write(tmp_path / "kb.md", text)])


def test_restricted_unit_is_absent_from_the_public_view(restricted_kb: KnowledgeBase) -> None:
    view = restricted_kb.view(Caller())
    assert [u.id for u in view.units] == ["pub::chunk-000::unit-000"]
    assert view.get("sec::chunk-000::unit-000") is None
    assert "sec::chunk-000::unit-000" not in view
    assert len(view) == 1
    assert not any(SECRET in unit.model_dump_json() for unit in view)


def test_a_caller_with_one_matching_tag_sees_it(restricted_kb: KnowledgeBase) -> None:
    view = restricted_kb.view(Caller(tags=frozenset({"legal", "other"})))
    assert view.get("sec::chunk-000::unit-000").claim == f"Escalation code {SECRET} for staff."
    assert restricted_kb.view(Caller(tags=frozenset({"Staff"}))).get("sec::chunk-000::unit-000") is None


@pytest.mark.parametrize(("region", "visible"), [("EU", True), ("eu", True), ("US", False), (None, False)])
def test_region_matches_case_insensitively(restricted_kb: KnowledgeBase, region: str | None, visible: bool) -> None:
    assert ("eu::chunk-000::unit-000" in restricted_kb.view(Caller(region=region))) is visible


@pytest.mark.parametrize(
    ("as_of", "visible"),
    [
        (dt.date(2026, 3, 31), False),
        (dt.date(2026, 4, 1), True),
        (dt.date(2026, 6, 15), True),
        (dt.date(2026, 6, 30), True),
        (dt.date(2026, 7, 1), False),
    ],
)
def test_effective_dates_are_inclusive(as_of: dt.date, visible: bool) -> None:
    kb = KnowledgeBase.from_units(
        [make_unit("d::chunk-000::unit-000", effective_from=dt.date(2026, 4, 1), effective_to=dt.date(2026, 6, 30))]
    )
    assert (len(kb.view(Caller(as_of=as_of))) == 1) is visible


def test_view_keys_differ_per_caller_and_version(restricted_kb: KnowledgeBase, tmp_path: Path) -> None:
    public, staff = restricted_kb.view(Caller()), restricted_kb.view(Caller(tags=frozenset({"staff"})))
    assert public.key != staff.key
    assert restricted_kb.view(Caller()) is public
    assert public.key[0] == restricted_kb.version
    other = KnowledgeBase.load([write(tmp_path / "other.md", unit_md("o::chunk-000::unit-000"))])
    assert other.view(Caller()).key != public.key


def test_with_extra_adds_current_turn_units_in_a_new_view() -> None:
    kb = KnowledgeBase.from_units([make_unit("b::chunk-000::unit-000")])
    view = kb.view(Caller())
    extra = make_unit("a::chunk-000::unit-000")
    bigger = view.with_extra([extra, make_unit("b::chunk-000::unit-000", topic="hijack")])
    assert [u.id for u in bigger.units] == ["a::chunk-000::unit-000", "b::chunk-000::unit-000"]
    assert bigger.get("a::chunk-000::unit-000").current_turn
    assert bigger.get("b::chunk-000::unit-000").topic == "t", "a KB unit cannot be replaced by a request"
    assert bigger.key != view.key
    assert len(view) == 1, "the original view is unchanged"
    assert view.with_extra([]) is view


def test_without_keeps_a_view_key_that_with_extra_can_extend() -> None:
    kb = KnowledgeBase.from_units([make_unit("a::chunk-000::unit-000"), make_unit("b::chunk-000::unit-000")])
    view = kb.view(Caller())
    narrowed = view.without(["a::chunk-000::unit-000"])
    assert [u.id for u in narrowed.units] == ["b::chunk-000::unit-000"]
    assert narrowed.key[:2] == view.key[:2] and narrowed.key != view.key
    assert view.without(["b::chunk-000::unit-000"]).key != narrowed.key
    extended = narrowed.with_extra([make_unit("c::chunk-000::unit-000")])
    assert [u.id for u in extended.units] == ["b::chunk-000::unit-000", "c::chunk-000::unit-000"]


def test_from_units_serves_no_duplicate_and_versions_by_content() -> None:
    kb = KnowledgeBase.from_units([make_unit("x::chunk-000::unit-000"), make_unit("x::chunk-000::unit-000", topic="2")])
    assert [u.topic for u in kb.units] == ["t", "2"] and len(kb.view(Caller())) == 0
    assert [d.code for d in kb.diagnostics] == [Code.DUPLICATE_UNIT_ID]
    assert KnowledgeBase.from_units([make_unit("x::chunk-000::unit-000")]).version != kb.version
    changed = KnowledgeBase.from_units(
        [make_unit("x::chunk-000::unit-000"), make_unit("x::chunk-000::unit-000", topic="3")]
    )
    assert changed.version != kb.version


def test_a_folder_readme_describes_the_kb_and_is_not_read_unless_named(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Tide gauges\nThis folder holds the harbour's gauge notes.\n")
    (tmp_path / "readme.txt").write_text("Gauges are calibrated in spring.\n")
    (tmp_path / "gauges.md").write_text("# Gauges\n## Pier gauge\nThe pier gauge reports every six minutes.\n")
    from_folder = KnowledgeBase.load([tmp_path])
    assert [u.claim for u in from_folder.units] == ["The pier gauge reports every six minutes."]
    assert not from_folder.diagnostics
    named = KnowledgeBase.load([tmp_path / "README.md"])
    assert [u.claim for u in named.units] == ["This folder holds the harbour's gauge notes."]
