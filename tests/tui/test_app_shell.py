"""mrptui/app.py stays a shell: small, no mixins, and imported by nothing but the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

from textual.app import App

from mrptui.app import ExplorerApp

PACKAGE = Path(__file__).resolve().parents[2] / "mrptui"
# The focus model's two key hooks (on_event, _on_key) and UI first's two (post_message, _display:
# mrptui/ui_first.py) must be methods of the App itself; 370 before UI first, 405 before the KB's
# health, showing a replay and the KB's state moved to their components (mrptui/kb_health.py,
# mrptui/run_driver.py); 388 before the KB reports and worker errors became collaborators
# (mrptui/kb_reports.py, mrptui/worker_errors.py).
MAX_LINES = 370


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (inside functions and TYPE_CHECKING blocks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_only_the_cli_imports_the_app_module() -> None:
    importers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "app.py" and "mrptui.app" in imports_of(path)
    )
    assert importers and all(name.startswith("commands/") or name == "cli.py" for name in importers), importers


def test_the_check_sees_an_import_hidden_in_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    if True:\n        from mrptui.app import ExplorerApp\n")
    assert "mrptui.app" in imports_of(module)


def test_the_app_module_is_a_shell_without_mixins() -> None:
    assert len((PACKAGE / "app.py").read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    assert ExplorerApp.__bases__ == (App,)


def test_every_message_a_screen_or_worker_posts_has_its_own_handler_on_the_app() -> None:
    """One typed message class per command, each handled by the app's `on_…` method of Textual's
    name for it (a misnamed handler is never called, and the command would do nothing)."""
    import inspect

    from textual.message import Message

    from mrptui import messages

    kinds = [
        kind
        for _, kind in inspect.getmembers(messages, inspect.isclass)
        if issubclass(kind, Message) and kind.__module__ == messages.__name__
    ]
    assert len(kinds) > 20 and not hasattr(messages, "Command")
    assert [kind.__name__ for kind in kinds if not callable(getattr(ExplorerApp, kind.handler_name, None))] == []
