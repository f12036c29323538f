"""The answer panel: status (grounded / weak / no-context), the text, validations and citations."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.kernel.events import AnswerDetail, AnswerReady
from core.kernel.summary import budget_stops
from mrptui.answer_verdict import grounded_head, part_symbol
from mrptui.messages import OpenUnit
from mrptui.state import ViewState
from mrptui.widgets.id_cut import unique_cut
from mrptui.widgets.kept_lines import KeptLines
from mrptui.widgets.kept_static import KeptStatic
from mrptui.widgets.laid_out import LaidOutOnce
from mrptui.widgets.quiet_scrollbars import QuietScrollbars
from mrptui.widgets.symbols import status_symbol, tone_markup
from mrptui.widgets.timeline import silent_shards


def answer_markdown(state: ViewState) -> str:
    """The answer with its citations as Markdown (the `m` export)."""
    answer = state.answer
    if answer is None:
        return ""
    status = f"{answer.status} ({grounded_head(state)[2]})" if answer.status == "grounded" else answer.status
    lines = [f"# {state.question}", "", f"**Status:** {status}", ""]
    # What the answer pane says under the status, so an exported answer cannot lose it.
    silent = _silent_shards(state)
    notes = [f"**Incomplete:** {silent}: the answer is incomplete"] if silent else []
    notes += [f"**Budget:** {note}: the answer may be incomplete" for note in budget_stops(state.proofs_all)]
    lines += [f"{note}  " for note in notes] + ([""] if notes else [])
    lines += [answer.answer, ""]
    detail = answer.parts[0].detail if len(answer.parts) == 1 else None
    if detail is not None:
        lines += [
            f"**Type:** {detail.answer_type}  ",
            f"**Lead:** {detail.lead or '(none)'}  ",
            f"**Support:** {detail.support}",
            "",
        ]
        lines += [f"- link: {link}" for link in detail.links] + [f"- reference: {ref}" for ref in detail.resolved]
        lines += [""] if detail.links or detail.resolved else []
    if len(answer.parts) > 1:
        for part in answer.parts:
            lines += [f"## {part.target} ({part.status})", "", part.answer, ""]
            lines += [f"- `{cid}`" for cid in part.cited_ids] + [""]
    if answer.evidence_ids:
        lines += ["## Citations", ""]
        lines += [f"{n}. `{cid}`" for n, cid in enumerate(answer.evidence_ids, start=1)]
        lines.append("")
    return "\n".join(lines)


def detail_lines(detail: AnswerDetail | None) -> list[str]:
    """How the short answer was found: the asked type, the lead, the support check and the
    lexicon links and references it relied on."""
    if detail is None:
        return []
    lines = ["", f"[$foreground-muted]type:[/] {escape(detail.answer_type)}"]
    if detail.lead:
        lines.append(f"[$foreground-muted]lead:[/] [b]{escape(detail.lead)}[/b]")
    check_sym, check_tone = status_symbol("accepted" if detail.supported else "rejected")
    lines.append(f"[$foreground-muted]support:[/] {tone_markup(check_sym, check_tone)} {escape(detail.support)}")
    lines += [f"[$foreground-muted]link:[/] {escape(link)}" for link in detail.links]
    lines += [f"[$foreground-muted]reference:[/] {escape(ref)}" for ref in detail.resolved]
    return lines


def fit_citations(text: str, cited: tuple[str, ...], room: int) -> str:
    """`text` with each "[id]" wider than `room` cut as the citation list cuts it: wrapped, an id
    broke in the middle ("orion-stack::chunk-001::u" / "nit-003"). The list and `c` keep it whole."""
    # The brackets and the punctuation that follows a citation ("];") wrap with it.
    fit = room - 3
    if fit <= 1 or not cited:
        return text
    id_cut = unique_cut(cited, fit)
    for cid in cited:
        if len(cid) > fit:
            text = text.replace(f"[{cid}]", f"[{id_cut.apply(cid)}]")
    return text


def render_answer(state: ViewState, room: int = 0) -> str:
    """The answer pane's markup; `room` (its width, 0 for none) cuts cited ids that would wrap."""
    answer = state.answer
    if answer is None:
        if state.status in ("idle",):
            return "[$foreground-muted]The answer appears here.[/]"
        if state.done:
            return "\n".join(
                [
                    tone_markup(f"✗ run {escape(state.status)} without an answer", "bad"),
                    *incomplete_lines(state),
                    *budget_lines(state),
                ]
            )
        return "[$foreground-muted]⋯ no answer yet[/]"
    cited = answer.evidence_ids
    lines = [
        head_markup(state, answer),
        *incomplete_lines(state),
        *budget_lines(state),
        "",
        escape(fit_citations(answer.answer, cited, room)),
    ]
    if len(answer.parts) == 1:
        lines += detail_lines(answer.parts[0].detail)
    if len(answer.parts) > 1:
        for part in answer.parts:
            psym, ptone = part_symbol(state, part.intent_index, part.status) or status_symbol(part.status)
            lines += [
                "",
                f"{tone_markup(psym, ptone)} [b]#{part.intent_index} {escape(part.target)}[/b]",
                escape(fit_citations(part.answer, cited, room)),
                *detail_lines(part.detail),
            ]
    for validation in state.validations:
        vsym, vtone = status_symbol(validation.status)
        reason = f": {escape(validation.reason)}" if validation.reason else ""
        where = f" r{validation.revision}" + (f" #{validation.intent_index}" if validation.intent_index else "")
        lines.append(
            f"[$foreground-muted]{tone_markup(vsym, vtone)} {escape(validation.plugin)}{where} {escape(validation.status)}{reason}[/]"
        )
    if state.finished and state.finished.replans:
        lines.append(f"[$foreground-muted]replans: {state.finished.replans}[/]")
    return "\n".join(lines)


