"""Read one beancount journal with beancount's own loader and write what the plugin needs as one JSON document.

Run as a child process (``python -m gateway_ledger.bean_reader JOURNAL``), so that a journal that takes too long or
too much memory to load is stopped without touching the server, and so that the loader's plugins (which a journal
may name) run apart from it. beancount's pickle cache is turned off: nothing is written beside the journal.

The document: ``files`` (the journal and every file it includes), ``errors`` (each ``[kind, file, line, message]``),
``transactions``, ``budgets`` (the ``custom "budget"`` directives, Fava's convention) and ``accounts`` (the
``open`` directives with their metadata).
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any

INTERVALS = ("daily", "weekly", "monthly", "quarterly", "yearly")


def _meta(meta: dict[str, Any] | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in (meta or {}).items()
            if k not in ("filename", "lineno") and not str(k).startswith("__")}


def _where(meta: dict[str, Any] | None) -> tuple[str, int]:
    meta = meta or {}
    return str(meta.get("filename") or ""), int(meta.get("lineno") or 0)


def read(path: str) -> dict[str, Any]:
    from beancount import loader
    from beancount.core import data

    loader.initialize(use_cache=False)
    entries, errors, options = loader.load_file(path)
    found: dict[str, Any] = {"files": [str(f) for f in options.get("include") or [path]], "errors": [],
                             "transactions": [], "budgets": [], "accounts": {}}
    for error in errors:
        file, line = _where(getattr(error, "source", None))
        found["errors"].append([type(error).__name__, file, line, " ".join(str(error.message).split())[:500]])
    for entry in entries:
        file, line = _where(entry.meta)
        if isinstance(entry, data.Transaction):
            postings = [[p.account, str(p.units.number) if p.units and p.units.number is not None else "0",
                         str(p.units.currency or "") if p.units else "", _meta(p.meta)] for p in entry.postings]
            found["transactions"].append([entry.date.isoformat(), entry.payee or "", entry.narration or "",
                                          sorted(entry.tags or ()), sorted(entry.links or ()), _meta(entry.meta),
                                          file, line, postings])
        elif isinstance(entry, data.Open):
            found["accounts"][entry.account] = {"opened": entry.date.isoformat(), "meta": _meta(entry.meta),
                                                "file": file, "line": line}
        elif isinstance(entry, data.Close):
            found["accounts"].setdefault(entry.account, {"meta": {}, "file": file, "line": line})
            found["accounts"][entry.account]["closed"] = entry.date.isoformat()
        elif isinstance(entry, data.Custom) and entry.type == "budget":
            values = [v.value for v in entry.values]
            if (len(values) == 3 and isinstance(values[0], str) and isinstance(values[1], str)
                    and values[1].strip().lower() in INTERVALS and hasattr(values[2], "number")):
                found["budgets"].append([entry.date.isoformat(), values[0], values[1], str(values[2].number),
                                         str(values[2].currency), _meta(entry.meta), file, line])
            else:
                found["errors"].append(["BudgetError", file, line, 'a budget is written custom "budget" ACCOUNT '
                                        '"monthly" AMOUNT (daily, weekly, monthly, quarterly or yearly)'])
    return found


def main() -> None:
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    json.dump(read(sys.argv[1]), sys.stdout, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
