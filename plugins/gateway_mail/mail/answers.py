"""The reading tools, sioul's names: search_mail, read_message and porch, and the resources giving the same text.

Every list leaves out and counts what the gate keeps (never which); a search counts what it kept out of its whole
scope (account, folder, days) whatever its words. Blocked senders' mail is only counted. Others' words come one
field per line (masked, then cut), a message's text between frame lines carrying this answer's mark.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from gateway import Answer, Context, ToolError, left_out_sentence
from gateway_mail.mail import index, maildir, parse
from gateway_mail.mail.accounts import in_window, next_opening, windows_of
from gateway_mail.mail.limits import MAX_QUERY_CHARACTERS, MAX_QUERY_TERMS
from gateway_mail.mail.shield import SHIELD_REFUSAL
from gateway_mail.mail.store import BLOCKED, CLOSED, JUNK_FOLDERS, SHIELDED, Mail, opened, own_folder
from gateway_mail.shown import shown_path

_TERM = re.compile(r"\w+")
FIELD_LIMIT = 200
MAX_READ = 200_000  # characters of a message's text given by read_message (as read_note gives a note's)
RECIPIENTS_SHOWN = 50  # of a message's To and of its Cc, each: the rest counted ("and 3,000 more")
PORCH_LIST = 10
WAITING_DAYS = 14
CODE_HOURS = 24


def address_of(row: Any, mail: Mail | None = None) -> str:
    """`mid:<Message-ID>`; for a message without one, its file as the person writes it (`~/Mail/...`, never the
    home folder spelled out), which read_message takes back."""
    return f"mid:{row['message_id']}" if row["message_id"] else shown_path(Path(file_of(row, mail)))


def relative_file(row: Any, mail: Mail) -> str:
    """The message's file relative to its account's root (`INBOX/cur/1733...:2,S`), as answers show it: never the
    person's home or user name. Empty when the account is not configured any more."""
    account = mail.account(row["account"])
    path = Path(file_of(row, mail))
    if account is None:
        return ""
    try:
        return str(path.relative_to(account.maildir))
    except ValueError:
        return f"{row['folder']}/{row['sub']}/{row['filename']}"


def file_of(row: Any, mail: Mail | None = None) -> str:
    root = mail.account(row["account"]).maildir if mail and mail.account(row["account"]) else Path("?")
    return str(Path(folder_path(mail, row) if mail else root) / row["sub"] / row["filename"])


def folder_path(mail: Mail | None, row: Any) -> Path:
    account = mail.account(row["account"]) if mail else None
    if account is None:
        return Path("?")
    for folder in maildir.folders(account.maildir):
        if folder.name == row["folder"]:
            return folder.path
    return account.maildir


def _authentication(row: Any) -> str:
    if row["auth"] == parse.FORGED:
        return "FORGED: the account's own server did not authenticate this sender (its From may be false)"
    if row["auth"] == parse.PASS:
        return "authenticated by the account's own server"
    return "not checked (no verdict from the account's own server)"


def _zone(ctx: Context) -> Any:
    """The person's zone (the plugin's `timezone`, else `[gateway] timezone`, else the computer's), read once."""
    from gateway_mail import zone

    return zone.zone_of(ctx.settings, ctx.timezone)


# What a hit shows (and its address, for a message without a Message-ID): the page's rows are read with these
# columns only, not with every recipient and attachment a message's row holds.
HIT_COLUMNS = "id, account, folder, sub, filename, flags, message_id, date, sender, sender_name, subject, auth, encrypted"


# What `one_line` changes: a character some reader takes for a line's end (or another control character), and a
# space followed by another. A field with neither, no space at either end and within its limit is its own one line.
_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]|\s(?=\s)")


def on_one_line(ctx: Context, text: Any, limit: int) -> str:
    """`ctx.one_line(text, limit)`, without its work for a field already on one line (most subjects, senders and
    folders, which the index holds on one line already): the same string either way."""
    if (isinstance(text, str) and text and len(text) <= limit and not text[0].isspace() and not text[-1].isspace()
            and _NOT_ONE_LINE.search(text) is None):
        return text
    return ctx.one_line(text, limit)


def _hit(ctx: Context, row: Any, zone: Any = None) -> dict[str, Any]:
    """One message as lists show it; `zone` the person's (looked up once per answer: finding the computer's reads
    /etc/localtime's link)."""
    hit = {
        "address": address_of(row), "date": parse.timestamp(row["date"], zone or _zone(ctx)), "account": row["account"],
        "folder": on_one_line(ctx, row["folder"], FIELD_LIMIT), "flags": row["flags"],
        "from": on_one_line(ctx, f"{row['sender_name']} <{row['sender']}>" if row["sender_name"] else row["sender"],
                            FIELD_LIMIT),
        "subject": on_one_line(ctx, row["subject"], FIELD_LIMIT),
    }
    if row["auth"] == parse.FORGED:
        hit["forged"] = True
    if row["encrypted"]:
        hit["encrypted"] = True
    return hit


# A character `one_line` keeps as it is (neither a space nor a control): a page's fields joined by it are looked at
# in one search, and no two of them run into a match (a field begins and ends with no space, looked at apart).
_BETWEEN_FIELDS = "|"


# Messages' times as page_hits last wrote them, by date and zone (a zone's rules do not change within a process:
# zoneinfo keeps each zone's rules once read); a datetime made and written out was over a quarter of a hit's cost.
_times: dict[tuple[float, Any], str] = {}
_TIMES_KEPT = 4096


