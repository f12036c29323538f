"""Issue 23, leaks 1-3: no edit of a restricted unit's permission lines may publish it.

Every restricted unit of the sample KB, the reader fixtures and the eval sets is written in each
format (Markdown, SOP, JSON Lines, plain text) and then mutated: separators and headings before
its permission lines, indentation, bullets, case, look-alike and misspelt names, empty values,
unknown keys, misspelt labels, CRLF/CR line ends and BOMs. Each mutation must (a) leave the unit's
marker out of the view of every caller outside the unit's view and (b) produce an error at its
file (an error, or a warning that no caller can hold the value). Spellings the readers accept (`ACL:`, `effective_to`, CRLF alone) must read the same
permission. The matrix goes through the readers and `KnowledgeBase.view`; a Session over a folder
of mutated files and one CLI run check the same end to end.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from core.cnl import read_text, to_markdown
from core.cnl.sop_syntax import quote
from core.cnl.source import decode
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.contract import Request
from core.kernel.session import Session
from core.kernel.summary import summarise
from core.units import Caller, KnowledgeUnit

ROOT = Path(__file__).resolve().parents[3]
MRPTUI = str(Path(sys.executable).parent / "mrptui")
SOURCES = [ROOT / "sample_kb", ROOT / "tests" / "fixtures" / "cnl", ROOT / "evalsets"]
PERMISSION_LABELS = ("Acl", "Region", "EffectiveFrom", "EffectiveTo")
DECOY = """## Context Unit decoy::chunk-000::unit-000
Role: Definition
Topic: Lobby hours
Claim: The lobby opens at nine.
"""


def _restricted_units() -> list[KnowledgeUnit]:
    found = []
    for root in SOURCES:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".md", ".cnl") and path.name.lower() != "readme.md":
                units, _ = read_text(path.read_text(encoding="utf-8"), str(path))
                found += [u for u in units if u.acl or u.region or u.effective_from or u.effective_to]
    return found


RESTRICTED = _restricted_units()


def _marked(unit: KnowledgeUnit, index: int) -> tuple[KnowledgeUnit, str]:
    """The unit with a marker word in its text and a fresh id, so its leak is unmistakable."""
    marker = f"zqxmarker{index}"
    body = {"procedure": f"{unit.procedure} {marker}"} if unit.procedure else {"claim": f"{unit.claim} {marker}"}
    return unit.model_copy(update={"id": f"secret::chunk-{index:03d}::unit-000", "location": None, **body}), marker


def _inside(unit: KnowledgeUnit) -> dt.date:
    return unit.effective_from or (
        unit.effective_to - dt.timedelta(days=1) if unit.effective_to else dt.date(2026, 6, 1)
    )


def _outsiders(unit: KnowledgeUnit) -> list[Caller]:
    """Callers outside the unit's view: without its tags or region, or before or after its dates."""
    callers = []
    if unit.acl or unit.region:
        day = _inside(unit)
        callers += [Caller(as_of=day), Caller(tags={"outsider:x"}, region="Nowhere", as_of=day)]
    # Holding every tag a caller can hold ('legal team' no caller can).
    tags, region = frozenset(tag for tag in unit.acl if " " not in tag), unit.region
    if unit.effective_from:
        callers.append(Caller(tags=tags, region=region, as_of=unit.effective_from - dt.timedelta(days=1)))
    if unit.effective_to:
        callers.append(Caller(tags=tags, region=region, as_of=unit.effective_to + dt.timedelta(days=1)))
    return callers


def _insider(unit: KnowledgeUnit) -> Caller:
    return Caller(tags=frozenset(unit.acl), region=unit.region, as_of=_inside(unit))


# --- Markdown ---------------------------------------------------------------------------------

LineEdit = Callable[[str], list[str]]


def _each_permission_line(edit: LineEdit) -> Callable[[list[str]], list[str]]:
    def apply(lines: list[str]) -> list[str]:
        return [new for line in lines for new in (edit(line) if line.startswith(PERMISSION_LABELS) else [line])]

    return apply


