"""The tie store read for other plugins: which projects each address the tools hand out is tied to.

The core's `ctx.tied(addresses)` asks every enabled plugin's `tied_projects` hook, so the spam filter's lists, a
search and a read agree about a message the person tied to a project with `link`. The hook reads the store made
by `projects.ties` (`ties.sqlite3` in the plugin's data folder) and answers for a whole batch with one query.

An address is looked for as the store keeps it (`ties.canonical`: `mid:<id>` without angle brackets, `sioul:case/`
read as `sioul:project/`) and answered under the spelling it was asked with. A value the store could never hold
(no known scheme, a line break) is tied to nothing. Only ties to a project count, as `belonging.tied_projects`
reads them: a tie between two projects places neither. No store yet means no tie (nothing is created to find that
out); a store that cannot be read raises, so the call that asked fails rather than give a tied thing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from gateway import ToolError
from gateway_mail.projects.ties import canonical, ident_of

_QUERY = """
SELECT a, b FROM ties WHERE a IN (SELECT value FROM json_each(?1))
UNION ALL
SELECT b, a FROM ties WHERE b IN (SELECT value FROM json_each(?1))
"""


def projects_tied(store: Path, addresses: Iterable[str]) -> dict[str, list[str]]:
    """`{address: [project ids]}` for the tied addresses among `addresses` (keys spelt as asked)."""
    asked: dict[str, list[str]] = {}
    for address in addresses:
        try:
            key = canonical(address)
        except ToolError:
            continue
        if ident_of(key, "project") is None:  # a project is not placed by its ties to other projects
            asked.setdefault(key, []).append(address)
    if not asked or not store.exists():
        return {}
    connection = sqlite3.connect(store, timeout=10, isolation_level=None, check_same_thread=False)
    try:
        try:
            rows = connection.execute(_QUERY, (json.dumps(list(asked)),)).fetchall()
        except sqlite3.OperationalError as error:
            # A store created a moment ago, before its table was: no tie yet. Anything else is raised.
            if str(error).startswith("no such table"):
                return {}
            raise
    finally:
        connection.close()
    found: dict[str, list[str]] = {}
    for end, other in rows:
        project = ident_of(other, "project")
        if project is None:
            continue
        for address in asked.get(end, ()):
            projects = found.setdefault(address, [])
            if project not in projects:
                projects.append(project)
    return found