def page_hits(ctx: Context, found: list[tuple[Any, ...]], zone: Any) -> list[dict[str, Any]]:
    """The hits of a page read as plain tuples (columns `HIT_NAMES`), each what `_hit` makes of its row: the page's
    folders, senders and subjects looked at for line ends in one search, not three a hit, and no row made a dict
    first. Any field that is not already its own one line takes `_hit`'s way."""
    hits, fields = [], []
    for (_id, account, folder, sub, filename, flags, message_id, date, sender, sender_name, subject, auth,
         encrypted) in found:
        shown_from = f"{sender_name} <{sender}>" if sender_name else sender
        if message_id:
            address = f"mid:{message_id}"
        else:
            address = address_of({"message_id": message_id, "account": account, "sub": sub, "filename": filename})
        moment = _times.get((date, zone))
        if moment is None:
            if len(_times) >= _TIMES_KEPT:
                _times.clear()
            moment = _times[(date, zone)] = parse.timestamp(date, zone)
        hit = {"address": address, "date": moment, "account": account, "folder": folder,
               "flags": flags, "from": shown_from, "subject": subject}
        if auth == parse.FORGED:
            hit["forged"] = True
        if encrypted:
            hit["encrypted"] = True
        hits.append(hit)
        fields += (folder, shown_from, subject)
    if not _each_on_one_line(fields):
        for hit in hits:
            for key in ("folder", "from", "subject"):
                hit[key] = on_one_line(ctx, hit[key], FIELD_LIMIT)
    return hits


_ONLY_STRINGS = {str}


def _each_on_one_line(fields: list[Any]) -> bool:
    """Whether each of `fields` is what `on_one_line` gives back as it is: a string, not empty, within FIELD_LIMIT,
    with no space at either end, no control character and no two spaces in a row.

    Looked at in a few passes over all of them, each in C: a text str.isprintable() passes holds no control
    character and no space but the ASCII one (every other character `\\s` matches is a control character or a
    separator, which it refuses), so two spaces in a row are "  ", and a field's space at an end is a " " at an end
    of the joined text or beside the `_BETWEEN_FIELDS` joining it. Only when that character stands beside a space
    (inside a field too, "a | b") are the fields' ends looked at one by one; a text not printable takes the
    regular expression."""
    if not fields:
        return True
    if set(map(type, fields)) != _ONLY_STRINGS:
        return False
    lengths = list(map(len, fields))
    if min(lengths) == 0 or max(lengths) > FIELD_LIMIT:
        return False
    joined = _BETWEEN_FIELDS.join(fields)
    if joined.isprintable():
        if "  " in joined or joined[0] == " " or joined[-1] == " ":
            return False
        if f"{_BETWEEN_FIELDS} " not in joined and f" {_BETWEEN_FIELDS}" not in joined:
            return True
        return all(text[0] != " " and text[-1] != " " for text in fields)
    return (all(not text[0].isspace() and not text[-1].isspace() for text in fields)
            and _NOT_ONE_LINE.search(joined) is None)


def _hit_lines(hit: dict[str, Any]) -> list[str]:
    lines = [hit["address"], f"  Date: {hit['date']}", f"  From: {hit['from']}", f"  Subject: {hit['subject']}",
             f"  Folder: {hit['account']}/{hit['folder']}" + (f"  Flags: {hit['flags']}" if hit["flags"] else "")]
    if hit.get("forged"):
        lines.append("  Forged: yes (said so by the account's own server)")
    if hit.get("encrypted"):
        lines.append("  Encrypted: yes (only its envelope is given)")
    return lines


def _counts_lines(left_out: int, blocked: int, shielded: int = 0) -> list[str]:
    lines = [left_out_sentence(left_out, "message")] if left_out else []
    if blocked:
        lines.append(f"{blocked} message{'s' if blocked != 1 else ''} from blocked senders, only counted.")
    if shielded:
        lines.append(SHIELDED_SENTENCE.format(count=shielded, s="s" if shielded != 1 else ""))
    return lines


SHIELDED_SENTENCE = ("{count} message{s} to a shielded address set aside by the person's AI shield (judged hostile, "
                     "or not judged yet), only counted.")


def _check_query(query: str) -> None:
    if not query.strip():
        raise ToolError("query is empty: give a few words (SQLite FTS5 syntax)")
    if len(query) > MAX_QUERY_CHARACTERS:
        raise ToolError(f"query has {len(query)} characters, over the limit of {MAX_QUERY_CHARACTERS}")
    terms = len(_TERM.findall(query))
    if terms > MAX_QUERY_TERMS:
        raise ToolError(f"query has {terms} words, over the limit of {MAX_QUERY_TERMS}")