def _before_permissions(*inserted: str) -> Callable[[list[str]], list[str]]:
    def apply(lines: list[str]) -> list[str]:
        first = next(i for i, line in enumerate(lines) if line.startswith(PERMISSION_LABELS))
        return [*lines[:first], *inserted, *lines[first:]]

    return apply


def _heading(replacement: str) -> Callable[[list[str]], list[str]]:
    def apply(lines: list[str]) -> list[str]:
        return [
            line.replace("## Context Unit", replacement) if line.startswith("## Context Unit") else line
            for line in lines
        ]

    return apply


def _name(old_to_new: dict[str, str]) -> LineEdit:
    def edit(line: str) -> list[str]:
        name, _, value = line.partition(":")
        return [f"{old_to_new.get(name, name)}:{value}"]

    return edit


MD_MUTATIONS: dict[str, Callable[[list[str]], list[str]]] = {
    "rule ---": _before_permissions("---"),
    "rule ***": _before_permissions("***"),
    "rule ___": _before_permissions("", "___", ""),
    "heading #": _before_permissions("# Access"),
    "heading ###": _before_permissions("### Who may read this"),
    "bare #": _before_permissions("#"),
    "heading ## other": _before_permissions("## Restrictions"),
    "indent 2": _each_permission_line(lambda line: [f"  {line}"]),
    "indent tab": _each_permission_line(lambda line: [f"\t{line}"]),
    "bullet -": _each_permission_line(lambda line: [f"- {line}"]),
    "bullet *": _each_permission_line(lambda line: [f"* {line}"]),
    "bullet +": _each_permission_line(lambda line: [f"+ {line}"]),
    "numbered": _each_permission_line(lambda line: [f"1. {line}"]),
    "quote >": _each_permission_line(lambda line: [f"> {line}"]),
    "as ### heading": _each_permission_line(lambda line: [f"### {line}"]),
    "as # heading": _each_permission_line(lambda line: [f"# {line}"]),
    "bold name": _each_permission_line(lambda line: ["**{}**:{}".format(*line.split(":", 1))]),
    "space in name": _each_permission_line(
        _name({"Acl": "A cl", "Region": "Re gion", "EffectiveFrom": "Effective From", "EffectiveTo": "Effective To"})
    ),
    "plural": _each_permission_line(
        _name({"Acl": "Acls", "Region": "Regions", "EffectiveFrom": "EffectiveFroms", "EffectiveTo": "EffectiveTos"})
    ),
    "tags": _each_permission_line(
        _name({"Acl": "Tags", "Region": "Regoin", "EffectiveFrom": "ValidFrom", "EffectiveTo": "Expires"})
    ),
    "misspelt": _each_permission_line(
        _name({"Acl": "Alc", "Region": "Reigon", "EffectiveFrom": "EfectiveFrom", "EffectiveTo": "EffectivTo"})
    ),
    "cyrillic": _each_permission_line(
        _name(
            {
                "Acl": "\u0410cl",
                "Region": "R\u0435gion",
                "EffectiveFrom": "Eff\u0435ctiveFrom",
                "EffectiveTo": "Effectiv\u0435To",
            }
        )
    ),
    "full-width": _each_permission_line(
        lambda line: [
            f"\uff21{line[1:]}"
            if line.startswith("A")
            else f"\uff32{line[1:]}"
            if line.startswith("R")
            else f"\uff25{line[1:]}"
        ]
    ),
    "zero-width lead": _each_permission_line(lambda line: [f"\u200b{line}"]),
    "BOM lead": _each_permission_line(lambda line: [f"\ufeff{line}"]),
    "nbsp before colon": _each_permission_line(lambda line: [line.replace(":", "\u00a0:", 1)]),
    "equals": _each_permission_line(lambda line: [line.replace(":", " =", 1)]),
    "unknown key": _each_permission_line(lambda line: [f"X-{line}"]),
    "empty value": _each_permission_line(lambda line: [line.split(":")[0] + ":"]),
    "blank value": _each_permission_line(lambda line: [line.split(":")[0] + ":   "]),
    "comma value": _each_permission_line(lambda line: [line.split(":")[0] + ": ,"]),
    "html comment": _each_permission_line(lambda line: [f"<!-- {line} -->"]),
    "code fence": _before_permissions("```"),
    "table row": _each_permission_line(lambda line: ["| {} | {} |".format(*line.split(":", 1))]),
    "misspelt heading ContextUnit": _heading("## ContextUnit"),
    "misspelt heading #": _heading("# Context Unit"),
    "misspelt heading ###": _heading("### Context Unit"),
    "misspelt heading Units": _heading("## Context Units"),
    "heading without space": _heading("##Context Unit"),
    "front matter": lambda lines: [
        "---",
        *[ln for ln in lines if ln.startswith(PERMISSION_LABELS)],
        "---",
        *[ln for ln in lines if not ln.startswith(PERMISSION_LABELS)],
    ],
    "prose line above": _before_permissions("These lines restrict the unit:"),
    "duplicate empty acl": _before_permissions("Acl:"),
}
ENDINGS: dict[str, Callable[[str], str]] = {
    "LF": lambda text: text,
    "CRLF": lambda text: text.replace("\n", "\r\n"),
    "CR": lambda text: text.replace("\n", "\r"),
    "BOM+CRLF": lambda text: "\ufeff" + text.replace("\n", "\r\n"),
    "U+2028": lambda text: text.replace("\n", "\u2028"),
}
# Each mutation with a line-ending variant of its own, so every ending meets every kind of edit.
MD_CASES = [(name, ending) for i, name in enumerate(MD_MUTATIONS) for ending in ("LF", list(ENDINGS)[1 + i % 4])]


