"""Reading files safely: every I/O problem is a diagnostic, never an exception."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import core.cnl.source as source
from core.cnl import Format, detect_format, read_file, read_text
from core.infra.diagnostics import Code

UNIT = "## Context Unit src::chunk-000::unit-000\nRole: Explanation\nTopic: T\nClaim: C\n"


def only(result) -> tuple[Code, int, int]:
    units, diagnostics = result
    assert units == []
    [diagnostic] = diagnostics
    return diagnostic.code, diagnostic.line, diagnostic.col


def test_missing_path(tmp_path: Path) -> None:
    assert only(read_file(tmp_path / "nope.md")) == (Code.PATH_NOT_FOUND, 1, 1)


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "image.md"
    path.write_bytes(b"## Context Unit x\n\x00\x01\x02")
    assert only(read_file(path)) == (Code.BINARY_FILE, 1, 1)


def test_invalid_utf8_reports_the_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("ok\nline two\ncafé \xff here".encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    units, diagnostics = read_file(path)
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.INVALID_ENCODING, 3, 6)]
    assert "0xff" in diagnostics[0].message


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "units.docx"
    path.write_text(UNIT)
    assert only(read_file(path)) == (Code.UNSUPPORTED_FILE_TYPE, 1, 1)


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder.md"
    folder.mkdir()
    assert only(read_file(folder)) == (Code.FILE_UNREADABLE, 1, 1)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.md"
    path.write_text(UNIT)

    real_open = os.open

    def denied(file, *args, **kwargs):
        if Path(file) == path:
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    # Tests may run as root, where chmod 000 does not stop reading; fail the open itself.
    monkeypatch.setattr(os, "open", denied)
    code, _, _ = only(read_file(path))
    assert code is Code.FILE_UNREADABLE


def test_file_over_the_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 64)
    path = tmp_path / "big.txt"
    path.write_bytes(b"Orion uses Kafka.".ljust(65))
    assert only(read_file(path)) == (Code.FILE_TOO_LARGE, 1, 1)
    path.write_bytes(b"Orion uses Kafka.".ljust(64))
    units, diagnostics = read_file(path)
    assert diagnostics == [] and len(units) == 1


def test_real_50mb_file_is_refused_without_being_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        chunk = b"Orion uses Kafka. " * 4096
        for _ in range(50 * 1024 * 1024 // len(chunk) + 1):
            handle.write(chunk)
    opened: list[object] = []
    real_open = os.open
    monkeypatch.setattr(
        os, "open", lambda file, *args, **kwargs: opened.append(file) or real_open(file, *args, **kwargs)
    )
    started = time.perf_counter()
    result = read_file(path)
    elapsed = time.perf_counter() - started
    assert only(result)[0] is Code.FILE_TOO_LARGE
    assert opened == []
    assert elapsed < 0.5


def test_bom_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf" + UNIT.encode())
    units, diagnostics = read_file(path)
    assert diagnostics == [] and [u.id for u in units] == ["src::chunk-000::unit-000"]


def test_kind_overrides_the_extension(tmp_path: Path) -> None:
    path = tmp_path / "notes.weird"
    path.write_text("Orion uses Kafka.\n")
    units, diagnostics = read_file(path, kind=Format.TEXT)
    assert diagnostics == [] and units[0].relation == "uses"


@pytest.mark.parametrize(
    ("text", "file", "kind"),
    [
        (UNIT, "kb.md", Format.MARKDOWN),
        ('@k1 ku atomic "x"', "kb.cnl", Format.SOP),
        ('\n  @k1 ku atomic "x"', "notes.txt", Format.SOP),
        ("anything", "kb.cnl", Format.SOP),
        ("Orion uses Kafka.", "notes.nl", Format.TEXT),
        ("Orion uses Kafka.", "<stdin>", Format.TEXT),
        ("# Dome\nThe shutter closes in high wind.\n", "notes.md", Format.TEXT),
        ("# Notes\n\nRole: Definition\nTopic: Shutter\n", "notes.md", Format.MARKDOWN),
        ("## Context-Unit dome::chunk-000::unit-000\n", "notes.md", Format.MARKDOWN),
        ("", "empty.md", Format.MARKDOWN),
    ],
)
def test_detect_format(text: str, file: str, kind: Format) -> None:
    assert detect_format(text, file) is kind


def test_read_text_dispatches_by_kind() -> None:
    assert [u.id for u in read_text(UNIT, "kb.md").units] == ["src::chunk-000::unit-000"]
    assert read_text(UNIT, "kb.md", kind="text").units[0].id.startswith("kb::chunk-")


def test_a_prose_markdown_file_is_read_as_plain_text_under_its_headings(tmp_path: Path) -> None:
    path = tmp_path / "observatory.md"
    path.write_text("# Observatory\n## Dome\nThe shutter closes when wind exceeds 15 m/s.\n")
    units, diagnostics = read_file(path)
    assert diagnostics == []
    assert [(u.title, u.claim) for u in units] == [("Dome", "The shutter closes when wind exceeds 15 m/s.")]


@pytest.mark.parametrize(
    ("text", "at"),
    [
        (UNIT, None),
        (UNIT + "Note: x\0y\n", len(UNIT) + 7),
        ("\0" + UNIT, 0),
        (UNIT.replace("C\n", "Café\n"), None),
        (UNIT.replace("C\n", "Café \ud800\n"), len(UNIT) + 3),
        (UNIT.replace("C\n", "é\udcff\n"), len(UNIT) - 1),
    ],
)
def test_the_first_bad_character_is_found_in_ascii_and_other_text(text: str, at: int | None) -> None:
    found = source.first_bad_character(text)
    assert (found.start() if found is not None else None) == at


def test_a_nul_in_an_ascii_file_is_reported_and_replaced() -> None:
    units, diagnostics = read_text(UNIT.replace("Topic: T", "Topic: T\0"), "kb.md")
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.INVALID_ENCODING, 3, 9)]
    assert [unit.topic for unit in units] == ["T\ufffd"]
