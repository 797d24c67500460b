"""Time and invoices through a real `gateway serve`, spoken to with the MCP SDK's own client.

The data: timewarrior's files written by the real `timew` (and one line by hand), Factur-X PDFs made by the
factur-x library, and beside them hostile PDFs (corrupt, cut, without XML, a PDF bomb, an XML bomb, a file that
never ends). Two closed projects hold a canary: one by a time entry's `project:` tag and an invoice's reference,
the other by a senders route (an invoice's buyer), a paths route (an invoice's folder) and a subjects route (a
time entry's tag). The attack: every tool, every argument that could reach them (the canary itself, the project's
id, its names), and an IBAN asked by every writing of its digits. No answer holds the canary, a name of theirs or
the IBAN; the counts left out are the same whatever the words; opened, the project's things come (the canary was
there to be found).
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import anyio
import tomli_w
from gateway_time import sample

from gateway.testing import read_audit, serve_client, write_config
from tests.plugins.time.hostile import write_hostile

CANARY = "belugacanary"
NAMES = ("Vault", "Harbor", "harbor berth", "strongroom", "Quay Office", "crane", "V-9", "H-1", "H-2")


def _text(result) -> str:  # noqa: ANN001
    return "\n".join(getattr(block, "text", "") for block in result.content) + json.dumps(
        result.structured_content or {}, ensure_ascii=False)


async def _call(client, tool: str, arguments: dict) -> tuple[bool, str]:  # noqa: ANN001
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as refusal:  # noqa: BLE001 - a JSON-RPC error is a refusal too
        return True, str(refusal)
    return bool(result.is_error), _text(result)


def test_time_and_invoices_served_behind_the_gate(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    hostile = write_hostile(made["invoices"] / "inbox", made["invoices"] / "2026" / "lee-7.pdf")
    made["config"]["plugins"]["time"]["max_seconds"] = 1
    write_config(gateway_home, made["config"], projects=made["projects"])
    today = made["today"]
    month_ago = str(today - timedelta(days=30))
    words = (None, CANARY, "vault", "project:vault", "harbor", "harbor berth", "Vault", "quay", "acme", "zzz")

    async def play(client):  # noqa: ANN001, ANN202
        seen: dict = {"listed": {t.name: t for t in (await client.list_tools()).tools}}
        answers = []
        for tool, arguments in [
            ("time_spent", {}), ("time_spent", {"since": month_ago, "by": "day"}),
            *(("time_spent", {"since": month_ago, **({"project": w} if w else {})}) for w in words),
            *(("invoices", {"status": s}) for s in ("unpaid", "overdue", "paid", "all")),
            *(("invoices", {"status": "all", **({"query": w} if w else {})}) for w in words),
            *(("invoices", {"status": "all", "query": form}) for form in sample.IBAN_FORMS),
        ]:
            answers.append((tool, arguments, *await _call(client, tool, arguments)))
        seen["answers"] = answers
        # Opened, the vault's things come: the canary was there to be found.
        projects = [dict(p, ai=True) if p["id"] == "vault" else p for p in made["projects"]]
        manifest = gateway_home / ".config" / "gateway" / "projects.toml"
        manifest.write_text(tomli_w.dumps({"project": projects}))
        stamp = manifest.stat().st_mtime_ns + 2_000_000_000
        os.utime(manifest, ns=(stamp, stamp))
        seen["opened"] = [await _call(client, "invoices", {"status": "all"}),
                          await _call(client, "time_spent", {"since": month_ago})]
        return seen

    seen = anyio.run(_serve, gateway_home, play)
    listed = seen["listed"]
    assert {"time_spent", "invoices"} <= set(listed)
    assert listed["invoices"].annotations.read_only_hint is True
    by_call = {(tool, json.dumps(arguments)): (error, text) for tool, arguments, error, text in seen["answers"]}
    for (tool, arguments), (error, text) in by_call.items():
        assert not error, (tool, arguments, text)
        assert CANARY not in text, (tool, arguments)
        for name in NAMES:
            assert name not in text, (tool, arguments, name)
        for form in sample.IBAN_FORMS:
            assert form not in text, (tool, arguments, form)
    # The left-out counts depend on the scope alone (the period, the status), never on the words.
    time_counts = {json.loads(text[text.index("{"):])["left_out"] for (tool, arguments), (_e, text) in by_call.items()
                   if tool == "time_spent" and "since" in arguments and "by" not in arguments}
    assert time_counts == {2}
    invoice_counts = {json.loads(text[text.index("{"):])["left_out"] for (tool, arguments), (_e, text)
                      in by_call.items() if tool == "invoices" and '"status": "all"' in arguments}
    assert invoice_counts == {3}
    every = by_call[("invoices", json.dumps({"status": "all"}))][1]
    assert "INV-2026-0042" in every and "pay to [IBAN …0189]" in every
    assert "3 invoices left out: their projects are closed to AI agents." in every
    assert f"{len(hostile)} invoice files could not be read (gateway doctor names them)." in every
    for form in sample.IBAN_FORMS:
        assert "(no invoice)" in by_call[("invoices", json.dumps({"status": "all", "query": form}))][1]
    spent = by_call[("time_spent", json.dumps({"since": month_ago}))][1]
    assert "Running now: since" in spent and "2 intervals left out" in spent
    # Opened: the vault's invoice and hours are given, the harbor's (still closed) are not.
    (error, invoices), (_error, hours) = seen["opened"]
    assert not error and f"Vault {CANARY} Trust" in invoices and "Harbor" not in invoices
    assert f"{CANARY} design" in hours and "1 interval left out" in hours
    # The audit log names what was given by its addresses, and holds no IBAN (the ones typed as queries masked).
    entries = read_audit(gateway_home)
    audit = json.dumps(entries, ensure_ascii=False)
    assert "time:invoice/" in audit and sample.IBAN not in audit and sample.IBAN_FORMS[1] not in audit
    assert not any(CANARY in json.dumps(e.get("given", [])) for e in entries)


async def _serve(home: Path, play):  # noqa: ANN001, ANN202
    async with serve_client(home) as client:
        return await play(client)