def _silent_shards(state: ViewState) -> str:
    silent = {s.shard: s for row in state.attempts for s in row.shards if not s.answered}
    return silent_shards([silent[n] for n in sorted(silent)])


def head_markup(state: ViewState, answer: AnswerReady) -> str:
    """The answer's status, and for a grounded one the validator that accepted it or why none did."""
    symbol, tone = status_symbol(answer.status)
    head = tone_markup(f"[b]{symbol} {escape(answer.status)}[/b]", tone)
    if answer.status != "grounded":
        return head
    symbol, tone, said = grounded_head(state)
    return tone_markup(f"[b]{symbol} grounded[/b]", tone) + f" [$foreground-muted]· {escape(said)}[/]"


def incomplete_lines(state: ViewState) -> list[str]:
    """The shards of the cluster that did not answer an attempt (the attempts name the plugins):
    the answer stands without their units."""
    said = _silent_shards(state)
    return [tone_markup(f"✗ {escape(said)}: the answer is incomplete", "bad")] if said else []


def budget_lines(state: ViewState) -> list[str]:
    """The closures a budget stopped (the proofs pane names the stop too): the answer stands on
    what was derived before it, and may miss what the rest would have proved."""
    return [
        tone_markup(f"✂ {escape(note)}: the answer may be incomplete", "warn")
        for note in budget_stops(state.proofs_all)
    ]


class AnswerPanel(KeptLines, LaidOutOnce, QuietScrollbars, VerticalScroll, can_focus=True):
    """Answer text and status; citations below, each opening its unit."""

    HELP = """\
## Answer
The answer with its status: grounded (every claim cites evidence), ≈ weak (the best weak answer
after a level-3 backtrack) or ∅ no-context. A grounded answer shows ✓ only with the validator that
accepted it (`✓ grounded · accepted by val-grounded`); without a verdict it reads `○ grounded · not
validated:` and why (no validator ran, or what each one tried said). Validator verdicts follow. The citations list the cited
unit ids: `enter` or a click opens the unit (its text comes from your permitted view of the KB).
`c` copies the answer with citations; `m` exports it as Markdown.
"""

    BINDINGS: ClassVar[list[BindingType]] = []

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._markup = ""
        self._cited: tuple[str, ...] = ()
        self._citations_room = 0  # the room the citations were last cut to
        self.state: ViewState = ViewState()

    def compose(self):
        yield KeptStatic(render_answer(ViewState()), id="answer-text")
        yield CitationList(id="citations")

    def show(self, state: ViewState) -> None:
        self.state = state
        markup = render_answer(state, self._room())
        if markup != self._markup:
            self._markup = markup
            self.query_one("#answer-text", Static).update(markup)
        cited = state.answer.evidence_ids if state.answer else ()
        if cited != self._cited:
            self._cited = cited
            self._fill_citations()

    def on_resize(self) -> None:
        # A new answer's height changes the panel's virtual size, which Textual reports as a
        # resize: refilling the same citations at the same width re-laid out the screen again
        # and drew a further frame after every question's end (issue 41).
        if self._cited and self._room() != self._citations_room:
            self._fill_citations()
        self.show(self.state)

    def _room(self) -> int:
        """The content's width as it is with a vertical scrollbar, shown or not. The answer is
        fitted before its height is known: a scrollbar that appeared after narrowed the pane under
        lines fitted to the wider one, and a citation's "." wrapped in some runs and not others."""
        width = self.scrollable_content_region.width
        return width if self.show_vertical_scrollbar else width - self.styles.scrollbar_size_vertical

    def _fill_citations(self) -> None:
        """One line per cited id: an id wider than the pane is cut to a form no other citation
        shares (never wrapped, which broke it in the middle); Enter opens the whole unit."""
        cited = self._cited
        citations = self.query_one(CitationList)
        highlighted = citations.highlighted
        self._citations_room = self._room()
        room = self._citations_room - 2 - len(f"[{len(cited)}] ")  # the options' padding
        id_cut = unique_cut(cited, room) if room > 0 else None
        citations.clear_options()
        citations.add_options(
            Option(f"[{n}] {escape(id_cut.apply(cid) if id_cut else cid)}", id=cid)
            for n, cid in enumerate(cited, start=1)
        )
        citations.display = bool(cited)
        if cited:
            citations.highlighted = highlighted if highlighted is not None and highlighted < len(cited) else 0

    def copy_text(self) -> str | None:
        return answer_markdown(self.state) or None


class CitationList(QuietScrollbars, OptionList):
    """The cited unit ids; choosing one opens the unit."""

    HELP = AnswerPanel.HELP

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(OpenUnit(event.option.id))

    def copy_text(self) -> str | None:
        panel = self.parent
        if isinstance(panel, AnswerPanel):
            return answer_markdown(panel.state) or None
        return None
