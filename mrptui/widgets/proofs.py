"""The proof tree: derived fact → rule (weight) → premises (recursively) → source unit ids."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from core.kernel.events import ProofNode, ProofsFound
from mrptui.messages import OpenUnit
from mrptui.widgets.drawn_styles import DrawnStyles
from mrptui.widgets.kept_component_styles import KeptComponentStyles
from mrptui.widgets.kept_lines import KeptLines
from mrptui.widgets.quiet_scrollbars import QuietScrollbars


def fact_label(node: ProofNode) -> Text:
    parts = [f"conf {node.confidence:.3f}"]
    if node.steps:
        parts.append(f"{node.steps} step{'s' if node.steps != 1 else ''}")
    if node.score is not None:
        parts.append(f"path {node.score:.3f}")
    return Text.assemble((node.fact, "bold"), ("  " + " · ".join(parts), "dim"))


def proof_text(node: ProofNode, depth: int = 0) -> str:
    """A proof as indented plain text (what `c` copies)."""
    pad = "  " * depth
    head = f"{pad}{node.fact} (conf {node.confidence:.3f}"
    head += f", path {node.score:.3f})" if node.score is not None else ")"
    lines = [head]
    if node.rule:
        lines.append(f"{pad}  ⇐ {node.rule} (weight {node.weight if node.weight is not None else '?'})")
        lines.extend(proof_text(p, depth + 2) for p in node.premises)
    else:
        lines.extend(f"{pad}  unit {u}" for u in node.units)
    return "\n".join(lines)


class ProofTree(KeptLines, KeptComponentStyles, QuietScrollbars, Tree[object]):
    """Proof trees of the latest ProofsFound; nodes below the top are built lazily on expand."""

    HELP = """\
## Proofs
ThinkingDB's proof trees for the latest kb-thinkingdb retrieval: each derived fact with its
confidence, proof steps and pathScore; under it the rule that derived it (with its weight), then the
rule's premises (recursively), down to the source units.

- `enter`/click expands a node; on a `unit …` leaf it opens that unit.
- `*` expands everything, `-` collapses everything.
- `c` copies the selected proof as indented text.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("asterisk", "expand_everything", "Expand all", id="proofs.expand", tooltip="Expand every proof node"),
        Binding(
            "minus", "collapse_everything", "Collapse all", id="proofs.collapse", tooltip="Collapse every proof node"
        ),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("no proofs yet", id=id, classes=classes)
        self.show_root = True
        self.root.allow_expand = False
        self.proofs: ProofsFound | None = None
        self._drawn_styles = DrawnStyles(Tree.COMPONENT_CLASSES)

    def notify_style_update(self) -> None:
        # Tree's own drops every line and lays the whole screen out again, so a focus move into or
        # out of this pane repainted every pane (issue 41: half the idle focus keys' CPU). Its lines
        # are keyed on the focus, and CSS that changes a size lays out through the style system:
        # the lines are dropped only when a state's styles changed (`drawn_styles`).
        super(Tree, self).notify_style_update()
        self._drawn_styles.expect_change()
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._drawn_styles.changed(self):
            self._line_cache.clear()
        return super().render_lines(crop)

    def render_label(self, node: TreeNode[object], base_style: Style, style: Style) -> Text:
        # Tree crops a line at the pane's edge with no mark; a label that does not fit ends in "…"
        # instead (`z` zooms the pane, `c` copies the whole proof).
        label = super().render_label(node, base_style, style)
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth
        if room >= 2 and label.cell_len > room:
            label.truncate(room, overflow="ellipsis")
        return label

    def show(self, proofs: ProofsFound | None) -> None:
        if proofs is self.proofs:
            return
        self.proofs = proofs
        self.clear()
        if proofs is None:
            self.root.set_label("no proofs yet")
            self.root.allow_expand = False
            return
        self.root.allow_expand = True
        self.root.set_label(
            f"{proofs.plugin}: {len(proofs.proofs)} proof{'s' if len(proofs.proofs) != 1 else ''} · "
            f"{proofs.stop_reason} · {proofs.rounds} rounds · {proofs.derived} derived"
        )
        for position, proof in enumerate(proofs.proofs):
            node = self._add_fact(self.root, proof)
            if position == 0:  # the best proof starts open: its rule and the rule's premises
                self._populate(node)
                node.expand()
                for child in node.children:
                    child.expand()
        self.root.expand()

    def _add_fact(self, parent: TreeNode, proof: ProofNode) -> TreeNode:
        expandable = bool(proof.rule or proof.units)
        return parent.add(fact_label(proof), data=proof, allow_expand=expandable)

    def _populate(self, node: TreeNode) -> None:
        """Build the children of a fact or rule node the first time it is expanded."""
        if node.children:
            return
        data = node.data
        if isinstance(data, ProofNode):
            if data.rule:
                weight = f"{data.weight:g}" if data.weight is not None else "?"
                rule = node.add(
                    Text.assemble(("⇐ ", "dim"), (data.rule, "italic"), (f" (weight {weight})", "dim")),
                    data=("rule", data),
                )
                for premise in data.premises:
                    self._add_fact(rule, premise)
                if not data.premises:
                    rule.allow_expand = False
            else:
                for unit_id in data.units:
                    node.add_leaf(Text.assemble(("unit ", "dim"), unit_id), data=("unit", unit_id))
        elif isinstance(data, tuple) and data[0] == "rule":
            for premise in data[1].premises:
                self._add_fact(node, premise)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._populate(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if isinstance(data, tuple) and data[0] == "unit":
            event.stop()
            self.post_message(OpenUnit(data[1]))

    def _expand_all(self, node: TreeNode) -> None:
        self._populate(node)
        if node.allow_expand:
            node.expand()
        for child in node.children:
            self._expand_all(child)

    def action_expand_everything(self) -> None:
        self._expand_all(self.root)

    def action_collapse_everything(self) -> None:
        for child in self.root.children:
            child.collapse_all()

    def copy_text(self) -> str | None:
        node = self.cursor_node
        while node is not None and not isinstance(node.data, ProofNode):
            if isinstance(node.data, tuple) and node.data[0] == "unit":
                return node.data[1]
            node = node.parent
        if node is None:
            if self.proofs and self.proofs.proofs:
                return "\n".join(proof_text(p) for p in self.proofs.proofs)
            return None
        return proof_text(node.data) if isinstance(node.data, ProofNode) else None
