"""The red-team cases of the permission-label grammar (tests/unit/cnl/test_permission_pasted.py,
test_permission_round4.py): a secret written in each format beside the text under test, and
whether the readers withdrew it from every caller."""

from __future__ import annotations

import json
from pathlib import Path

from core.cnl import read_text
from core.infra.diagnostics import PERMISSION_CODES
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller

SECRET = "The vault combination is 4471."
CALLERS = (Caller(), Caller(tags=frozenset({"staff"}), region="EU"))


def txt(extra: str) -> tuple[str, str]:
    return f"{SECRET}\n{extra}\n", "notes.txt"


def md(extra: str = "", claim_tail: str = "") -> tuple[str, str]:
    head = "## Context Unit vault::chunk-000::unit-000\nRole: Definition\nTopic: Vault combination\n"
    return f"{head}Claim: {SECRET}{claim_tail}\n{extra}", "kb.md"


def sop(claim_tail: str) -> tuple[str, str]:
    claim = json.dumps(SECRET + claim_tail, ensure_ascii=False)
    return f'@k1 ku atomic "vault::chunk-000::unit-000"\nset $k1 topic "Vault"\nset $k1 claim {claim}\n', "kb.cnl"


def jsonl(text: str, **fields: object) -> tuple[str, str]:
    return json.dumps({"_id": "vault", "title": "Vault combination", "text": text, **fields}) + "\n", "kb.jsonl"


def labelled(
    attacks: dict[str, tuple[str, str]], public: dict[str, tuple[str, str]]
) -> dict[str, tuple[str, str, bool]]:
    """Each case as (text, file, whether it holds a secret a reader must withdraw)."""
    return {
        **{name: (*case, True) for name, case in attacks.items()},
        **{name: (*case, False) for name, case in public.items()},
    }


def withdrawn(text: str, file: str) -> bool:
    """Whether the secret is in no caller's view; a unit withdrawn says why, and one shown has no
    permission diagnostic."""
    units, diagnostics = read_text(text, file)
    kb = KnowledgeBase.from_units(units, diagnostics)
    shown = any("4471" in unit.body for caller in CALLERS for unit in kb.view(caller).units)
    flagged = [d for d in diagnostics if d.code in PERMISSION_CODES]
    assert not shown or not flagged, "a label was found but its unit still shown"
    assert shown or flagged, "a unit withdrawn without a diagnostic saying why"
    return not shown


def attack_kb(tmp_path: Path, cases: dict[str, tuple[str, str]]) -> tuple[Path, Path]:
    """A KB folder holding each case in a file of its own (JSON Lines cases in one file beside
    it) and a public unit about the vault."""
    kb = tmp_path / "kb"
    kb.mkdir()
    suffixes = {"kb.md": "md", "notes.txt": "txt", "kb.cnl": "cnl"}
    lines = []
    for number, (text, file) in enumerate(cases.values()):
        if file == "kb.jsonl":
            lines.append(text.replace('"_id": "vault"', f'"_id": "vault{number}"'))
        else:
            (kb / f"attack-{number:02d}.{suffixes[file]}").write_text(text.replace("vault::", f"vault{number}::"))
    (kb / "lobby.md").write_text(
        "## Context Unit lobby::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: The vault is steel.\n"
    )
    jsonl = tmp_path / "attacks.jsonl"
    jsonl.write_text("".join(lines))
    return kb, jsonl


def assert_ask_serves_none(tmp_path: Path, cases: dict[str, tuple[str, str]], tags: str, capsys) -> None:
    """`mrptui ask` over every case (text and `--json`), for the public caller and one holding
    `tags` in region EU: the secret reaches neither, and the public unit is answered from."""
    from mrptui.cli import main

    kb, jsonl = attack_kb(tmp_path, cases)
    for flags in ([], ["--caller-tags", tags, "--region", "EU", "--as-of", "2026-06-01"]):
        for output in ([], ["--json"]):
            args = ["ask", "--kb", str(kb), "--kb", str(jsonl), *flags, *output, "What is the vault combination?"]
            assert main(args) in (0, 1)
            out, err = capsys.readouterr()
            assert "4471" not in out + err
            assert "steel" in out