def _scope(mail: Mail, account: str | None, folder: str | None, days: int | None) -> tuple[str, list[Any]]:
    where, values = ["1"], []
    if account is not None:
        if mail.account(account) is None:
            names = ", ".join(a.name for a in mail.accounts) or "none configured"
            raise ToolError(f"no account named {account!r}; the accounts are: {names}")
        where.append("m.account = ?")
        values.append(account)
    if folder is not None:
        name = folder.strip("/")
        head, _, rest = name.partition("/")
        if rest and mail.account(head) is not None and account in (None, head):
            # Written as the tools print it (`personal/INBOX`): that account's folder.
            if account is None:
                where.append("m.account = ?")
                values.append(head)
            name = rest
        where.append("(m.folder = ? OR m.folder LIKE ? ESCAPE '\\')")
        values += [name, name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"]
    if days is not None:
        where.append("m.date >= ?")
        values.append(time.time() - days * 86400)
    gone = [a.name for a in mail.missing]
    if gone:
        where.append("m.account NOT IN (SELECT value FROM json_each(?))")
        values.append(json.dumps(gone))
    return " AND ".join(where), values


def missing_lines(mail: Mail) -> list[str]:
    """A sentence for each account whose Maildir is not there: its mail is kept in the index, not shown."""
    return [f"The Maildir of account {a.name}, {shown_path(a.maildir)}, does not exist ([plugins.mail] accounts in "
            "the gateway's config): its mail is left out until it is back." for a in mail.missing]




# search_mail counts its matches up to this many; past it, it says "more than" (and `more: true` in its data).
TOTAL_BOUND = 1000

# Counts driven by the kept ids or the blocked senders (CROSS JOIN: those first), each then looked up: their cost
# follows what is kept or blocked, where a scan of the scope (the planner's choice for `m.account = ?`) read
# every message of the account on every call.
COUNT_CLOSED = "SELECT count(*) FROM json_each(?) k CROSS JOIN messages m ON m.id = k.value"
COUNT_BLOCKED = "SELECT count(*) FROM json_each(?) b CROSS JOIN messages m ON m.sender = b.value"
COUNT_SHIELDED = "SELECT count(*) FROM json_each(?) k CROSS JOIN messages m ON m.id = k.value"

# Ids are in date order (index.date_key): FTS5, put first by the CROSS JOIN, walks the matches newest first and
# stops after `limit` shown ones, where sorting every match by date cost more than the search on common words.
# `since` bounds the walk by rowid for `days`; the rows shown are read after, by id. `{kept}` stands for the
# conditions taking out what is kept, blocked and shielded (`LEFT_OUT`).
_SEARCH = ("SELECT m.id FROM messages_fts CROSS JOIN messages m ON m.id = messages_fts.rowid "
           "WHERE messages_fts MATCH ? {since} AND {where}{kept} ORDER BY messages_fts.rowid DESC LIMIT ?")
# A query FTS5 has no part in (`is:unread date:2026-01..`, `NOT word`, a word only in a script without spaces):
# the messages walked newest first by id, each tested, stopping after `limit`.
_SCAN = "SELECT m.id FROM messages m WHERE 1 {since} AND {where}{kept} ORDER BY m.id DESC LIMIT ?"
# The same walk oldest first (`narrowed`: between two ids that hold every match, fewer than FEW_PROBED of them).
_SEARCH_UP = _SEARCH.replace("ORDER BY messages_fts.rowid DESC", "ORDER BY messages_fts.rowid ASC")
# What each walk takes out, in this order, each with its JSON list as a value. A list that is empty takes nothing
# out, so statements() leaves its condition out: SQLite ran each `IN (SELECT value FROM json_each(?))` again for
# every row met (three of them were 0.15-0.2 ms of a rare word's 17 rows, four times what FTS5 took to find them).
LEFT_OUT = (f" AND NOT {CLOSED}", f" AND NOT {BLOCKED}", f" AND NOT {SHIELDED}")
NOTHING = "[]"
# The search's walk with all three (its query plan is checked by the tests).
SEARCH = _SEARCH.replace("{kept}", "".join(LEFT_OUT))
# The page's statement is each walk giving the columns a hit shows: the rows are read where they are met (the
# condition reads them anyway), not looked up again by id in a second statement.
HIT_NAMES = tuple(HIT_COLUMNS.split(", "))
PAGE_COLUMNS = ", ".join(f"m.{column}" for column in HIT_NAMES)
_READ_AGAIN = ('; quote words with symbols ("word-with-dash"), balance parentheses and quotes, put words on both '
               "sides of AND, OR and NOT, or write the query as a notmuch user would (from:, to:, date:2026-01..)")


@frozen
class Search:
    """search_mail's statements for one query: the page (its LIMIT the last value, left for the caller) and the
    total, counted up to TOTAL_BOUND + 1 (its bound already in its values). `sql` gives the page's ids; `page_sql`
    is the same walk giving the columns a hit shows (`HIT_COLUMNS`), so the page is read in one statement."""

    sql: str
    arguments: list[Any]
    count_sql: str
    count_arguments: list[Any]
    page_sql: str = ""
    # The plan's probes (query.probes_of), and the page's statement walking oldest first between two ids, its LIMIT
    # the last value and the two ids to be put in its arguments at `within_at` (see `narrowed`).
    probes: tuple[str, ...] = ()
    within_sql: str = ""
    within_at: int = 0
    # The plan's prefixes (query.prefixes_of), written in the match, its first value (see `expanded`).
    prefixes: tuple[str, ...] = ()


# The total of a query FTS5 answers alone, over every account and with no blocked sender: FTS5's own ids, the kept
# and shielded ones taken out, counted without reading a message's row (every row of `messages_fts` has its
# `messages` row: they are written and removed together). The other queries count the page's statement.
COUNT_MATCHES = "SELECT count(*) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? {since}{kept} LIMIT ?)"
_COUNT_LEFT_OUT = " AND rowid NOT IN (SELECT value FROM json_each(?))"


# Statements already made, by everything they are made from (the total's bound too): only those of a search without
# days and without `date:`, the two whose values follow the clock (a Search is a frozen value, its lists never changed
# by a caller).
_statements: dict[tuple[Any, ...], Search] = {}
_STATEMENTS_KEPT = 256


def statements(zone: Any, query: str, where: str, values: list[Any], days: int | None,
               closed: str, blocked: str, shielded: str = NOTHING) -> Search:
    """search_mail's statements for `query` within the scope `where`/`values` (see `_scope`), with the kept
    (`closed`), blocked and shielded JSON lists; `zone` is the person's, in which dates are read. A list that is
    empty (`NOTHING`) has no condition in them: the same rows, without SQLite's look into it for each row."""
    if days is not None or "date:" in query.lower():
        return _statements_of(zone, query, where, values, days, closed, blocked, shielded)
    key = (zone, query, where, *values, "\x00", closed, blocked, shielded, TOTAL_BOUND)
    found = _statements.get(key)
    if found is None:
        found = _statements_of(zone, query, where, values, days, closed, blocked, shielded)
        if len(_statements) >= _STATEMENTS_KEPT:
            _statements.clear()
        _statements[key] = found
    return found


def _statements_of(zone: Any, query: str, where: str, values: list[Any], days: int | None,
                   closed: str, blocked: str, shielded: str) -> Search:
    from gateway_mail.mail.query import plan

    asked = plan(query, zone)
    since = [t for t in (time.time() - days * 86400 if days is not None else None, asked.since) if t is not None]
    rowid = "messages_fts.rowid" if asked.match is not None else "m.id"
    bounds, bound_values = "", []
    if since:
        bounds += f"AND {rowid} >= ?"
        bound_values.append(index.date_key(max(since)))
    if asked.until is not None:  # a second past the end: the date itself is tested exactly in the condition
        bounds += f" AND {rowid} < ?"
        bound_values.append(index.date_key(asked.until) + (1 << index.SAME_SECOND_BITS))
    matches_alone = asked.match is not None and where == "1" and asked.condition == "1" and blocked == NOTHING
    where = f"{where} AND ({asked.condition})"
    lists = [(condition, value) for condition, value in zip(LEFT_OUT, (closed, blocked, shielded), strict=True)
             if value != NOTHING]
    kept = "".join(condition for condition, _value in lists)
    rest = [*bound_values, *values, *asked.values, *(value for _condition, value in lists)]
    if asked.match is None:
        sql, arguments = _SCAN.format(since=bounds, where=where, kept=kept), rest
    else:
        sql, arguments = _SEARCH.format(since=bounds, where=where, kept=kept), [asked.match, *rest]
    page = sql.replace("SELECT m.id FROM", f"SELECT {PAGE_COLUMNS} FROM", 1)
    narrowing: dict[str, Any] = {"prefixes": asked.prefixes} if asked.match is not None else {}
    if asked.match is not None and asked.probes:
        within = _SEARCH_UP.format(since=f"{bounds} AND {rowid} >= ? AND {rowid} <= ?", where=where, kept=kept)
        narrowing = {"probes": asked.probes, "within_at": 1 + len(bound_values),
                     "within_sql": within.replace("SELECT m.id FROM", f"SELECT {PAGE_COLUMNS} FROM", 1)}
    if matches_alone:
        out = [value for value in (closed, shielded) if value != NOTHING]
        return Search(sql, arguments, COUNT_MATCHES.format(since=bounds, kept=_COUNT_LEFT_OUT * len(out)),
                      [asked.match, *bound_values, *out, TOTAL_BOUND + 1], page, **narrowing)
    return Search(sql, arguments, f"SELECT count(*) FROM ({sql})", [*arguments, TOTAL_BOUND + 1], page, **narrowing)


def statement(zone: Any, query: str, where: str, values: list[Any], days: int | None,
              closed: str, blocked: str, shielded: str = "[]") -> tuple[str, list[Any]]:
    """search_mail's page statement (its LIMIT the last value, left for the caller) and its values."""
    search = statements(zone, query, where, values, days, closed, blocked, shielded)
    return search.sql, search.arguments


# Counts already made (totals, and what a scope keeps, blocks and shields), by the index file and its generation and
# the count's statement and values (the kept, blocked and shielded lists among them): the same search again, on an
# index that has not changed, is not counted again. A value worked out from the clock (days, a relative date) makes
# each call's key its own.
_totals: dict[tuple[Any, ...], int] = {}
_TOTALS_KEPT = 256


def remembered(connection: sqlite3.Connection, generation: tuple[str, int], sql: str, arguments: list[Any]) -> int:
    """A count's value, worked out once per index generation, statement and values."""
    key = (*generation, sql, *arguments)
    found = _totals.get(key)
    if found is None:
        found = connection.execute(sql, arguments).fetchone()[0]
        if len(_totals) >= _TOTALS_KEPT:
            _totals.clear()
        _totals[key] = found
    return found


# A probe matching at most this many messages narrows a search to the ids between its first and its last match.
FEW_PROBED = 64
PROBE = ("SELECT count(*), min(rowid), max(rowid) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
         "LIMIT ?)")
# Whether search_mail takes the shortcuts of `narrowed` and `expanded` (the tests compare each with the long way by
# turning it off).
NARROWING = True
EXPANDING = True
_probed: dict[tuple[Any, ...], tuple[int, int, int]] = {}


def narrowed(connection: sqlite3.Connection, generation: tuple[str, int],
             search: Search) -> list[tuple[Any, ...]] | None:
    """The page of a search whose match is a phrase of several words (an address, a file name) or several words,
    found from its rarest word; None when no probe is rare enough (the long way then).

    FTS5 walks a phrase's words side by side, newest first: `from:example.com` read every message holding `example`
    in any field, and seeking `com` (in nearly every message) back from each cost 2-4 ms to find nothing. Each probe
    (query.probes_of) matches every message the whole match does; the first that matches at most FEW_PROBED
    messages (counted up to one more, oldest first, which stops early on a common word) bounds every match between
    its first and last id. The page's own statement is then run between those ids, oldest first (FTS5's way up is
    the cheap one), every row taken and turned: the same rows, in the same order, as the long way, and all of them,
    so the caller's total is their number. None matching: the page is empty, and the statement is not run. Each
    probe's count and bounds are remembered per index generation, like the totals."""
    for probe in search.probes:
        key = (*generation, probe)
        found = _probed.get(key)
        if found is None:
            found = tuple(connection.execute(PROBE, (probe, FEW_PROBED + 1)).fetchone())
            if len(_probed) >= _TOTALS_KEPT:
                _probed.clear()
            _probed[key] = found
        count, low, high = found
        if count == 0:
            return []
        if count <= FEW_PROBED:
            at = search.within_at
            arguments = [*search.arguments[:at], low, high, *search.arguments[at:], FEW_PROBED + 1]
            cursor = connection.cursor()
            cursor.row_factory = None
            rows = cursor.execute(search.within_sql, arguments).fetchall()
            rows.reverse()
            return rows
    return None


# A prefix standing for at most this many words of the index is asked as their OR (`expanded`).
FEW_WORDS = 8
# The index's words with what FTS5 counts of each, by FTS5's own fts5vocab table (in the connection's temporary
# schema: nothing is written to the index).
WORDS_TABLE = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_words USING fts5vocab(main, messages_fts, row)"
WORDS = "SELECT term FROM temp.messages_words WHERE term >= ? AND term < ? LIMIT ?"
_words: dict[tuple[Any, ...], tuple[str, ...] | None] = {}


def expanded(connection: sqlite3.Connection, generation: tuple[str, int], search: Search) -> Search:
    """`search` with each of its prefixes that stands for at most FEW_WORDS of the index's words written as their OR
    (`"spamass"*` as `("spamass" OR "spamassassin" OR ...)`); `search` itself when none does.

    FTS5 answers a prefix by merging every such word's list of messages into one, in memory, before giving the
    first: `spamass*` (six words, one in 47,302 messages) cost 2.8 ms for a page of 20 whatever its LIMIT, the same
    words as an OR 0.05 ms (an OR of words is walked, not merged). The OR matches exactly the messages the prefix
    does: the prefix is of ASCII letters and digits (FTS5's own token, in lower case), and the words are the index's
    own, read from FTS5's fts5vocab table between the prefix and the prefix with its last character raised by one.
    Reading them costs about what the merge did (fts5vocab counts each word's messages): they are remembered per
    index generation, like the totals."""
    match = search.arguments[0]
    for prefix in search.prefixes:
        key = (*generation, prefix.lower())
        if key not in _words:
            lowered = prefix.lower()
            connection.execute(WORDS_TABLE)
            found = tuple(r[0] for r in connection.execute(
                WORDS, (lowered, lowered[:-1] + chr(ord(lowered[-1]) + 1), FEW_WORDS + 1)))
            if len(_words) >= _TOTALS_KEPT:
                _words.clear()
            # Words of ASCII letters and digits only: each, quoted, is read by FTS5 as that one word again.
            plain = all(word.isascii() and word.isalnum() for word in found)
            _words[key] = found if 0 < len(found) <= FEW_WORDS and plain else None
        words = _words[key]
        if words is not None:
            match = match.replace(f'"{prefix}"*', "(" + " OR ".join(f'"{word}"' for word in words) + ")")
    if match == search.arguments[0]:
        return search
    return evolve(search, arguments=[match, *search.arguments[1:]],
                  count_arguments=[match, *search.count_arguments[1:]])


# Pages already read (the rows of a page statement), by the connection that read them, the index file and its
# generation, the statement, its values and the limit: the same search again on an unchanged index reads no row again
# (its hits are made from the rows as always). Every value the rows follow is in the key: the index's rows by its
# generation (moved on by every write to them, a flag changed too) and by the connection (a file replaced is opened
# anew, and a connection kept here is never another's, since the key holds it); what the gate keeps, blocked senders
# and shielded messages by their lists, which are values of the statement. Searches with `days` or `date:`, whose
# values follow the clock, are not kept (each call's key would be its own). At most PAGES_KEPT pages of at most
# PAGE_ROWS_KEPT rows in all are kept (then all are forgotten). KEEPING_PAGES: whether pages are kept (the tests
# compare each answer with the one read afresh).
_pages: dict[tuple[Any, ...], tuple[tuple[Any, ...], ...]] = {}
_page_rows_kept = 0
PAGES_KEPT = 128
PAGE_ROWS_KEPT = 10_000
KEEPING_PAGES = True


def page_rows(connection: sqlite3.Connection, generation: tuple[str, int], search: Search, limit: int,
              keep: bool = True) -> tuple[tuple[Any, ...], ...]:
    """The page of `search` (its rows as plain tuples, columns `HIT_NAMES`, newest first, at most `limit`), read once
    per index generation and page (see `_pages`) when `keep`."""
    global _page_rows_kept
    key = (connection, *generation, search.page_sql, *search.arguments, limit)
    if keep and KEEPING_PAGES:
        try:
            found = _pages.get(key)
        except TypeError:  # a value that cannot be a key (none of the plan's is): read, not kept
            found, keep = None, False
        if found is not None:
            return found
    cursor = connection.cursor()
    cursor.row_factory = None  # plain tuples, unpacked by page_hits (sqlite3.Row finds a name by comparing names)
    rows = tuple(cursor.execute(search.page_sql, [*search.arguments, limit]).fetchall())
    if keep and KEEPING_PAGES:
        if len(_pages) >= PAGES_KEPT or _page_rows_kept + len(rows) > PAGE_ROWS_KEPT:
            _pages.clear()
            _shown.clear()
            _page_rows_kept = 0
        _pages[key] = rows
        _page_rows_kept += len(rows)
    return rows


# What a kept page shows, by the page's rows (the very tuple `_pages` holds, kept with it, so its id names no other)
# and the zone its dates are written in: its hits (each given as a copy of its own: an answer's data is its own),
# their lines and their addresses, made once from rows that do not change.
_shown: dict[tuple[int, Any], tuple[Any, tuple[dict[str, Any], ...], tuple[str, ...], tuple[str, ...]]] = {}


def shown_hits(ctx: Context, rows: Any, zone: Any, kept: bool = False
               ) -> tuple[list[dict[str, Any]], tuple[str, ...], tuple[str, ...]]:
    """The hits `page_hits` makes of `rows`, their lines and their addresses; made once per page and zone when the
    rows are a page kept (`kept`: `page_rows` gave them from, or put them in, `_pages`)."""
    key = (id(rows), zone)
    made = _shown.get(key) if kept else None
    if made is None or made[0] is not rows:
        hits = page_hits(ctx, rows, zone)
        made = (rows, tuple(hits), tuple(line for hit in hits for line in _hit_lines(hit)),
                tuple(hit["address"] for hit in hits))
        if kept and KEEPING_PAGES:
            if len(_shown) >= PAGES_KEPT:
                _shown.clear()
            _shown[key] = made
        else:
            return hits, made[2], made[3]
    return [dict(hit) for hit in made[1]], made[2], made[3]


def total_of(connection: sqlite3.Connection, generation: tuple[str, int], search: Search) -> int:
    """How many messages `search` matches, counted up to TOTAL_BOUND + 1 (past the bound: more than it)."""
    return remembered(connection, generation, search.count_sql, search.count_arguments)


def search_answer(ctx: Context, query: str, account: str | None, folder: str | None, days: int | None,
                  limit: int) -> Answer:
    """search_mail's answer (the tool is declared in tools.py)."""
    _check_query(query)
    with opened(ctx) as mail:
        where, values = _scope(mail, account, folder, days)
        closed, blocked_json = mail.closed_json, mail.blocked_json
        # What the scope keeps, blocks and shields, whatever the words: remembered like the totals (the same scope
        # on an unchanged index, the same counts).
        left_out = remembered(mail.connection, mail.generation, f"{COUNT_CLOSED} WHERE {where}", [closed, *values])
        blocked = remembered(mail.connection, mail.generation, f"{COUNT_BLOCKED} WHERE {where} AND NOT {CLOSED}",
                             [blocked_json, *values, closed]) if mail.blocked_senders else 0
        shield_json = mail.shield_json
        shielded = remembered(mail.connection, mail.generation,
                              f"{COUNT_SHIELDED} WHERE {where} AND NOT {CLOSED} AND NOT {BLOCKED}",
                              [shield_json, *values, closed, blocked_json]) if mail.shielded.ids else 0
        zone = _zone(ctx)
        search = statements(zone, query, where, values, days, closed, blocked_json, shield_json)
        keep = days is None and "date:" not in query.lower()  # (a search whose values follow the clock is not kept)
        try:
            # Plain tuples, unpacked by page_hits (sqlite3.Row finds a name by comparing it with each column's).
            if search.prefixes and EXPANDING:
                search = expanded(mail.connection, mail.generation, search)
            every = narrowed(mail.connection, mail.generation, search) if search.probes and NARROWING else None
            if every is not None:  # every match, newest first: the page is the first of them, the total their number
                rows, total, more = every[:limit], len(every), False
            else:
                rows = page_rows(mail.connection, mail.generation, search, limit, keep=keep)
                total, more = len(rows), False
            if len(rows) >= limit and every is None:
                # How many match in all, counted up to a bound: past it, "more than" (a common word costs no more).
                counted = total_of(mail.connection, mail.generation, search)
                total, more = min(counted, TOTAL_BOUND), counted > TOTAL_BOUND
        except sqlite3.OperationalError as error:
            if "interrupted" in str(error):
                raise
            # SQLite's own words name its parser's insides: the person is told what to write instead.
            raise ToolError(f"the query cannot be read as a search{_READ_AGAIN}") from error
        hits, hit_lines, given = shown_hits(ctx, rows, zone, kept=keep and every is None)
    scope = ", ".join(p for p in (f"account {account}" if account else "", f"folder {folder}" if folder else "",
                                  f"last {days} days" if days else "") if p) or "all accounts"
    if total == len(hits) and not more:
        lines = [f"{len(hits)} message{'s' if len(hits) != 1 else ''} matching, newest first ({scope})."]
    else:
        lines = [f"{len(hits)} shown of {'more than ' if more else ''}{total:,} messages matching, newest first "
                 f"({scope}); more words, an account, a folder or days narrow it."]
    lines += hit_lines
    lines += _counts_lines(left_out, blocked, shielded)
    lines += missing_lines(mail)
    data = {"order": "newest first", "hits": hits, "total": total, "more": more, "left_out": left_out, "blocked": blocked,
            "unavailable": [a.name for a in mail.missing]}
    if mail.shield_on:
        data["shielded"] = shielded
    return Answer("\n".join(lines), data, given=list(given), left_out=left_out)


def find(mail: Mail, address: str, tool: str = "read_message") -> Any:
    """The index's row for an address (`mid:...` or a message file), after the gate and the blocked list.

    Refusals name nothing: a closed project's message is refused with the gate's sentence. A refused file path is
    said by `tool`, the tool asked (read_message, draft_reply), in its own name.
    """
    address = address.strip()
    if address.startswith("~/"):  # a file as answers show it (address_of): the person's home, then checked
        address = str(Path.home()) + address[1:]
    if address.startswith("mid:"):
        wanted = address[4:].strip().strip("<>")
        rows = mail.connection.execute("SELECT * FROM messages WHERE message_id = ? ORDER BY date DESC",
                                       (wanted,)).fetchall()
        if not rows:  # worded as a kept one: an agent may not learn which ids the closed projects hold
            raise mail.ctx.gate.refused(frozenset(), f"the message {address}")
    else:
        roots = [a.maildir for a in mail.accounts]
        try:
            real = maildir.checked_path(address, roots)
        except maildir.PathRefused as refused:
            raise ToolError(f"{tool} opens message files inside the accounts' mail folders only: this is "
                            f"{refused}. Give a mid: address or a file path search_mail or read_message gave.") from None
        rows = [row for row in mail.connection.execute(
            "SELECT * FROM messages WHERE filename = ?", (real.name,)) if Path(file_of(row, mail)).resolve() == real]
        if not rows:  # worded as a kept one, as for an unknown id
            raise mail.ctx.gate.refused(frozenset(), f"the message {address}")
    owners = frozenset().union(*(mail.owners(row) for row in rows))
    mail.ctx.gate.check_read(owners, f"the message {address}")
    if any(mail.is_blocked(row) for row in rows):
        raise ToolError("this message's sender is on the person's blocked list: its mail is only counted")
    if any(mail.is_shielded(row) for row in rows):
        raise ToolError(SHIELD_REFUSAL)
    return rows[0]


def _envelope(ctx: Context, row: Any, parsed: parse.Parsed, path: str) -> dict[str, Any]:
    shown = _hit(ctx, row)
    shown["file"] = path
    for field, addresses in (("to", parsed.to), ("cc", parsed.cc)):
        shown[field] = [ctx.clip(a, FIELD_LIMIT) for a in addresses[:RECIPIENTS_SHOWN]]
        if len(addresses) > RECIPIENTS_SHOWN:
            shown[f"{field}_more"] = len(addresses) - RECIPIENTS_SHOWN
    shown["authentication"] = _authentication(row)
    return shown


def _listed(shown: dict[str, Any], field: str) -> str:
    more = shown.get(f"{field}_more", 0)
    return ", ".join(shown[field]) + (f" and {more} more" if more else "")


def message_answer(ctx: Context, address: str) -> Answer:
    with opened(ctx) as mail:
        row = find(mail, address)
        path = file_of(row, mail)
        relative = relative_file(row, mail)
        account = mail.account(row["account"])
        # Its projects, for the agent to file what it makes of it there: all open, or it would not be given.
        projects = sorted(p for p in mail.owners(row) if (found := ctx.gate.project(p)) is not None and found.ai)
    try:
        parsed = parse.parse_file(Path(path), account.authserv_id if account else "")
    except OSError as error:
        raise ToolError("the message's file moved or vanished since it was indexed; search again") from error
    shown = _envelope(ctx, row, parsed, relative)
    lines = [f"Address: {shown['address']}", f"File: {relative} (in the account's mail folder)",
             f"Account: {shown['account']}",
             f"Folder: {shown['folder']}", f"Flags: {shown['flags'] or '(none)'}", f"Date: {shown['date']}",
             f"From: {shown['from']}", f"To: {_listed(shown, 'to')}"]
    if shown["cc"]:
        lines.append(f"Cc: {_listed(shown, 'cc')}")
    lines += [f"Subject: {shown['subject']}", f"Authentication: {shown['authentication']}"]
    shown["projects"] = projects
    if projects:
        lines.append(f"Projects: {', '.join(projects)} (file a task made from it there: add_task project)")
    if parsed.encrypted:
        lines.append("Encrypted: yes. This message is encrypted (PGP/MIME or S/MIME): only its envelope is given.")
        return Answer("\n".join(lines), {**shown, "encrypted": True}, given=[shown["address"]])
    attachments = [{"part": number, "name": parse.attachment_name(a.name), "type": ctx.one_line(a.type, 80),
                    "size": a.size} for number, a in enumerate(parsed.attachments, 1)]
    for attachment in attachments:
        lines.append(f"Attachment {attachment['part']}: {attachment['name']} ({attachment['type']}, "
                     f"{attachment['size']} bytes)")
    if attachments:
        lines.append("Read an attachment's text with read_attachment (this address and its number).")
    if parsed.unreadable:
        lines.append(f"Read in part: {parsed.unreadable}.")
    shown_text = parse.masked(parsed, MAX_READ)
    if shown_text.cut:
        lines.append(f"Cut: only the first {MAX_READ} characters are given.")
    lines.append(ctx.frame(shown_text.text))
    data = {**shown, "attachments": attachments, "text": shown_text.text}
    if parsed.unreadable:
        data["unreadable"] = parsed.unreadable
    if shown_text.cut:
        data["cut"] = True
    return Answer("\n".join(lines), data, given=[shown["address"]])


def attachment_answer(ctx: Context, address: str, part: int) -> Answer:
    """read_attachment's answer: under the gate exactly as read_message (`find`), then the part's text read within
    `attachments.READ` and the call's deadline, masked with the message's subject and framed as a message's text."""
    from gateway_mail.mail import attachments

    with opened(ctx) as mail:
        row = find(mail, address, "read_attachment")
        path = file_of(row, mail)
        account = mail.account(row["account"])
    try:
        parsed = parse.parse_file(Path(path), account.authserv_id if account else "")
    except OSError as error:
        raise ToolError("the message's file moved or vanished since it was indexed; search again") from error
    shown_address = address_of(row)
    if parsed.encrypted:
        raise ToolError("this message is encrypted (PGP/MIME or S/MIME): its attachments cannot be read here")
    count = len(parsed.attachments)
    if not 1 <= part <= count:
        raise ToolError(f"this message has {count} attachment{'s' if count != 1 else ''}"
                        + (f": give a part from 1 to {count}, as read_message numbers them" if count else ""))
    attachment = parsed.attachments[part - 1]
    name, kind = parse.attachment_name(attachment.name), ctx.one_line(attachment.type, 80)
    data: dict[str, Any] = {"address": shown_address, "part": part, "name": name, "type": kind,
                            "size": attachment.size}
    lines = [f"Address: {shown_address}", f"Attachment {part} of {count}: {name}",
             f"Type: {kind}", f"Size: {attachment.size} bytes"]
    if parsed.unreadable:
        lines.append(f"Read in part: {parsed.unreadable}.")
        data["unreadable"] = parsed.unreadable
    found = attachments.extract(attachment.part, attachment.name, attachment.type, attachments.READ,
                                zone=_zone(ctx), deadline=ctx.deadline)
    if not found.kind:
        lines.append("Its text is not read: read_attachment reads PDF, Word (.docx), Excel (.xlsx), OpenDocument, "
                     "iCalendar (.ics), text and attached messages; this one is given by its name, type and size.")
        return Answer("\n".join(lines), {**data, "read": False}, given=[shown_address])
    text, cut = attachments.masked_text(parsed, found.text, attachments.READ.characters)
    lines.append(f"Read as: {found.kind}")
    data.update(read=True, kind=found.kind, text=text)
    if found.note:
        lines.append(f"Note: {found.note}.")
        data["note"] = found.note
    if cut:
        lines.append(f"Cut: only the first {attachments.READ.characters} characters are given.")
        data["cut"] = True
    if text.strip() or not found.note:
        lines.append(ctx.frame(text))
    return Answer("\n".join(lines), data, given=[shown_address])


def _porch_item(ctx: Context, row: Any, zone: Any = None) -> dict[str, Any]:
    hit = _hit(ctx, row, zone)
    return {key: hit[key] for key in ("address", "date", "account", "folder", "from", "subject")}


def _porch_counts(mail: Mail, account: str) -> dict[str, Any]:
    """One account's lists and counts, each one SQL query over the index (the Porch stays fast on big stores)."""
    connection, closed, blocked, shielded = mail.connection, mail.closed_json, mail.blocked_json, mail.shield_json
    # The folders the refresh recorded (its `dirs` table: a few rows, where DISTINCT over messages reads them all).
    folders = sorted({r[0].split("\x1f")[1] for r in connection.execute(
        "SELECT path FROM dirs WHERE substr(path, 1, ?) = ?", (len(account) + 1, account + "\x1f"))})
    junk = json.dumps([f for f in folders if f.rpartition("/")[2].lower() in JUNK_FOLDERS])
    own = json.dumps([f for f in folders if own_folder(f)])
    shown = f"m.account = ? AND NOT {CLOSED} AND NOT {BLOCKED} AND NOT {SHIELDED}"
    aside = f"(m.auth = '{parse.FORGED}' OR m.folder IN (SELECT value FROM json_each(?)))"
    porch = f"{shown} AND NOT {aside} AND m.folder NOT IN (SELECT value FROM json_each(?))"
    base = [account, closed, blocked, shielded, junk, own]
    now = time.time()
    mine = mail.account(account)
    addresses = json.dumps([a.lower() for a in mine.addresses] if mine else [])
    queries = {
        "new": (f"{porch} AND instr(m.flags, 'S') = 0", []),
        "unanswered": (f"{porch} AND instr(m.flags, 'S') > 0 AND instr(m.flags, 'R') = 0 AND m.bulk = 0 "
                       "AND m.date >= ? AND m.sender NOT IN (SELECT value FROM json_each(?))",
                       [now - WAITING_DAYS * 86400, addresses]),
        "codes": (f"{porch} AND m.code = 1 AND m.date >= ?", [now - CODE_HOURS * 3600]),
    }
    found: dict[str, Any] = {}
    for name, (where, extra) in queries.items():
        found[name] = connection.execute(f"SELECT count(*) FROM messages m WHERE {where}",
                                         [*base, *extra]).fetchone()[0]
        found[f"{name}_rows"] = connection.execute(
            f"SELECT m.* FROM messages m WHERE {where} ORDER BY m.date DESC LIMIT {PORCH_LIST}",
            [*base, *extra]).fetchall()
    # The gate's count, once per index generation (a lookup per closed message: 6 ms at 1,800 of 100,000).
    found["left_out"] = remembered(connection, mail.generation, f"{COUNT_CLOSED} WHERE m.account = ?", [closed, account])
    found["blocked"] = connection.execute(f"{COUNT_BLOCKED} WHERE m.account = ? AND NOT {CLOSED}",
                                          (blocked, account, closed)).fetchone()[0] if mail.blocked_senders else 0
    # Two counts, each on an index (an OR of the two would read every message of the account).
    found["set_aside"] = sum(connection.execute(f"SELECT count(*) FROM messages m WHERE {shown} AND {extra}",
                                                (account, closed, blocked, shielded, junk)).fetchone()[0] for extra in (
        "m.folder IN (SELECT value FROM json_each(?))",
        f"m.auth = '{parse.FORGED}' AND m.folder NOT IN (SELECT value FROM json_each(?))"))
    # The AI shield's (hostile mail to a shielded address, or such mail not judged yet): set aside too.
    found["shielded"] = connection.execute(
        f"{COUNT_SHIELDED} WHERE m.account = ? AND NOT {CLOSED} AND NOT {BLOCKED}",
        (shielded, account, closed, blocked)).fetchone()[0] if mail.shielded.ids else 0
    found["set_aside"] += found["shielded"]
    return found


def porch_answer(ctx: Context, open: bool = False) -> Answer:  # noqa: A002 - sioul's argument name
    windows = windows_of(ctx.settings.get("admin_windows", []))
    now = datetime.now().astimezone()
    inside = in_window(windows, now.replace(tzinfo=None))
    full = inside or open
    accounts_data, lines, given, total_left_out = [], [], [], 0
    with opened(ctx) as mail:
        lines += missing_lines(mail)
        for account in mail.accounts:
            if account in mail.missing:
                continue
            found = _porch_counts(mail, account.name)
            total_left_out += found["left_out"]
            entry: dict[str, Any] = {"name": account.name, **{k: found[k] for k in (
                "new", "unanswered", "codes", "left_out", "blocked", "set_aside")}}
            codes = found["codes"]
            aside = "forged, junk, or to a shielded address and not judged safe" if mail.shield_on else "forged or junk"
            if mail.shield_on:
                entry["shielded"] = found["shielded"]
            lines.append(f"{account.name}: {found['new']} new, {found['unanswered']} waiting for an answer, "
                         f"{codes} code{'s' if codes != 1 else ''} arrived, {found['left_out']} left out, "
                         f"{found['blocked']} from blocked senders, {found['set_aside']} set aside ({aside}).")
            if full:
                zone = _zone(ctx)
                entry["new_messages"] = [_porch_item(ctx, r, zone) for r in found["new_rows"]]
                entry["unanswered_messages"] = [_porch_item(ctx, r, zone) for r in found["unanswered_rows"]]
                entry["code_messages"] = [{"from": _hit(ctx, r, zone)["from"], "date": parse.timestamp(r["date"], zone)}
                                          for r in found["codes_rows"]]
                for title, items in (("New", entry["new_messages"]),
                                     ("Waiting for an answer", entry["unanswered_messages"])):
                    if items:
                        lines.append(f"  {title}:")
                        for item in items:
                            lines += [f"    {item['address']}", f"      Date: {item['date']}",
                                      f"      From: {item['from']}", f"      Subject: {item['subject']}"]
                            given.append(item["address"])
                for item in entry["code_messages"]:
                    lines.append(f"  A code arrived from {item['from']} at {item['date']} (the code is never given).")
            accounts_data.append(entry)
        configured = bool(mail.accounts)
    if not configured:
        lines.append("No mail account is configured: [plugins.mail] accounts in the gateway's config.")
    header = "The Porch: what came and what waits."
    window: dict[str, Any] = {"inside": inside, "windows": list(ctx.settings.get("admin_windows", []))}
    if not inside:
        opening = next_opening(windows, now.replace(tzinfo=None))
        window["next_opens"] = opening.strftime("%H:%M") if opening else ""
        if open:
            header += f" Outside the person's admin windows (next opens at {window['next_opens']}), opened as asked."
        else:
            header += (f" Outside the person's admin windows: counts only, the next window opens at "
                       f"{window['next_opens']}. Respect it unless the person asks (porch with open: true).")
    lines.insert(0, header)
    if total_left_out:
        lines.append(left_out_sentence(total_left_out, "message"))
    data = {"window": window, "full": full, "accounts": accounts_data}
    return Answer("\n".join(lines), data, given=given, left_out=total_left_out)
