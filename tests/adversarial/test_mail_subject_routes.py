"""Subject routes take the real subject, and the counts never tell the digits a mask hid (through `gateway serve`).

A closed project routes the subject `ACME-2291`. A ticket's subject names it next to a login code, so the masks
hide `2291` too (`ACME-[code]`): the message must still be kept, and its canary word never shown. The attack:
the same project also routes `2291`; two accounts hold the same code message, the only difference being the
code (`482291` in one, `551234` in the other). Matching the real subject would keep one and give the other, so
an agent comparing the two accounts' counts would learn that the first code holds `2291`. What is kept must
depend on the masked subject alone: both accounts' counts are the same.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config

CANARY = "quokkasubjectcanary"
PROJECTS = [
    {"id": "tickets", "name": "Tickets", "ai": False, "subjects": ["ACME-2291", "2291"]},
    {"id": "garden", "name": "Garden", "ai": True, "subjects": ["Garden"]},
]


def _account(home: Path, name: str, code: str, now: float) -> dict:
    root = home / "Mail" / name
    inbox = root / "INBOX"
    sample.make_folder(root / "Drafts")
    sample.deliver(inbox, sample.message(
        message_id=f"ticket-{name}@example.org", sender="Desk <desk@acme.example.com>", date=now - 300,
        subject="Ticket ACME-2291: your login code is 778812", body=f"Your login code is 778812. {CANARY}"))
    sample.deliver(inbox, sample.message(
        message_id=f"code-{name}@example.org", sender="Bank <noreply@bank.example.com>", date=now - 200,
        subject=f"Your code is {code}", body=f"Use {code} to sign in. mossword"), flags=None)
    sample.deliver(inbox, sample.message(
        message_id=f"lunch-{name}@example.org", sender="Ada <ada@example.net>", date=now - 100,
        subject="Lunch on Tuesday", body="Shall we? mossword"))
    return {"name": name, "maildir": str(root), "addresses": ["pat@example.org"], "authserv_id": sample.OWN_SERVER}


def _home(home: Path) -> None:
    now = time.time()
    accounts = [_account(home, "one", "482291", now), _account(home, "two", "551234", now)]
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"accounts": accounts}}},
                 projects=PROJECTS)


def _text(result) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content) + json.dumps(result.structured_content or {})


def test_a_subject_route_takes_the_real_subject_and_counts_tell_no_masked_digit(gateway_home: Path) -> None:
    _home(gateway_home)

    async def play():
        async with serve_client(gateway_home) as client:
            searches = {name: await client.call_tool("search_mail", {"query": "mossword OR login", "account": name})
                        for name in ("one", "two")}
            porch = await client.call_tool("porch", {"open": True})
            ticket = await client.call_tool("read_message", {"address": "mid:ticket-one@example.org"})
            return searches, porch, ticket

    searches, porch, ticket = anyio.run(play)
    for result in (*searches.values(), porch, ticket):
        assert CANARY not in _text(result)
    # The ticket's real subject names ACME-2291 although its masked one reads ACME-[code]: kept, refused by address.
    assert ticket.is_error and "only the person" in _text(ticket)
    # The same counts in both accounts, whatever the code: the message whose code holds 2291 and the one whose
    # code does not are both kept (the label may hide 2291), so no count tells them apart.
    one, two = (searches[n].structured_content for n in ("one", "two"))
    assert one["left_out"] == two["left_out"] == 2
    assert [h["address"] for h in one["hits"]] == ["mid:lunch-one@example.org"]
    assert [h["address"] for h in two["hits"]] == ["mid:lunch-two@example.org"]
    accounts = {a["name"]: a for a in porch.structured_content["accounts"]}
    counted = ("new", "unanswered", "codes", "left_out", "blocked", "set_aside")
    assert [accounts["one"][k] for k in counted] == [accounts["two"][k] for k in counted]
