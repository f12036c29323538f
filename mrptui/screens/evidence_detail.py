"""Why one candidate scored what it scored: BM25 per term × field, HDC per field, fusion (as the
engine recorded it in the trace), cut-off."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from core.infra.config import RetrievalConfig
from core.kernel.candidates import CandidateScore
from core.kernel.events import AnswerReady, CutSettings, HdcSettings, RetrievalScored
from core.plugins.knowledge import hdc_settings
from core.retrieval.hdc.encoding import unit_windows
from core.units import KnowledgeUnit
from mrptui.clipboard import copy_text
from mrptui.screens.modals import NOT_VISIBLE, unit_markup
from mrptui.widgets.keybar import KeyBar

CUT_TEXT = {
    "min_score": "cut: below the plugin's minScore",
    "gap": "cut by gap: below top score × gapThreshold",
    "max_results": "cut: beyond maxResults",
}
RECORDED = "as the run recorded it"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _lane_list(weights: dict[str, float]) -> str:
    return ", ".join(f"{lane} {weight:g}" for lane, weight in weights.items())


def run_settings(
    scored: RetrievalScored, config: RetrievalConfig | None, source: str
) -> tuple[CutSettings | None, HdcSettings, str]:
    """The cut-offs and HDC numbers the run used, and where they come from: the trace when it
    recorded them, else `config` (a trace from before they were recorded; `source` names it)."""
    if scored.cuts is not None and scored.hdc is not None:
        return scored.cuts, scored.hdc, RECORDED
    config = config or RetrievalConfig(profiles={})
    profile = config.profiles.get(scored.plugin)
    cuts = None
    if profile is not None:
        top = max((x.score for x in scored.candidates if x.score >= profile.min_score), default=0.0)
        cuts = CutSettings(
            min_score=profile.min_score,
            gap_threshold=profile.gap_threshold,
            max_results=profile.max_results,
            top_score=top,
        )
    return cuts, hdc_settings(config.hdc), f"{source}: this trace does not record them"


def cut_markup(c: CandidateScore, cuts: CutSettings | None) -> str:
    """Kept, or the cut with the numbers behind it when the cut-offs are known."""
    if c.kept and c.kept_with:
        return f"[$success]kept past maxResults: a leaf of the proof of '{escape(c.kept_with)}'[/]"
    if c.kept:
        return "[$success]kept[/]"
    if cuts is None or c.cut_reason is None:
        return f"[$warning]{escape(CUT_TEXT.get(c.cut_reason or '', 'cut'))}[/]"
    if c.cut_reason == "min_score":
        return f"[$warning]cut by minScore: {c.score:.3f} < {cuts.min_score:g}[/]"
    if c.cut_reason == "gap":
        return (
            f"[$warning]cut by gap: {c.score:.3f} < gapThreshold {cuts.gap_threshold:g} × top {cuts.top_score:.3f}"
            f" = {cuts.top_score * cuts.gap_threshold:.3f}[/]"
        )
    return f"[$warning]cut: beyond maxResults {cuts.max_results}[/]"


def score_markup(
    c: CandidateScore,
    scored: RetrievalScored,
    config: RetrievalConfig | None = None,
    source: str = "the current retrieval config",
) -> str:
    """Normalisation and fusion for one candidate, with the fusion, cut-offs and HDC numbers the
    run recorded (from `config` for a trace that predates them)."""
    cuts, hdc, settings_source = run_settings(scored, config, source)
    top_raw = max((x.bm25_raw or 0.0 for x in scored.candidates), default=0.0)
    lines = [
        f"[b]{escape(c.id)}[/b] · role {escape(c.role)} · rank {c.rank} · {cut_markup(c, cuts)}"
        + (" · [$accent]current turn[/]" if c.current_turn else ""),
        f"[$foreground-muted]{escape(scored.plugin)} · intent {scored.intent_index} · act {escape(scored.act)} · lanes "
        f"{escape('+'.join(scored.lanes))}{' (escalated)' if scored.escalated else ''} · query terms: "
        f"{escape(' '.join(scored.query_terms))}[/]",
        "",
        *(f"[$foreground-muted]synonym: {escape(label)}[/]" for label in scored.synonyms),
        "",
        "[b]Normalisation[/b]",
    ]
    if c.bm25_raw is not None:
        lines.append(
            f"  BM25  raw {c.bm25_raw:.3f} → {_num(c.bm25)}   "
            f"[$foreground-muted](raw / max(1, top raw {top_raw:.3f}))[/]"
        )
    else:
        lines.append("  BM25  — [$foreground-muted](no lexical match)[/]")
    if c.hdc is None and c.hdc_fields:
        lines.append(
            f"  HDC   — [$foreground-muted](below the lane's floor {hdc.lane_min_score:g}, or not "
            f"among its best {hdc.lane_pool}: not found by HDC)[/]"
        )
    else:
        lines.append(
            f"  HDC   {_num(c.hdc)}" + ("" if c.hdc is None else "   [$foreground-muted](already in [0, 1])[/]")
        )
    lines.append(
        f"  TDB   {_num(c.tdb)}" + ("" if c.tdb is None else "   [$foreground-muted](pathScore / top pathScore)[/]")
    )
    if c.dense is not None:
        lines.append(f"  Dense {_num(c.dense)}   [$foreground-muted](cosine of unit and question embeddings)[/]")
    lines += fusion_lines(c, scored)
    if cuts is not None:
        lines.append(
            f"  [$foreground-muted]{escape(scored.plugin)}: minScore {cuts.min_score:g} · gapThreshold "
            f"{cuts.gap_threshold:g} · maxResults {cuts.max_results} ({escape(settings_source)})[/]"
        )
    return "\n".join(lines)


def fusion_lines(c: CandidateScore, scored: RetrievalScored) -> list[str]:
    """The fused sum as the engine recorded it (the run's weights and bonus; docs/scoring.md)."""
    fusion, summed = scored.fusion, c.fusion
    if fusion is None or summed is None:
        return [
            "",
            f"[b]Fusion[/b]  fused {c.fused:.3f} · score {c.score:.3f}   [$foreground-muted](this trace does "
            "not record how they were summed)[/]",
        ]
    terms = [f"{lane.weight:g}·{lane.score:.3f}" for lane in summed.lanes]
    if c.agreement:
        terms.append(f"{summed.bonus:g} agreement")
    rrf = fusion.method == "rrf"
    lines = [
        "",
        f"[b]Fusion[/b] [$foreground-muted]{fusion.method} · weights {_lane_list(fusion.weights)}; agreement bonus "
        f"{fusion.agreement_bonus:g}"
        + (f"; RRF k {fusion.rrf_k}, rank weights {_lane_list(fusion.rrf_weights)}" if rrf else "")
        + f" ({RECORDED})[/]",
        f"  fused {summed.fused:.3f} = {' + '.join(terms) or '0'}",
        f"  agreement bonus: {'yes, every lane found it' if c.agreement else 'no (one lane, or a score below agreementMinScore)'}",
    ]
    if rrf:
        lines.append(
            f"  score {c.score:.3f} is the RRF rank score: Σ 1/(k + rank in each lane), scaled so rank 1 "
            "in every lane that ran = 1.0; fused is shown for reference, the cut-offs use the score"
        )
    else:
        lines.append(f"  score = fused = {c.score:.3f} · rank {c.rank}")
    return lines


def bm25_table(c: CandidateScore) -> Table | str:
    if not c.bm25_terms:
        return "  [dim]no BM25 term contributions[/dim]"
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    synonyms = any(t.via for t in c.bm25_terms)
    columns = [
        ("term", "left"),
        ("field", "left"),
        ("tf", "right"),
        ("idf", "right"),
        ("weight", "right"),
        ("contribution", "right"),
    ] + ([("via synonym", "left")] if synonyms else [])
    for name, justify in columns:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for t in sorted(c.bm25_terms, key=lambda t: (-t.contribution, t.term, t.field)):
        via = [t.via] if synonyms else []
        table.add_row(t.term, t.field, str(t.tf), f"{t.idf:.3f}", f"{t.field_weight:g}", f"{t.contribution:.3f}", *via)
    table.add_row(
        "", "", "", "", "sum", f"{sum(t.contribution for t in c.bm25_terms):.3f}", *([""] if synonyms else [])
    )
    return table


def role_boost_markup(c: CandidateScore, scored: RetrievalScored) -> str:
    """How the term sum becomes the raw BM25 score: times the role boost when the role is preferred."""
    if not c.bm25_terms:
        return ""
    total = sum(t.contribution for t in c.bm25_terms)
    role, act = escape(c.role), escape(scored.act)
    if c.role_boost == 1.0:
        return (
            f"  raw = sum = {total:.3f}   "
            f"[$foreground-muted](no role boost: {role} is not a preferred role for {act})[/]"
        )
    return (
        f"  raw {total * c.role_boost:.3f} = sum {total:.3f} × role boost {c.role_boost:g}   "
        f"[$foreground-muted]({role} is a preferred role for {act}; bm25.roleBoost)[/]"
    )


HDC_FIELDS = ("topic", "claim", "role", "acts")


def hdc_markup(c: CandidateScore, hdc: HdcSettings, unit: KnowledgeUnit | None = None) -> Table | Group | str:
    """Per field: similarity, calibrated field score, weight, contribution; role and acts count
    only as far as the text matched (× gate = the better of topic and claim; core/retrieval/hdc/encoding.py)."""
    if not c.hdc_fields:
        return "  [$foreground-muted]no HDC lane for this candidate[/]"
    weights = hdc.field_weights
    gate = c.hdc_fields.get("gate", 1.0)
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name in ("field", "similarity", "field score", "weight", "contribution"):
        table.add_column(name, justify="left" if name == "field" else "right")
    total = 0.0
    for name in (f for f in HDC_FIELDS if f in c.hdc_fields):
        score = c.hdc_fields.get(f"{name}_score", 0.0)
        weight = weights.get(name, 0.0)
        gated = name in ("role", "acts")
        value = weight * score * (gate if gated else 1.0)
        total += value
        shown = f"{weight:g} × gate {gate:.3f}" if gated else f"{weight:g}"
        table.add_row(name, f"{c.hdc_fields[name]:.3f}", f"{score:.3f}", shown, f"{value:.3f}")
    table.add_row("", "", "", "sum", f"{total:.3f}")
    notes = [*_best_window(c, hdc, unit), *c.hdc_match]
    return Group(table, *(Text(f"  {note}") for note in notes)) if notes else table


def _best_window(c: CandidateScore, hdc: HdcSettings, unit: KnowledgeUnit | None) -> list[str]:
    """The claim sentence(s) HDC matched best, from the unit the caller may see (events carry no text)."""
    if unit is None or "claim_window" not in c.hdc_fields:
        return []
    windows = unit_windows(unit.body, hdc.claim_window)
    index = int(c.hdc_fields["claim_window"])
    if len(windows) < 2 or index >= len(windows):
        return []
    return [f"best claim window {index + 1} of {len(windows)}: “{windows[index]}”"]


def answer_use_markup(unit_id: str, answer: AnswerReady | None) -> str:
    """How the answer used this unit, when it cites it: the lead it gave, the support check and
    every lexicon link the check took to read the unit's sentence as the question's words."""
    lines = []
    for part in answer.parts if answer is not None else ():
        if unit_id not in part.cited_ids or part.detail is None:
            continue
        detail = part.detail
        lead = f"lead [b]{escape(detail.lead)}[/b] · " if detail.lead else ""
        lines.append(f"  #{part.intent_index} {lead}{escape(detail.answer_type)} · support {escape(detail.support)}")
        lines += [f"  [$foreground-muted]lexicon link:[/] {escape(link)}" for link in detail.links]
        lines += [f"  [$foreground-muted]reference:[/] {escape(ref)}" for ref in detail.resolved]
    return "\n".join(lines)


class EvidenceDetailScreen(ModalScreen[None]):
    """The score breakdown of one evidence row, and the unit's text from the caller's view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="detail.close", tooltip="Close the breakdown"),
        Binding("c", "copy", "Copy", id="detail.copy", tooltip="Copy the unit id"),
        Binding("u", "open_unit", "Unit", id="detail.unit", tooltip="Open the unit"),
    ]

    def __init__(
        self,
        candidate: CandidateScore,
        scored: RetrievalScored,
        unit: KnowledgeUnit | None,
        *,
        missing: str = NOT_VISIBLE,
        retrieval: RetrievalConfig | None = None,
        retrieval_source: str = "the current retrieval config",
        answer: AnswerReady | None = None,
    ) -> None:
        super().__init__()
        self.answer = answer
        self.retrieval = retrieval
        self.retrieval_source = retrieval_source
        self.candidate = candidate
        self.scored = scored
        self.unit = unit
        self.missing = missing

    def compose(self) -> ComposeResult:
        c = self.candidate
        with Vertical(id="dialog", classes="dialog wide") as dialog:
            dialog.border_title = f"Why {c.id} scored {c.score:.3f}"
            with VerticalScroll(id="dialog-body"):
                yield Static(score_markup(c, self.scored, self.retrieval, self.retrieval_source), id="detail-scores")
                yield Static("\n[b]BM25 per term × field[/b]", classes="section")
                yield Static(bm25_table(c), id="detail-bm25")
                yield Static(role_boost_markup(c, self.scored), id="detail-boost")
                yield Static("\n[b]HDC per field[/b]", classes="section")
                _, hdc, _ = run_settings(self.scored, self.retrieval, self.retrieval_source)
                yield Static(hdc_markup(c, hdc, self.unit), id="detail-hdc")
                used = answer_use_markup(c.id, self.answer)
                if used:
                    yield Static("\n[b]Used by the answer[/b]", classes="section")
                    yield Static(used, id="detail-answer")
                yield Static("\n[b]Unit[/b]", classes="section")
                yield Static(unit_markup(self.unit, c.id, missing=self.missing), id="detail-unit")
        yield KeyBar()

    def action_copy(self) -> None:
        copy_text(self, self.candidate.id, f"copied {self.candidate.id}")

    def action_open_unit(self) -> None:
        from mrptui.messages import OpenUnit

        self.app.post_message(OpenUnit(self.candidate.id))
