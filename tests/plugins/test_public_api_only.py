"""The built-in plugins use the gateway as a third-party plugin would: only the names `gateway` exports, never one
of its modules; and no plugin imports another plugin's modules (the shared libraries `maildirs` and `spamfilter` aside)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import gateway
from tests.source_imports import import_statements

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
BUILT_INS = sorted(p for p in PLUGINS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


@cache  # read once for both checks: the files do not change during a run
def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in import_statements(tree):  # those under `if TYPE_CHECKING:` too
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return found


def test_the_built_ins_import_only_what_gateway_exports() -> None:
    exported = set(gateway.__all__)
    wrong = []
    for package in BUILT_INS:
        for path in package.rglob("*.py"):
            for line, module, names in _imports(path):
                where = f"{path.relative_to(PLUGINS)}:{line}"
                if module.startswith("gateway."):
                    wrong.append(f"{where} imports the module {module} (import its names from gateway)")
                elif module == "gateway":
                    wrong += [f"{where} imports {n}, which gateway does not export" for n in names if n not in exported]
    assert not wrong, "\n".join(wrong)


def test_no_plugin_imports_another_plugins_modules() -> None:
    names = {p.name for p in BUILT_INS} - {"maildirs", "spamfilter"}  # shared libraries, not plugins
    wrong = []
    for package in BUILT_INS:
        for path in package.rglob("*.py"):
            for line, module, _names in _imports(path):
                top = module.split(".")[0]
                if top in names and top != package.name:
                    wrong.append(f"{path.relative_to(PLUGINS)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_every_name_gateway_exports_can_be_imported() -> None:
    for name in gateway.__all__:
        assert getattr(gateway, name) is not None, name
