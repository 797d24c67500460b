"""The import statements of a Python source, read with `ast` (nothing is imported), for the tests that check who
imports what. Imports are statements, so only statement lists are walked, never an expression: most of a tree's
nodes are expressions, and walking them all was most of those tests' time."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_STATEMENT_LISTS = ("body", "handlers", "orelse", "finalbody", "cases")


def import_statements(tree: ast.AST, *, type_checking: bool = True) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every `import` and `from ... import` in `tree`, at any depth (in functions, classes, `if`, `try`, `with`,
    `match`...); with `type_checking=False`, not those in the body of an `if TYPE_CHECKING:` (never run)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        for field in _STATEMENT_LISTS:
            inner = getattr(node, field, None)
            if not isinstance(inner, list):  # absent, or an expression's (`lambda: x`, `x if y else z`)
                continue
            if (not type_checking and field == "body" and isinstance(node, ast.If)
                    and "TYPE_CHECKING" in ast.unparse(node.test)):
                continue
            pending.extend(inner)

