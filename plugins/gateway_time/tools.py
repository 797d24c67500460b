"""The two tools: the time tracked (`time_spent`) and the invoices (`invoices`).

Each thing is given to the gate by its traits (`gateway_time.described`); what the gate keeps is left out and
counted, never named. A total over a period leaves a kept interval's hours out and says that something was left
out. The count of what was left out covers the whole scope asked (the period, the status), whatever the
`project` or `query` words, so that a count cannot tell whether a closed project's things hold a word.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from gateway import Answer, Context, GateMemo, ToolError, computer_zone, left_out_sentence, plural, tool

# The modules that read the things (`described`, `invoices`, `timewarrior`) are imported by the tools when they run:
# a start lists the tools without them.

if TYPE_CHECKING:
    import sqlite3

MAX_ROWS = 400
# Per (data file, tags, annotation): whether an agent may have the interval, and the projects it belongs to.
_interval_verdicts: GateMemo[dict[tuple[str, str, str], tuple[bool, frozenset[str]]]] = GateMemo(dict, gates=4)
_invoice_verdicts: GateMemo[dict[str, bool]] = GateMemo(dict, gates=4)
TYPES = {"381": "credit note", "384": "corrected invoice", "386": "prepayment invoice", "389": "self-billed invoice"}


def _zone(ctx: Context) -> Any:
    name = str(ctx.settings.get("timezone") or ctx.timezone or "")
    if name:
        with contextlib.suppress(KeyError, ValueError, OSError):
            return ZoneInfo(name)
    return computer_zone()


@contextlib.contextmanager
def _connection(ctx: Context) -> Iterator[sqlite3.Connection]:
    from gateway_time import store

    connection = store.connect(ctx)
    try:
        with ctx.interruptible(connection):
            yield connection
    finally:
        connection.close()


def _unread(connection: sqlite3.Connection, kind: str) -> tuple[int, int]:
    """How many files of this kind could not be read, and how many malformed lines were skipped."""
    row = connection.execute("SELECT SUM(error != ''), SUM(malformed) FROM files WHERE kind = ?", (kind,)).fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def _hours(seconds: float) -> str:
    minutes = int(round(seconds / 60))
    return f"{minutes // 60}:{minutes % 60:02d} ({seconds / 3600:.2f} h)"


def _day_bounds(day: date, zone: Any) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp())


def _pieces(start: int, end: int, zone: Any) -> Iterator[tuple[date, int]]:
    """An interval cut at each midnight of the zone: (day, seconds) for each day it touches."""
    at = start
    while at < end:
        day = datetime.fromtimestamp(at, zone).date()
        midnight = _day_bounds(day + timedelta(days=1), zone)
        stop = min(end, midnight)
        yield day, stop - at
        at = stop


def _matches(project: str, tags: list[str]) -> bool:
    wanted = project.strip().casefold()
    return any(t.casefold() == wanted or t.casefold() == f"project:{wanted}" for t in tags)


@tool(read_only=True, title="Time spent")
def time_spent(
    ctx: Context,
    project: Annotated[str | None, Field(max_length=200, description="only the time tagged with this project's id "
                                         "or tag (a tag equal to it, or project:<it>)")] = None,
    since: Annotated[date | None, "the first day (default: six days before until)"] = None,
    until: Annotated[date | None, "the last day, included (default: today)"] = None,
    by: Annotated[Literal["total", "day"], "hours in total per tag, or per day and tag"] = "total",
) -> Answer:
    """The hours tracked with timewarrior over a period, per project and per tag, in total or per day, the
    interval running now said as running. An interval counts towards each of its tags and projects; the total
    counts it once. Time kept from agents is left out of every figure and counted."""
    from gateway_time import described
    from gateway_time.timewarrior import stamp

    zone = _zone(ctx)
    today = datetime.now(zone).date()
    last = until or today
    first = since or (last - timedelta(days=6))
    if first > last:
        raise ToolError(f"since ({first}) is after until ({last}): give the first day, then the last")
    if (last - first).days > 3660:
        raise ToolError("a period of at most ten years: give a later since or an earlier until")
    low, high = _day_bounds(first, zone), _day_bounds(last + timedelta(days=1), zone)
    now = int(datetime.now(UTC).timestamp())
    with _connection(ctx) as connection:
        from gateway_time import store

        verdicts = _interval_verdicts.of(ctx.gate, (str(ctx.folders.cache), store.generation(connection)))
        rows = connection.execute(
            'SELECT i.start, i."end", i.tags, i.annotation, f.path FROM intervals i JOIN files f ON f.id = i.file '
            'WHERE i.start < ? AND (i."end" IS NULL OR i."end" > ?) ORDER BY i.start', (high, low)).fetchall()
        unread_files, malformed = _unread(connection, "time")
        any_file = connection.execute("SELECT 1 FROM files WHERE kind = 'time' LIMIT 1").fetchone() is not None
    gate = ctx.gate
    left_out = 0
    total = 0
    counted = 0
    by_tag: dict[str, int] = defaultdict(int)
    by_project: dict[str, int] = defaultdict(int)
    by_day: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    day_total: dict[date, int] = defaultdict(int)
    running: list[dict[str, Any]] = []
    parsed: dict[str, list[str]] = {}  # a few tag sets, written once each
    for row in rows:
        tags = parsed.get(row["tags"])
        if tags is None:
            tags = parsed[row["tags"]] = json.loads(row["tags"])
        key = (row["path"], row["tags"], row["annotation"])
        verdict = verdicts.get(key)
        if verdict is None:
            owners = gate.owners(described.interval_traits(row["path"], tags, row["annotation"]))
            verdict = verdicts[key] = (gate.allows(owners), owners)
        allowed, owners = verdict
        if not allowed:
            left_out += 1
            continue
        if project and not _matches(project, tags):
            continue
        end = row["end"] if row["end"] is not None else now
        start, stop = max(row["start"], low), min(end, high)
        if row["end"] is None and row["start"] <= now:
            running.append({"since": datetime.fromtimestamp(row["start"], zone).strftime("%Y-%m-%d %H:%M"),
                            "tags": tags, "seconds": max(0, now - row["start"]),
                            "address": f"{described.INTERVAL}{stamp(row['start'])}"})
        if stop <= start:
            continue
        counted += 1
        total += stop - start
        names = tags or ["(no tag)"]
        for tag in names:
            by_tag[tag] += stop - start
        for owner in owners:
            by_project[owner] += stop - start
        if by == "day":
            for day, seconds in _pieces(start, stop, zone):
                day_total[day] += seconds
                for tag in names:
                    by_day[day][tag] += seconds
    zone_name = getattr(zone, "key", None) or datetime.now(zone).tzname() or "local time"
    scope = " with the project or tag asked" if project else ""  # the agent's word is not said back
    lines = [f"Time tracked{scope} from {first} to {last} ({zone_name}): {_hours(total)} in "
             f"{plural(counted, 'interval')}."]
    for run in running:
        tags = ", ".join(ctx.one_line(t, 80) for t in run["tags"]) or "no tag"
        lines.append(f"Running now: since {run['since']} ({_hours(run['seconds'])} so far), {tags}.")
    if by_project:
        lines.append("By project: " + ", ".join(f"{ctx.one_line(p, 80)} {_hours(s)}" for p, s in
                                                sorted(by_project.items(), key=lambda kv: (-kv[1], kv[0]))) + ".")
    cut = 0
    if by == "total":
        ordered = sorted(by_tag.items(), key=lambda kv: (-kv[1], kv[0]))
        cut = max(0, len(ordered) - MAX_ROWS)
        lines += [f"  {ctx.one_line(tag, 80)}  {_hours(seconds)}" for tag, seconds in ordered[:MAX_ROWS]]
    else:
        days = sorted(day_total)
        cut = max(0, len(days) - MAX_ROWS)
        for day in days[:MAX_ROWS]:
            tags = sorted(by_day[day].items(), key=lambda kv: (-kv[1], kv[0]))
            parts = ", ".join(f"{ctx.one_line(t, 60)} {_hours(s).split(' ')[0]}" for t, s in tags[:20])
            more = f", and {plural(len(tags) - 20, 'tag')} more" if len(tags) > 20 else ""
            lines.append(f"  {day}  {_hours(day_total[day])}: {parts}{more}")
    if cut:
        lines.append(f"({plural(cut, 'row')} more not shown: ask for a shorter period)")
    lines += [s for s in (
        left_out_sentence(left_out, "interval"),
        f"{plural(malformed, 'malformed line')} of the timewarrior data skipped (gateway doctor names them)."
        if malformed else "",
        f"{plural(unread_files, 'timewarrior data file')} could not be read (gateway doctor names them)."
        if unread_files else "",
        "" if any_file else "No timewarrior data found: the person tracks time with timewarrior, or sets "
        "timewarrior in [plugins.time] to its database folder.",
    ) if s]
    data = {"since": first.isoformat(), "until": last.isoformat(), "timezone": zone_name,
            "total_hours": round(total / 3600, 2), "intervals": counted, "running": running,
            "left_out": left_out, "malformed_lines": malformed,
            "projects": [{"project": p, "hours": round(s / 3600, 2)} for p, s in sorted(by_project.items())]}
    if by == "total":
        data["tags"] = [{"tag": t, "hours": round(s / 3600, 2)} for t, s in sorted(by_tag.items())]
    else:
        data["days"] = [{"day": d.isoformat(), "hours": round(day_total[d] / 3600, 2),
                         "tags": [{"tag": t, "hours": round(s / 3600, 2)} for t, s in sorted(by_day[d].items())]}
                        for d in sorted(day_total)[:MAX_ROWS]]
    return Answer("\n".join(lines), data=data, left_out=left_out,
                  given=tuple(run["address"] for run in running))


def _money(value: str, currency: str) -> str:
    from gateway_time.invoices import amount

    number = amount(value)
    if number is None:
        return "no amount"
    return f"{number:,.2f} {currency}".strip()


@tool(read_only=True, title="Invoices")
def invoices(
    ctx: Context,
    status: Annotated[Literal["unpaid", "overdue", "paid", "all"],
                      Field(description="unpaid (overdue ones among them), overdue, paid or all")] = "unpaid",
    query: Annotated[str | None, Field(max_length=200, description="only invoices whose number, parties or "
                                       "references hold all these words")] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="how many invoices at most")] = 50,
) -> Answer:
    """The person's Factur-X / ZUGFeRD invoices (PDFs in their invoices folder): number, parties, total, issue
    and due dates, and whether each is unpaid, overdue or paid. Unpaid and overdue come soonest due first; paid
    and all, latest issued first. Invoices kept from agents are left out and counted."""
    from gateway_time import described
    from gateway_time import invoices as invoice_files
    from gateway_time.invoices import amount

    zone = _zone(ctx)
    today = datetime.now(zone).date()
    folder = ctx.path_setting("invoices")
    paid_folder = str(ctx.settings.get("paid_folder") or "")
    with _connection(ctx) as connection:
        from gateway_time import store

        generation = (str(ctx.folders.cache), store.generation(connection))
        found = _catalogue(connection, generation, folder, paid_folder)
        verdicts = _invoice_verdicts.of(ctx.gate, generation)
        unread, _malformed = _unread(connection, "invoice")
    gate = ctx.gate
    words = [w.casefold() for w in (query or "").split()]
    picked: list[tuple[str, dict[str, Any], str]] = []
    left_out = 0
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for key, (paths, fields, paid, haystack) in found.items():
        state = invoice_files.status(fields, paid, today)
        if status == "unpaid" and state == "paid":
            continue
        if status in ("overdue", "paid") and state != status:
            continue
        allowed = verdicts.get(key)
        if allowed is None:
            allowed = verdicts[key] = gate.allows(gate.owners(described.invoice_traits(paths, fields)))
        if not allowed:
            left_out += 1
            continue
        if words and not all(w in haystack for w in words):
            continue
        picked.append((key, fields, state))
        if state != "paid":
            owed = amount(fields.get("amount_due", "")) or amount(fields.get("total", "")) or Decimal(0)
            sums[ctx.one_line(fields.get("currency", ""), 8)] += owed
    if status in ("unpaid", "overdue"):
        picked.sort(key=lambda p: (p[1].get("due") or "9999-99-99", p[1].get("issued", ""), p[1].get("number", "")))
    else:
        picked.sort(key=lambda p: (p[1].get("issued", ""), p[1].get("number", "")), reverse=True)
    shown = [_shown(ctx, key, fields, state, today) for key, fields, state in picked[:limit]]
    more = max(0, len(picked) - limit)
    chosen = picked
    noun = {"unpaid": "unpaid invoice", "overdue": "overdue invoice", "paid": "paid invoice", "all": "invoice"}
    overdue = sum(1 for _key, _fields, state in chosen if state == "overdue")
    late = f" ({overdue} overdue)" if status == "unpaid" and overdue else ""
    order = "the soonest due first" if status in ("unpaid", "overdue") else "the latest first"
    lines = [f"{plural(len(chosen), noun[status])}{late}, {order}:" if chosen
             else f"(no {noun[status]})"]
    for i in shown:
        due = f", due {i['due']}" if i["due"] else ", no due date"
        late_by = f" by {plural(i['days_late'], 'day')}" if i["status"] == "overdue" else ""
        kind = f" ({i['kind']})" if i["kind"] != "invoice" else ""
        pay = f"  pay to {i['account']}" if i["account"] and i["status"] != "paid" else ""
        lines.append(f"{i['address']}  {i['number'] or '(no number)'}{kind}  {i['seller'] or '?'} → "
                     f"{i['buyer'] or '?'}  {i['total_text']}  issued {i['issued'] or '?'}{due}  "
                     f"{i['status']}{late_by}{pay}")
    if more:
        lines.append(f"({plural(more, 'invoice')} more not shown: give a higher limit, up to 200)")
    if sums and status in ("unpaid", "overdue"):
        lines.append("Left to pay: " + ", ".join(_money(str(v), c) for c, v in sorted(sums.items())) + ".")
    lines += [s for s in (
        left_out_sentence(left_out, "invoice"),
        f"{plural(unread, 'invoice file')} could not be read (gateway doctor names them)." if unread else "",
        "" if folder is not None and folder.is_dir() else
        f"No invoices folder at {folder}: the person keeps their Factur-X PDFs there, or sets invoices in "
        "[plugins.time].",
    ) if s]
    data = {"status": status, "invoices": shown, "more": more, "left_out": left_out, "unread_files": unread,
            "left_to_pay": {c: str(v) for c, v in sorted(sums.items())}}
    return Answer("\n".join(lines), data=data, left_out=left_out, given=tuple(i["address"] for i in shown))


_catalogues: dict[tuple, dict[str, tuple[list[str], dict[str, Any], bool, str]]] = {}


def _catalogue(connection: sqlite3.Connection, generation: tuple, folder: Path | None,
               paid_folder: str) -> dict[str, tuple[list[str], dict[str, Any], bool, str]]:
    """Each invoice once, with the paths of its copies, its fields, whether a copy is in the paid folder and its
    words for a query: read from the store once per generation of it (the store is read again only when a file
    changed)."""
    key = (generation, str(folder), paid_folder)
    found = _catalogues.get(key)
    if found is None:
        from gateway_time import described
        from gateway_time.invoices import in_paid_folder

        found = {}
        for invoice, (paths, fields) in described.invoices_by_key(connection).items():
            paid = any(in_paid_folder(Path(p), folder or Path(p).parent, paid_folder) for p in paths)
            found[invoice] = (paths, fields, paid, " ".join(_flat(fields)).casefold())
        if len(_catalogues) > 4:
            _catalogues.clear()
        _catalogues[key] = found
    return found


def _flat(fields: dict[str, Any]) -> Iterator[str]:
    for value in fields.values():
        if isinstance(value, dict):
            yield from _flat(value)
        else:
            yield str(value)


def _shown(ctx: Context, key: str, fields: dict[str, Any], state: str, today: date) -> dict[str, Any]:
    from gateway_time import described

    currency = ctx.one_line(fields.get("currency", ""), 8)
    due = fields.get("due", "")
    days_late = 0
    if state == "overdue":
        with contextlib.suppress(ValueError):
            days_late = (today - date.fromisoformat(due)).days
    seller, buyer = fields.get("seller") or {}, fields.get("buyer") or {}
    return {
        "address": f"{described.INVOICE}{key}",
        "number": ctx.one_line(fields.get("number", ""), 80),
        "kind": TYPES.get(str(fields.get("type", "")), "invoice"),
        "issued": fields.get("issued", ""),
        "due": due,
        "status": state,
        "days_late": days_late,
        "seller": ctx.one_line(seller.get("name", ""), 80),
        "buyer": ctx.one_line(buyer.get("name", ""), 80),
        "total": fields.get("total", ""),
        "amount_due": fields.get("amount_due", ""),
        "currency": currency,
        "total_text": _money(fields.get("total", ""), currency),
        "account": ctx.one_line(fields.get("account", ""), 80),
        "terms": ctx.one_line(fields.get("terms", ""), 160),
        "references": {k: ctx.one_line(fields.get(k, ""), 80) for k in described.REFERENCES if fields.get(k)},
    }


TOOLS = [time_spent, invoices]