def _markdown(unit: KnowledgeUnit, mutation: Callable[[list[str]], list[str]]) -> str:
    lines = to_markdown([unit]).rstrip("\n").split("\n")
    return DECOY + "\n" + "\n".join(mutation(lines)) + "\n\n" + DECOY.replace("unit-000", "unit-001")


# --- SOP ----------------------------------------------------------------------------------------

_SOP_FIELDS = ("role", "topic", "title", "claim", "procedure", "condition")


def _sop(unit: KnowledgeUnit, mutate: Callable[[str], str] = lambda line: line) -> str:
    lines = [f'@k1 ku atomic "{unit.id}"']
    lines += [
        f"set $k1 {key} {quote(str(getattr(unit, key)))}" for key in _SOP_FIELDS if getattr(unit, key) is not None
    ]
    permission = []
    if unit.acl:
        permission.append("set $k1 acl [" + " ".join(quote(tag) for tag in unit.acl) + "]")
    if unit.region:
        permission.append(f"set $k1 region {quote(unit.region)}")
    for key, name in (("effective_from", "effectiveFrom"), ("effective_to", "effectiveTo")):
        if getattr(unit, key):
            permission.append(f"set $k1 {name} {getattr(unit, key).isoformat()}")
    lines += [mutate(line) for line in permission]
    decoy = '@d1 ku atomic "decoy::chunk-000::unit-000"\nset $d1 role Definition\nset $d1 topic "Lobby hours"\nset $d1 claim "The lobby opens at nine."'
    return decoy + "\n" + "\n".join(lines) + "\n"


SOP_MUTATIONS: dict[str, Callable[[str], str]] = {
    "misspelt label": lambda line: line.replace("$k1", "$k11"),
    "label of the decoy's typo": lambda line: line.replace("$k1", "$d2"),
    "label as string": lambda line: line.replace("$k1", '"$k1"'),
    "plural field": lambda line: (
        line.replace("acl", "acls").replace("region", "regions").replace("effective", "effectives")
    ),
    "tags": lambda line: (
        line.replace("acl", "tags")
        .replace("region", "regoin")
        .replace("effectiveFrom", "validFrom")
        .replace("effectiveTo", "expires")
    ),
    "cyrillic field": lambda line: (
        line.replace("acl", "\u0430cl").replace("region", "r\u0435gion").replace("effective", "\u0435ffective")
    ),
    "colon field": lambda line: (
        line.replace(" acl ", " acl: ")
        .replace(" region ", " region: ")
        .replace("From ", "From: ")
        .replace("To ", "To: ")
    ),
    "unknown verb": lambda line: line.replace("set ", "sett ", 1),
    "verb as field": lambda line: " ".join(line.split()[2:3] + ["$k1"] + line.split()[3:]),
    "markdown line": lambda line: "{}: {}".format(
        line.split()[2].capitalize(), " ".join(line.split()[3:]).strip('[]"')
    ),
    "empty value": lambda line: line.split(" [")[0] + " []" if " [" in line else " ".join(line.split()[:3]) + ' ""',
    "unterminated": lambda line: line.replace("]", "") if "[" in line else line + ' "',
    "extra argument": lambda line: line + " extra",
    "CRLF misspelt label": lambda line: line.replace("$k1", "$K1") + "\r",
}


