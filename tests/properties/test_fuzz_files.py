"""Fuzzing the file side: random and near-valid bytes through the readers, the trace reader and
the CLI. Bounded under `make test`; `make fuzz` runs the same properties with many more examples.

Properties: no exception and no exit 3, no NUL or undecodable character in any unit, diagnostics
inside the file, line-break style never changes what loads, one bad byte costs at most the unit
it falls in, and a cut trace keeps exactly its complete events.
"""

from __future__ import annotations

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cnl import normalise_newlines, read_file
from core.infra.diagnostics import Code
from core.kernel.contract import Request
from core.kernel.events import read_trace, to_json_line
from core.kernel.session import Session
from core.units import Caller, KnowledgeUnit
from mrptui.cli import main
from tests.support.fuzz_settings import bounded

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = (".md", ".cnl", ".txt", ".nl")
# Byte pieces readers must survive: line breaks of every style, NUL, undecodable and overlong
# UTF-8, a BOM, separators, and the syntax of every format.
PIECES = [
    b"\n",
    b"\r",
    b"\r\n",
    b"\xe2\x80\xa8",
    b"\xe2\x80\xa9",
    b"\xc2\x85",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xef\xbb\xbf",
    b"\t",
    b" ",
    b"## Context Unit ",
    b"kiln::chunk-000::unit-000",
    b"Role: Explanation",
    b"Topic: Glaze",
    b"Claim: Ash glazes run.",
    b"Procedure: ",
    b"  - step",
    b"---",
    b"# ",
    b"@k1 ku atomic ",
    b'"kiln::chunk-000::unit-001"',
    b"@k2 set $k1 claim ",
    b'"',
    b"[a b]",
    b"Cones bend at temperature.",
    b"Clay uses feldspar.",
    b"Questions:",
    b"e.g. ",
    b". ",
]
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "cnl").rglob("*") if p.suffix in (".md", ".cnl"))
FIXTURES += sorted(p for p in (ROOT / "sample_kb").rglob("*") if p.suffix in (".md", ".cnl"))
_BAD_TEXT = ("\x00", *(chr(c) for c in (0xD800, 0xDC80, 0xDCFF, 0xDFFF)))


@st.composite
def byte_documents(draw) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=600))
    return b"".join(draw(st.lists(st.sampled_from(PIECES) | st.binary(max_size=4), max_size=120)))


def assert_clean(units: list[KnowledgeUnit], diagnostics, data: bytes, file: str) -> None:
    lines = normalise_newlines(data.decode("utf-8", "replace")).count("\n") + 1
    for unit in units:
        dumped = unit.model_dump_json()
        json.loads(dumped)
        text = "".join(str(v) for v in unit.model_dump().values())
        assert not any(bad in text for bad in _BAD_TEXT), unit
        assert unit.location.line >= 1 and unit.location.line <= lines
    for diagnostic in diagnostics:
        assert diagnostic.file == file and isinstance(diagnostic.code, Code)
        assert diagnostic.line >= 1 and diagnostic.line <= lines and diagnostic.col >= 1, diagnostic


def _read_bytes(data: bytes, suffix: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"doc{suffix}"
        path.write_bytes(data)
        units, diagnostics = read_file(path)
    return units, diagnostics, str(path)


@bounded(50, hunt=150)
@given(data=byte_documents(), suffix=st.sampled_from(SUFFIXES))
def test_any_bytes_load_clean_units_and_placed_diagnostics(data: bytes, suffix: str) -> None:
    units, diagnostics, file = _read_bytes(data, suffix)
    assert_clean(units, diagnostics, data, file)


@bounded(40)
@given(fixture=st.sampled_from(FIXTURES), newline=st.sampled_from([b"\r", b"\r\n", b"\xe2\x80\xa8"]))
def test_line_break_style_never_changes_what_loads(fixture: Path, newline: bytes) -> None:
    data = fixture.read_bytes()
    expected, expected_problems, _ = _read_bytes(data, fixture.suffix)
    units, problems, _ = _read_bytes(data.replace(b"\n", newline), fixture.suffix)
    assert [u.model_dump(exclude={"location"}) for u in units] == [u.model_dump(exclude={"location"}) for u in expected]
    assert [(p.code, p.line) for p in problems] == [(p.code, p.line) for p in expected_problems]


@bounded(40)
@given(fixture=st.sampled_from(FIXTURES), where=st.floats(0, 1), bad=st.sampled_from([b"\xff", b"\x00", b"\xc3("]))
def test_one_bad_byte_costs_at_most_its_own_unit(fixture: Path, where: float, bad: bytes) -> None:
    # A NUL in the first 8 KB means a binary file, refused whole by design: pad past the probe.
    data = (b"\n" * 8192 if bad == b"\x00" else b"") + fixture.read_bytes()
    expected, _, _ = _read_bytes(data, fixture.suffix)
    at = int(where * len(data))
    if bad == b"\x00":
        at = max(at, 8192)
    corrupted = data[:at] + bad + data[at:]
    units, diagnostics, file = _read_bytes(corrupted, fixture.suffix)
    assert_clean(units, diagnostics, corrupted, file)
    assert len({u.id for u in units} & {u.id for u in expected}) >= len(expected) - 1
    assert any(d.code is Code.INVALID_ENCODING for d in diagnostics)


@pytest.fixture(scope="module")
def trace_bytes() -> bytes:
    session = Session.open()
    events = list(session.run(Request(question="What does Helix depend on?", caller=Caller())))
    return "".join(to_json_line(event) + "\n" for event in events).encode("utf-8")


@bounded(60)
@given(cut=st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=3))
def test_a_cut_or_damaged_trace_keeps_its_good_events(trace_bytes: bytes, cut: float, flips) -> None:
    data = bytearray(trace_bytes[: int(cut * len(trace_bytes))])
    for where, value in flips:
        if data:
            data[int(where * (len(data) - 1))] = value
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        path.write_bytes(bytes(data))
        events, problems = read_trace(path)
        good, _ = read_trace(_write(Path(folder) / "good.jsonl", trace_bytes))
    lines = bytes(data).split(b"\n")
    assert len(events) + len([p for p in problems if p.code is Code.MALFORMED_LINE]) == len(
        [x for x in lines if x.strip()]
    )
    if not flips:
        assert events == good[: len(events)] and len(events) >= bytes(data).count(b"\n")
        assert not [p for p in problems if p.is_error]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@bounded(8, hunt=25)  # two CLI commands an example: ~90% of this file's time at 25; make fuzz runs 250
@given(files=st.lists(st.tuples(st.sampled_from(SUFFIXES), byte_documents()), min_size=1, max_size=4))
def test_check_and_ingest_never_fail_internally(files) -> None:
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as folder, redirect_stdout(out), redirect_stderr(err):
        paths = []
        for index, (suffix, data) in enumerate(files):
            paths.append(Path(folder) / f"f{index}{suffix}")
            paths[-1].write_bytes(data)
        assert main(["check", folder]) in (0, 1)
        assert main(["ingest", str(paths[0])]) in (0, 1, 2)
    assert "internal error" not in err.getvalue() and "Traceback" not in out.getvalue() + err.getvalue()
