"""Build the plugin registry from `config/engine.json`: each entry names a `module:factory`.

A factory takes the shared Services and returns a plugin or a list of plugins, so a user adds a
plugin by writing a module and naming it in the config. Plugin code is not trusted to behave:
a module or factory that fails in any way (an exception, a syntax error, `sys.exit()`) becomes a
diagnostic at its line of engine.json, and the other plugins still load.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any, TypedDict

from core.infra.config import EngineConfig, json_pointer_line
from core.infra.diagnostics import Code, Diagnostic, did_you_mean
from core.kernel.contract import STAGE_NAMES, STAGES, Plugin, Registry, RegistryError
from core.kernel.output import plugin_output
from core.kernel.services import Services

# A failing plugin's message is quoted, not dumped: enough to recognise it on one line.
_MAX_MESSAGE_CHARS = 500


def _resolve(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"plugin reference {reference!r} is not of the form module:factory")
    return getattr(import_module(module_name), attribute)


def _made(reference: str, services: Services) -> list[Plugin]:
    with plugin_output():
        made = _resolve(reference)(services)
    plugins = list(made) if isinstance(made, list | tuple) else [made]
    for plugin in plugins:
        if not isinstance(plugin, Plugin):
            raise RegistryError(f"{reference} returned {type(plugin).__name__}, not a plugin")
    return plugins


def _failure(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[:_MAX_MESSAGE_CHARS] + "…"


def _config_text(config_file: Path) -> str:
    try:
        return config_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


class _Place(TypedDict):
    line: int
    col: int


def _place(text: str, needle: str, start: int = 1) -> _Place:
    """Line and column of the first `needle` JSON string at or after line `start`; else `start`."""
    quoted = f'"{needle}"'
    lines = text.split("\n")
    for number in range(start, len(lines) + 1):
        col = lines[number - 1].find(quoted)
        if col >= 0:
            return {"line": number, "col": col + 1}
    return {"line": start, "col": 1}


def build_registry(services: Services, config_file: Path) -> tuple[Registry, list[Diagnostic]]:
    registry = Registry()
    problems: list[Diagnostic] = []
    text = _config_text(config_file)
    for reference in services.engine.plugins:
        try:
            for plugin in _made(reference, services):
                registry.add(plugin)
        except KeyboardInterrupt:
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - plugin code must not stop the program
            problems.append(
                Diagnostic(
                    code=Code.INVALID_CONFIG,
                    message=f"plugin factory {reference!r} failed and was left out: {_failure(exc)}",
                    file=str(config_file),
                    **_place(text, reference),
                )
            )
    problems += planner_order_problems(services.engine, registry, config_file, text)
    return registry, problems


def planner_order_problems(engine: EngineConfig, registry: Registry, config_file: Path, text: str) -> list[Diagnostic]:
    """Ids in a planner's order that no loaded plugin has, or that name a plugin of another stage.

    The planner skips them either way, but either is a mistake in the file (a misspelt id leaves
    the stage without the plugin the author chose): an error, so `mrptui check` fails on it.
    """
    problems = []
    for planner_id, order in engine.planners.items():
        for stage_type in STAGES:
            stage = STAGE_NAMES[stage_type]
            start = json_pointer_line(text, ("planners", planner_id, stage))
            for plugin_id in getattr(order, stage):
                if plugin_id not in registry:
                    hint = did_you_mean(plugin_id, [p.descriptor.id for p in registry.of_type(stage_type)])
                    message = (
                        f"planners.{planner_id}.{stage} names {plugin_id!r}, which no loaded plugin has{hint}; "
                        "it is skipped"
                    )
                elif registry.get(plugin_id).descriptor.type is not stage_type:
                    kind = registry.get(plugin_id).descriptor.type.value
                    message = f"planners.{planner_id}.{stage} names {plugin_id!r}, a {kind}; it is skipped"
                else:
                    continue
                problems.append(
                    Diagnostic(
                        code=Code.INVALID_CONFIG,
                        message=message,
                        file=str(config_file),
                        **_place(text, plugin_id, start),
                    )
                )
    return problems
