"""Why one candidate scored what it scored: BM25 per term × field, HDC per field, fusion, cut-off."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from core.events import CandidateScore, RetrievalScored
from core.units import KnowledgeUnit
from mrptui.screens.modals import unit_markup

# Lane weights of the fusion formula (DESIGN §8; the engine's numbers live in config/retrieval.json).
LANE_WEIGHTS = {"bm25": 1.0, "hdc": 0.7, "tdb": 0.85}
AGREEMENT_BONUS = 0.15
HDC_FIELD_WEIGHTS = {"topic": 0.35, "claim": 0.35, "role": 0.20, "acts": 0.10}
CUT_TEXT = {
    "min_score": "cut: below the plugin's minScore",
    "gap": "cut by gap: below top score × gapThreshold",
    "max_results": "cut: beyond maxResults",
}


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def score_markup(c: CandidateScore, scored: RetrievalScored) -> str:
    top_raw = max((x.bm25_raw or 0.0 for x in scored.candidates), default=0.0)
    verdict = "[$success]kept[/]" if c.kept else f"[$warning]{escape(CUT_TEXT.get(c.cut_reason or '', 'cut'))}[/]"
    lines = [
        f"[b]{escape(c.id)}[/b] · role {escape(c.role)} · rank {c.rank} · {verdict}"
        + (" · [$accent]current turn[/]" if c.current_turn else ""),
        f"[$foreground-muted]{escape(scored.plugin)} · intent {scored.intent_index} · act {escape(scored.act)} · lanes "
        f"{escape('+'.join(scored.lanes))}{' (escalated)' if scored.escalated else ''} · query terms: "
        f"{escape(' '.join(scored.query_terms))}[/]",
        "",
        "[b]Normalisation[/b]",
    ]
    if c.bm25_raw is not None:
        lines.append(f"  BM25  raw {c.bm25_raw:.3f} → {_num(c.bm25)}   "
                     f"[$foreground-muted](raw / max(1, top raw {top_raw:.3f}))[/]")
    else:
        lines.append("  BM25  — [$foreground-muted](no lexical match)[/]")
    lines.append(f"  HDC   {_num(c.hdc)}" + ("" if c.hdc is None else "   [$foreground-muted](already in [0, 1])[/]"))
    lines.append(f"  TDB   {_num(c.tdb)}" + ("" if c.tdb is None else "   [$foreground-muted](pathScore / top pathScore)[/]"))
    terms = []
    total = 0.0
    for lane, value in (("bm25", c.bm25), ("hdc", c.hdc), ("tdb", c.tdb)):
        if value is not None:
            terms.append(f"{LANE_WEIGHTS[lane]:g}·{value:.3f}")
            total += LANE_WEIGHTS[lane] * value
    if c.agreement:
        terms.append(f"{AGREEMENT_BONUS:g} agreement")
        total += AGREEMENT_BONUS
    lines += [
        "",
        "[b]Fusion[/b]",
        f"  fused {c.fused:.3f} = {' + '.join(terms) or '0'}"
        + (f"   [$foreground-muted](recomputed {total:.3f})[/]" if abs(total - c.fused) > 0.0015 else ""),
        f"  agreement bonus: {'yes, more than one lane found it' if c.agreement else 'no (one lane)'}",
        f"  role boost ×{c.role_boost:g}" + (" (preferred role for the act)" if c.role_boost != 1.0 else "")
        + f" → score {c.score:.3f}",
    ]
    return "\n".join(lines)


def bm25_table(c: CandidateScore) -> Table | str:
    if not c.bm25_terms:
        return "  [dim]no BM25 term contributions[/dim]"
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in (("term", "left"), ("field", "left"), ("tf", "right"), ("idf", "right"),
                          ("weight", "right"), ("contribution", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for t in sorted(c.bm25_terms, key=lambda t: (-t.contribution, t.term, t.field)):
        table.add_row(t.term, t.field, str(t.tf), f"{t.idf:.3f}", f"{t.field_weight:g}", f"{t.contribution:.3f}")
    table.add_row("", "", "", "", "sum", f"{sum(t.contribution for t in c.bm25_terms):.3f}")
    return table


def hdc_markup(c: CandidateScore) -> str:
    if not c.hdc_fields:
        return "  [$foreground-muted]no HDC lane for this candidate[/]"
    parts = []
    for name in sorted(c.hdc_fields, key=lambda n: (list(HDC_FIELD_WEIGHTS).index(n) if n in HDC_FIELD_WEIGHTS else 9, n)):
        weight = HDC_FIELD_WEIGHTS.get(name)
        suffix = f" ×{weight:g}" if weight is not None else ""
        parts.append(f"{escape(name)} {c.hdc_fields[name]:.3f}{suffix}")
    return "  " + " · ".join(parts) + "\n  [$foreground-muted]field score = max(0, (sim − 0.5) × 2)[/]"


class EvidenceDetailScreen(ModalScreen[None]):
    """The score breakdown of one evidence row, and the unit's text from the caller's view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="detail.close", tooltip="Close the breakdown"),
        Binding("c", "copy", "Copy", id="detail.copy", tooltip="Copy the unit id"),
        Binding("u", "open_unit", "Unit", id="detail.unit", tooltip="Open the unit"),
    ]

    def __init__(self, candidate: CandidateScore, scored: RetrievalScored, unit: KnowledgeUnit | None,
                 *, replay: bool = False) -> None:
        super().__init__()
        self.candidate = candidate
        self.scored = scored
        self.unit = unit
        self.replay = replay

    def compose(self) -> ComposeResult:
        c = self.candidate
        with Vertical(id="dialog", classes="dialog wide") as dialog:
            dialog.border_title = f"Why {c.id} scored {c.score:.3f}"
            dialog.border_subtitle = "esc close · c copy id"
            with VerticalScroll(id="dialog-body"):
                yield Static(score_markup(c, self.scored), id="detail-scores")
                yield Static("\n[b]BM25 per term × field[/b]", classes="section")
                yield Static(bm25_table(c), id="detail-bm25")
                yield Static("\n[b]HDC per field[/b]", classes="section")
                yield Static(hdc_markup(c), id="detail-hdc")
                yield Static("\n[b]Unit[/b]", classes="section")
                yield Static(unit_markup(self.unit, c.id, replay=self.replay), id="detail-unit")

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.candidate.id)
        self.notify(f"copied {self.candidate.id}")

    def action_open_unit(self) -> None:
        from mrptui.messages import OpenUnit

        self.app.post_message(OpenUnit(self.candidate.id))