# --- JSON Lines ---------------------------------------------------------------------------------


def _jsonl_fields(unit: KnowledgeUnit) -> dict:
    fields: dict = {}
    if unit.acl:
        fields["acl"] = list(unit.acl)
    if unit.region:
        fields["region"] = unit.region
    if unit.effective_from:
        fields["effectiveFrom"] = unit.effective_from.isoformat()
    if unit.effective_to:
        fields["effectiveTo"] = unit.effective_to.isoformat()
    return fields


def _rename(names: dict[str, str]) -> Callable[[dict], dict]:
    return lambda fields: {names.get(key, key): value for key, value in fields.items()}


JSONL_MUTATIONS: dict[str, Callable[[dict], dict]] = {
    "plural keys": _rename(
        {"acl": "acls", "region": "regions", "effectiveFrom": "effectiveFroms", "effectiveTo": "effectiveTos"}
    ),
    "look-alike keys": _rename(
        {"acl": "tags", "region": "regoin", "effectiveFrom": "validFrom", "effectiveTo": "expires"}
    ),
    "cyrillic keys": _rename(
        {
            "acl": "\u0430cl",
            "region": "r\u0435gion",
            "effectiveFrom": "\u0435ffectiveFrom",
            "effectiveTo": "\u0435ffectiveTo",
        }
    ),
    "empty values": lambda fields: {key: [] if key == "acl" else "" for key in fields},
    "null values": lambda fields: {key: None for key in fields},
    "inside metadata": lambda fields: {"metadata": fields},
    "unknown keys": lambda fields: {f"x-{key}": value for key, value in fields.items()},
    "repeated keys": lambda fields: {**fields, **{key.upper(): value for key, value in fields.items()}},
    "blank tags": lambda fields: {**fields, **({"acl": [" ", ""]} if "acl" in fields else {"region": " "})},
}
JSONL_SPELLINGS: dict[str, Callable[[dict], dict]] = {
    "upper case": _rename(
        {"acl": "ACL", "region": "REGION", "effectiveFrom": "EFFECTIVEFROM", "effectiveTo": "EFFECTIVETO"}
    ),
    "title case": _rename(
        {"acl": "Acl", "region": "Region", "effectiveFrom": "EffectiveFrom", "effectiveTo": "EffectiveTo"}
    ),
    "snake case": _rename({"effectiveFrom": "effective_from", "effectiveTo": "effective_to"}),
}


def _jsonl(unit: KnowledgeUnit, mutate: Callable[[dict], dict]) -> str:
    decoy = {"_id": "decoy", "title": "Lobby hours", "text": "The lobby opens at nine."}
    record = {
        "_id": unit.id,
        "title": unit.topic,
        "text": unit.body,
        "role": unit.role.value,
        **mutate(_jsonl_fields(unit)),
    }
    return json.dumps(decoy) + "\n" + json.dumps(record, ensure_ascii=False) + "\n"


# --- plain text ---------------------------------------------------------------------------------

TEXT_MUTATIONS: dict[str, Callable[[str, str], str]] = {
    "first line": lambda fields, body: f"Lobby hours\n\nThe lobby opens at nine.\n\n{fields}\n{body}\n",
    "last line": lambda fields, body: f"{body}\n{fields}\n\nThe lobby opens at nine.\n",
    "own paragraph above": lambda fields, body: f"{fields}\n\n{body}\n\nThe lobby opens at nine.\n",
    "own paragraph below": lambda fields, body: f"The lobby opens at nine.\n\n{body}\n\n{fields}\n",
    "bulleted": lambda fields, body: f"{body}\n" + "\n".join(f"- {line}" for line in fields.split("\n")) + "\n",
    "as heading": lambda fields, body: "\n".join(f"# {line}" for line in fields.split("\n")) + f"\n{body}\n",
    # Inside running prose "region: north" is English (issue 35): a region is written `Region=EU` there.
    "inside the line": lambda fields, body: (
        f"The lobby opens at nine.\n\n{body} Note — {'; '.join(_inline(fields).split(chr(10)))}\n"
    ),
    "in brackets at the end": lambda fields, body: (
        f"{body} ({_inline(fields).split(chr(10))[-1]})\n\nThe lobby opens at nine.\n"
    ),
}


