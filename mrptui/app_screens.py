"""The explorer's secondary screens (KB, rules, eval, help), the theme and the user keymap. A mixin
of ExplorerApp, which supplies the KB lifecycle and the queries path."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual.binding import Binding
from textual.screen import Screen

from mrptui.keymap import read_keymap
from mrptui.screens.help import HelpScreen, help_for
from mrptui.screens.main import MainScreen


class ScreenActions:
    def _pop_secondary(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()

    def _open_screen(self, kind: type[Screen], make: Callable[[], Screen]) -> None:
        """Push a secondary screen on top of the one it was opened from, so Esc goes back there.
        If one of its kind is already in the stack, go back to it instead (the screens above are
        closed): switching between KB and rules never grows the stack."""
        stack = self.screen_stack
        if not any(isinstance(screen, kind) for screen in stack):
            self.push_screen(make())
            return
        while not isinstance(self.screen, kind):
            self.pop_screen()

    def action_kb_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the KB screen"):
            return
        from mrptui.screens.kb import KBScreen

        self._open_screen(KBScreen, KBScreen)

    def action_rules_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the rules screen"):
            return
        from mrptui.screens.rules import RulesScreen

        self._open_screen(RulesScreen, RulesScreen)

    def action_eval_screen(self) -> None:
        if self.lifecycle.refuse_while_loading("the eval screen", needs_engine=True):
            return
        from mrptui.screens.eval import EvalScreen

        self._open_screen(EvalScreen, partial(EvalScreen, self.queries_path))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        text, groups = help_for(self.screen)
        self.push_screen(HelpScreen(text, groups))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    # -- user keymap ----------------------------------------------------------------------------

    def load_keymap(self, path: Path) -> dict[str, str]:
        """Apply `path` (binding id → keys) if it exists. A bad file, an unknown id or key name is a
        notification naming the file; the default keys stay for whatever was not applied."""
        keymap, problems = read_keymap(path)
        if keymap:
            self.set_keymap(keymap)
        if problems:
            shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
            what = "ignored those entries" if keymap else "kept the default keys"
            self.notify(f"{shown} — {what} (the binding ids are listed in docs/tui.md)", title="Keymap",
                        severity="error", timeout=12)
        return keymap

    def key_display(self, binding: Binding) -> str:
        """The key shown for `binding`, after the user keymap (first key of the remapped ones)."""
        keys = self._keymap.get(binding.id or "")
        if keys:
            binding = dataclasses.replace(binding, key=keys.split(",")[0].strip(), key_display=None)
        return self.get_key_display(binding)
