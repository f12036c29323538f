"""`mrptui init DIR`: a new KB folder to start from, that passes `check` and `eval` as written.

DIR/kb holds one example unit per folder format (Markdown, SOP CNL, plain text) and
DIR/documents.jsonl one JSON Lines document (read only when named: folder scans skip `.jsonl`,
docs/decisions.md "JSON Lines only when named"), DIR/config a copy of
the bundled engine, retrieval and LLM settings with a rules file of one example rule, and
DIR/queries.json one labelled question. Nothing is ever overwritten (but an empty file), and the
files are written all together or not at all (mrptui/atomic_tree.py).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from core.cnl import read_text
from core.infra.resources import config_dir
from mrptui.atomic_tree import Conflict, write_new_tree
from mrptui.commands import UsageError

COPIED_CONFIG = ("engine.json", "retrieval.json", "llm.json")

MARKDOWN = """# Bicycle workshop: brakes

## Context Unit workshop::chunk-000::unit-000
Role: Definition
Topic: Disc brakes
Claim: Disc brakes stop a wheel by squeezing a rotor fixed to the hub between two pads.
UtilityActs: define, describe
Subject: disc brakes
Relation: provides
Object: wet-weather stopping
"""

SOP = """# Bicycle workshop procedures. Each line after "@label" is one statement; $k1 names the unit.
@k1 ku atomic "workshop-procedures::chunk-000::unit-000"
@k2 set $k1 role Procedure
@k3 set $k1 topic "Bleeding hydraulic disc brakes"
@k4 set $k1 procedure "1. Fit the bleed kit to the caliper. 2. Push fresh fluid through until no bubbles appear. 3. Close the port and test the lever."
@k5 set $k1 utilityActs [implement]
"""

PLAIN_TEXT = """Touring bikes

The touring tandem uses disc brakes.
"""
JSONL = (
    json.dumps(
        {
            "_id": "documents::rental-hours",
            "title": "Rental hours",
            "text": "Workshop bikes can be rented from 9 am to 5 pm on weekdays.",
        }
    )
    + "\n"
)

RULES = {
    "rules": [
        {
            "id": "tool_to_capability",
            "description": (
                "How rules work: when every premise in 'when' matches facts stated by units (Subject, "
                "Relation, Object), the 'then' fact is derived with confidence = weight x the premises' "
                "confidences. ?x, ?y, ?z are variables bound across premises. Here: a thing gains what the "
                "things it uses provide. Ask 'What does the touring tandem have the capability of?'"
            ),
            "when": [{"s": "?x", "r": "uses", "o": "?y"}, {"s": "?y", "r": "provides", "o": "?z"}],
            "then": {"s": "?x", "r": "has_capability", "o": "?z"},
            "weight": 0.9,
        }
    ]
}

README = """# {name}: a mrptui knowledge base

- `kb/` holds the units: `workshop.md` (Markdown units), `workshop-procedures.cnl` (SOP CNL) and
  `touring.txt` (plain text, split into units by sentence; ids come from each unit's words).
- `documents.jsonl` holds one JSON Lines document (`_id`, `title`, `text`; docs/formats.md). A
  `.jsonl` file is read only when named with `--kb`, as below: folder scans skip it, since saved
  traces are JSON Lines too.
- `config/` holds the engine settings; `config/thinkingdb.json` holds the rules (see the
  example rule's description, and docs/rules.md).
- `queries.json` holds labelled questions for `mrptui eval` (see docs/queries.md).

    mrptui check {name}/kb {name}/documents.jsonl {name}/config --against {name}/queries.json
    mrptui eval {name}/queries.json --kb {name}/kb --kb {name}/documents.jsonl --config {name}/config
    mrptui --kb {name}/kb --kb {name}/documents.jsonl --config {name}/config
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="folder to create (it may exist, but not the files)")


def starter_files(directory: Path) -> dict[Path, str]:
    """Every file `init` writes, by path; the labelled question's evidence id is read back from
    the plain-text unit, so it is the id the reader really gives."""
    text_units = read_text(PLAIN_TEXT, "touring.txt").units
    fact = next(unit for unit in text_units if unit.relation is not None)
    queries = [
        {
            "id": "q1",
            "question": "What does the touring tandem use?",
            "expect_evidence": [fact.id],
            "must_not_appear": [],
            "expect_status": "grounded",
            "kind": "fact",
        },
        {
            "id": "q2",
            "question": "When can workshop bikes be rented?",
            "expect_evidence": ["documents::rental-hours"],
            "must_not_appear": [],
        },
    ]
    files = {
        directory / "README.md": README.format(name=directory.name or str(directory)),
        directory / "kb" / "workshop.md": MARKDOWN,
        directory / "kb" / "workshop-procedures.cnl": SOP,
        directory / "kb" / "touring.txt": PLAIN_TEXT,
        directory / "documents.jsonl": JSONL,
        directory / "config" / "thinkingdb.json": json.dumps(RULES, indent=2) + "\n",
        directory / "queries.json": json.dumps(queries, indent=2) + "\n",
    }
    for name in COPIED_CONFIG:
        files[directory / "config" / name] = (config_dir() / name).read_text(encoding="utf-8")
    return files


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    if os.path.lexists(directory) and not os.path.isdir(directory):
        raise UsageError(f"{directory} exists and is not a folder")
    files = starter_files(directory)
    try:
        write_new_tree(directory, files)
    except Conflict as exc:
        raise UsageError(f"refusing to overwrite existing files: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot create {directory}: {exc.strerror or exc}; nothing was written") from None
    print(f"created {len(files)} files in {directory}")
    print(README.format(name=str(directory)).split("\n\n", 2)[-1].rstrip())
    return 0


__all__ = ["add_arguments", "run", "starter_files"]