def _inline(fields: str) -> str:
    return fields.replace("region: ", "region=")


def _text_fields(unit: KnowledgeUnit) -> str:
    return "\n".join(
        f"{key}: {', '.join(value) if isinstance(value, list) else value}" for key, value in _jsonl_fields(unit).items()
    )


# --- the checks ---------------------------------------------------------------------------------


def _read(text: str, file: str):
    """As `read_file` reads the text's bytes (a leading BOM is dropped there)."""
    return read_text(decode(text.encode("utf-8"), file), file)


def _assert_withdrawn(text: str, file: str, unit: KnowledgeUnit, marker: str, case: str) -> None:
    units, diagnostics = _read(text, file)
    kb = KnowledgeBase.from_units(units, diagnostics)
    for caller in _outsiders(unit):
        shown = [u.id for u in kb.view(caller).units if marker in u.model_dump_json()]
        assert shown == [], f"{case}: {unit.id} leaks to {caller.key}\n{text}"
    # An error that withdrew it, or a warning that no caller can hold the value it now has.
    assert any(d.file == file for d in diagnostics), f"{case}: no diagnostic for\n{text}"


def _assert_same_permission(text: str, file: str, unit: KnowledgeUnit, case: str) -> None:
    units, diagnostics = _read(text, file)
    read = next((u for u in units if u.id == unit.id), None)
    assert read is not None, f"{case}: not read: {[d.format() for d in diagnostics]}"
    assert (read.acl, read.region, read.effective_from, read.effective_to) == (
        unit.acl,
        unit.region,
        unit.effective_from,
        unit.effective_to,
    ), case


def test_the_matrix_covers_every_restricted_unit_and_forty_mutations() -> None:
    files = {u.location.file for u in RESTRICTED}
    assert len(RESTRICTED) >= 20 and any("sample_kb" in f for f in files) and any(f.endswith(".md") for f in files)
    assert len(MD_MUTATIONS) >= 40
    assert len(MD_MUTATIONS) + len(SOP_MUTATIONS) + len(JSONL_MUTATIONS) + len(TEXT_MUTATIONS) >= 70


@pytest.mark.parametrize("index", range(len(RESTRICTED)), ids=lambda i: RESTRICTED[i].id)
def test_no_markdown_mutation_publishes_a_restricted_unit(index: int) -> None:
    unit, marker = _marked(RESTRICTED[index], index)
    for name, ending in MD_CASES:
        text = ENDINGS[ending](_markdown(unit, MD_MUTATIONS[name]))
        _assert_withdrawn(text, "kb.md", unit, marker, f"{name} ({ending})")


@pytest.mark.parametrize("index", range(len(RESTRICTED)), ids=lambda i: RESTRICTED[i].id)
def test_no_sop_jsonl_or_text_mutation_publishes_a_restricted_unit(index: int) -> None:
    unit, marker = _marked(RESTRICTED[index], index)
    for name, mutate in SOP_MUTATIONS.items():
        _assert_withdrawn(_sop(unit, mutate), "kb.cnl", unit, marker, f"sop {name}")
        _assert_withdrawn(ENDINGS["BOM+CRLF"](_sop(unit, mutate)), "kb.cnl", unit, marker, f"sop {name} BOM+CRLF")
    for name, mutate in JSONL_MUTATIONS.items():
        _assert_withdrawn(_jsonl(unit, mutate), "kb.jsonl", unit, marker, f"jsonl {name}")
    for name, place in TEXT_MUTATIONS.items():
        body = f"The {unit.topic.lower()} code is {marker}. It is written down in the office."
        for file in ("kb.txt", "prose.md"):
            _assert_withdrawn(place(_text_fields(unit), body), file, unit, marker, f"text {name} in {file}")


