"""A plugin's settings: checked against their declared types at load, filled with defaults, paths resolved.

Every hook and every call sees one shape: the declared keys with their defaults filled in, the table's values
over them, and neither ``prefix`` nor ``disabled_tools`` (those belong to the core).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.api.items import Setting

from gateway.engine.config import CORE_PLUGIN_KEYS as CORE_KEYS

_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", list: "a list",
          dict: "a table"}


def _fits(kind: Any, value: Any) -> bool:
    origin = typing.get_origin(kind) or kind
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in (str, Path, PurePath) or (isinstance(kind, type) and issubclass(kind, PurePath)):
        return isinstance(value, str)
    if origin in (list, tuple):
        items = typing.get_args(kind)
        return isinstance(value, list) and (not items or all(_fits(items[0], v) for v in value))
    if origin is dict:
        return isinstance(value, Mapping)
    return True  # a type the core does not know: the plugin checks it itself


def _words(kind: Any) -> str:
    origin = typing.get_origin(kind) or kind
    if isinstance(kind, type) and issubclass(kind, PurePath):
        return "a path (a string)"
    if origin in (list, tuple):
        items = typing.get_args(kind)
        return f"a list of {_words(items[0]).removeprefix('a ').removeprefix('an ')}s" if items else "a list"
    return _WORDS.get(origin, getattr(kind, "__name__", str(kind)))


def setting_problem(setting: Setting, value: Any) -> str | None:
    """What is wrong with `value` for `setting`, as the end of a sentence; None when it is fine."""
    kind = setting.kind
    if kind is not None and not _fits(kind, value):
        shown = repr(value) if len(repr(value)) <= 40 else f"a {type(value).__name__}"
        return f"{setting.name} must be {_words(kind)}, not {shown}"
    if setting.choices is not None and value not in setting.choices:
        return f"{setting.name} must be one of {', '.join(repr(c) for c in setting.choices)}, not {value!r}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if setting.minimum is not None and value < setting.minimum:
            return f"{setting.name} must be at least {setting.minimum:g}, not {value!r}"
        if setting.maximum is not None and value > setting.maximum:
            return f"{setting.name} must be at most {setting.maximum:g}, not {value!r}"
    return None


def table_problem(plugin: str, declared: Mapping[str, Setting], table: Mapping[str, Any]) -> str | None:
    """What is wrong with a plugin's ``[plugins.<name>]`` table (unknown keys, wrong values); None when usable."""
    unknown = sorted(set(table) - set(declared) - CORE_KEYS)
    if unknown:
        known = ", ".join(sorted(set(declared) | CORE_KEYS))
        return (
            f"plugin {plugin}: unknown {'key' if len(unknown) == 1 else 'keys'} in [plugins.{plugin}]: {', '.join(unknown)} (known: {known}); "
            "the plugin is off until the config is fixed"
        )
    wrong = [p for key, value in table.items() if key in declared and (p := declared[key].problem(value))]
    if wrong:
        return (
            f"plugin {plugin}: in [plugins.{plugin}], {'; '.join(wrong)}; the plugin is off until the config is fixed"
        )
    return None


def filled(declared: Mapping[str, Setting], table: Mapping[str, Any]) -> dict[str, Any]:
    """The one shape every hook and call sees: declared defaults, the table over them, the core's keys left out."""
    values = {name: setting.default for name, setting in declared.items()}
    values.update({k: v for k, v in table.items() if k not in CORE_KEYS})
    return values


def resolve_path(value: Any, config_folder: Path) -> Path:
    """A path setting as the person means it: ``~`` is their home, a relative path is taken from the config folder."""
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else config_folder / path
