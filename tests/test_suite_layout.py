"""The suite's own shape: helpers are shared by importing them from the `tests` package, never by editing
`sys.path`, so that a test finds the same module whatever ran before it and on whichever worker it runs."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# The fork server sets up a forked `gateway`'s sys.path as the interpreter would have for `python -m gateway`.
SETS_UP_A_PROCESS = {Path("forkserver/server.py")}


def test_no_test_edits_sys_path() -> None:
    edits = re.compile(r"sys\.path\s*(\.\s*(insert|append|extend)\b|\[|\+?=)")
    found = [f"{path.relative_to(TESTS)}:{n}" for path in sorted(TESTS.rglob("*.py"))
             if path.relative_to(TESTS) not in SETS_UP_A_PROCESS
             for n, line in enumerate(path.read_text().splitlines(), 1) if edits.search(line)]
    assert not found, f"import the helper from the tests package instead (tests.plugins....): {found}"


def test_every_folder_of_tests_is_a_package() -> None:
    folders = {path.parent for path in TESTS.rglob("*.py")}
    missing = sorted(str(f.relative_to(TESTS.parent)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, f"add an empty __init__.py to {missing}, so its modules import as tests.<folder>.<module>"