@pytest.mark.parametrize("index", range(len(RESTRICTED)), ids=lambda i: RESTRICTED[i].id)
def test_spellings_the_readers_accept_keep_the_permission(index: int) -> None:
    unit, _ = _marked(RESTRICTED[index], index)
    md = to_markdown([unit])
    for name, text in {
        "upper": md.replace("Acl:", "ACL:").replace("Region:", "REGION:").replace("Effective", "EFFECTIVE"),
        "lower, no space": md.replace("Acl: ", "acl:").replace("Region: ", "region:"),
        "snake": md.replace("EffectiveFrom", "effective_from").replace("EffectiveTo", "effective-to"),
        "CRLF": md.replace("\n", "\r\n"),
        "CR": md.replace("\n", "\r"),
        "BOM": "\ufeff" + md,
    }.items():
        _assert_same_permission(text, "kb.md", unit, f"md {name}")
    _assert_same_permission(
        _sop(unit, lambda line: line.replace(" acl ", " ACL ").replace(" region ", " Region ")),
        "kb.cnl",
        unit,
        "sop case",
    )
    for name, mutate in JSONL_SPELLINGS.items():
        _assert_same_permission(_jsonl(unit, mutate), "kb.jsonl", unit, f"jsonl {name}")


def _mutated_folder(folder: Path) -> dict[str, tuple[KnowledgeUnit, str]]:
    """One file per Markdown mutation of the first unit of each source file, and SOP and JSON
    Lines ones of the first unit; returns marker → (unit, file name)."""
    firsts = list({u.location.file: i for i, u in reversed(list(enumerate(RESTRICTED)))}.values())
    written = {}
    for n, (name, mutation) in enumerate(MD_MUTATIONS.items()):
        index = firsts[n % len(firsts)]
        unit, marker = _marked(RESTRICTED[index], 100 + n)
        text = _markdown(unit, mutation).replace("decoy::", f"decoy{n}::")
        (folder / f"md{n:02d}.md").write_text(ENDINGS[list(ENDINGS)[n % 5]](text), encoding="utf-8", newline="")
        written[marker] = (unit, f"md{n:02d}.md")
    for n, (name, mutate) in enumerate(SOP_MUTATIONS.items()):
        unit, marker = _marked(RESTRICTED[firsts[n % len(firsts)]], 200 + n)
        (folder / f"sop{n:02d}.cnl").write_text(
            _sop(unit, mutate).replace("decoy::", f"decoy-sop{n}::"), encoding="utf-8", newline=""
        )
        written[marker] = (unit, f"sop{n:02d}.cnl")
    return written


def test_a_session_over_mutated_files_serves_no_marker(tmp_path: Path) -> None:
    written = _mutated_folder(tmp_path)
    session = Session.open([tmp_path])
    broken = {Path(d.file).name for d in session.kb.diagnostics if d.is_error}
    assert {file for _, file in written.values()} <= broken
    for marker, (unit, _) in written.items():
        for caller in _outsiders(unit):
            assert not any(marker in u.model_dump_json() for u in session.units(caller)), marker
    for marker, (unit, file) in list(written.items())[::7]:
        caller = _outsiders(unit)[0]
        events = list(session.run(Request(question=f"What does {unit.topic} say?", caller=caller)))
        out = json.dumps(summarise(events)) + "".join(e.model_dump_json() for e in events)
        assert marker not in out and unit.body[:40] not in out, file
    # The decoys around every mutated unit are public: a view is not simply empty.
    assert len(session.units(Caller())) > 0


def test_ask_end_to_end_on_mutated_files(tmp_path: Path) -> None:
    written = _mutated_folder(tmp_path)
    marker, (unit, _) = next(iter(written.items()))
    question = f"What does {unit.topic} say?"
    out = subprocess.run(
        [MRPTUI, "ask", "--kb", str(tmp_path), "--json", question],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "zqxmarker" not in out.stdout + out.stderr
    check = subprocess.run([MRPTUI, "check", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    assert check.returncode == 1
    for _, file in written.values():
        assert f"{file}:" in check.stdout, file
