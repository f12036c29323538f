"""Build the plugin registry from `config/engine.json`: each entry names a `module:factory`.

A factory takes the shared Services and returns a plugin or a list of plugins, so a user adds a
plugin by writing a module and naming it in the config.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from core.diagnostics import Code, Diagnostic
from core.plugins.base import Plugin, Registry, RegistryError
from core.services import Services


def _resolve(reference: str):
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"plugin reference {reference!r} is not of the form module:factory")
    return getattr(import_module(module_name), attribute)


def build_registry(services: Services, config_file: Path) -> tuple[Registry, list[Diagnostic]]:
    registry = Registry()
    problems: list[Diagnostic] = []
    for reference in services.engine.plugins:
        try:
            made = _resolve(reference)(services)
            for plugin in made if isinstance(made, list | tuple) else [made]:
                if not isinstance(plugin, Plugin):
                    raise RegistryError(f"{reference} returned {type(plugin).__name__}, not a plugin")
                registry.add(plugin)
        except (ImportError, AttributeError, ValueError, RegistryError, TypeError) as exc:
            problems.append(
                Diagnostic(code=Code.INVALID_CONFIG, message=f"plugin {reference!r}: {exc}", file=str(config_file))
            )
    return registry, problems
