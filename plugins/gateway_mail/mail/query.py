"""search_mail's query language: what a notmuch user types (and FTS5's own syntax), read into SQL over the index.

A query is read as notmuch reads it (its `notmuch-search-terms` manual), in the part the index can answer:

- words, `"quoted phrases"` and `word*` are searched in every field (subject, sender, text, To, Cc, List-Id and
  attachment names); a word FTS5 would not take bare (an address, a file name, `ACME-2291`) is the phrase of
  its words;
- `from:`, `to:` (To and Cc, as notmuch's `to:` means any recipient), `cc:` (Cc only, as mu's), `subject:`,
  `body:`, `list:` (the List-Id header) and `attachment:` (an attachment's file name) search one field;
- `date:<since>..<until>`, `date:<since>..`, `date:..<until>` and `date:<expr>` (that whole day, month or year),
  with the forms listed in `date_interval`, bounded in the person's time zone;
- `is:` and `tag:` with the tags notmuch keeps from the Maildir flags: `unread` (no S), `flagged` (F),
  `replied` or `answered` (R), `draft` (D) and `passed` (P); `id:` (a Message-ID); `*` alone (every message);
- `AND`, `OR`, `NOT`, `XOR` in any case (as notmuch takes them), `-word` for `NOT word`, parentheses; terms
  side by side are all required.

A query using `NEAR` or FTS5's column sets (`{subject body}: ...`) is FTS5 syntax only and given to FTS5 as it is.
Other notmuch prefixes (`folder:`, `path:`, `thread:`, `mimetype:`, tags the Maildir flags do not keep) are
answered with a sentence saying what search_mail takes instead.

Text in scripts written without spaces (Japanese, Chinese, and Korean) is one long token to FTS5's `unicode61`
tokenizer, so a word inside a run was never found. Each message's words holding such characters are also kept in
a side table with FTS5's `trigram` tokenizer (`messages_cjk`, see index.py); a query word holding them is looked
up there, as a substring: by the trigram index when it has three characters or more, by LIKE over the side table
(which holds only those messages' such words) when it has one or two.

The result is a `Plan`: an FTS5 MATCH string for what FTS5 can answer alone (walked newest first by rowid, as
before), plus an SQL condition for the rest (dates, flags, side-table look-ups, negations FTS5 cannot say).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, tzinfo
from typing import Any

from attrs import frozen

from gateway import ToolError

# What each prefix searches: FTS5 columns of messages_fts (the side table has the same names).
COLUMNS: dict[str, tuple[str, ...]] = {
    "from": ("sender",), "sender": ("sender",), "subject": ("subject",), "body": ("body",),
    "to": ("recipients", "cc"), "cc": ("cc",), "list": ("list",), "attachment": ("attachment",),
}
# Tags notmuch keeps in step with the Maildir flags (its `synchronize_flags`): the flag, and whether it is absent.
FLAG_TAGS: dict[str, tuple[str, bool]] = {
    "unread": ("S", True), "flagged": ("F", False), "replied": ("R", False), "answered": ("R", False),
    "draft": ("D", False), "passed": ("P", False), "read": ("S", False), "seen": ("S", False),
}
_PREFIX_KEYS = {**{name: name for name in COLUMNS}, "sender": "from", "date": "date", "is": "tag", "tag": "tag",
                "id": "id"}
# Flags with a partial index in index.py (messages_unseen, messages_flagged, messages_answered): few messages, read
# from their index once; a query holding one is walked from them (see `plan`), not from its words' matches.
_INDEXED_FLAGS = {("S", True), ("F", False), ("R", False)}
NOT_SEARCHABLE = ("bcc", "folder", "path", "thread", "mimetype", "lastmod", "query", "property", "sexp", "mid")
TAKES = ("search_mail takes words, from:, to:, cc:, subject:, body:, list:, attachment:, date:, is:unread, "
         "is:flagged, is:answered, id:, AND/OR/NOT and parentheses, with account, folder and days to narrow")

# Hiragana, katakana, CJK ideographs (and their extensions, compatibility forms), Hangul, half-width katakana.
CJK_CHARACTERS = ("\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                  "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f")
CJK = re.compile(f"[{CJK_CHARACTERS}]")
_CJK_WORD = re.compile(rf"\w*[{CJK_CHARACTERS}]\w*")
MAX_CJK_CHARACTERS = 100_000  # of one field's such words kept in the side table


def cjk_words(text: str) -> str:
    """The words of `text` holding a character of a script written without spaces, one space between them ("" when
    none: the common case costs one scan)."""
    if not CJK.search(text):
        return ""
    return " ".join(_CJK_WORD.findall(text))[:MAX_CJK_CHARACTERS]


# ---- the tree ----------------------------------------------------------------------------------------------------

@frozen
class Text:
    """A phrase (or prefix) FTS5 finds: `item` is `"words"` or `"word"*`; `columns` () means every column."""

    item: str
    columns: tuple[str, ...] = ()


@frozen
class Cjk:
    """Text holding characters of scripts without spaces, found as a substring in the side table."""

    text: str
    columns: tuple[str, ...] = ()


@frozen
class Sql:
    """A condition on the row `m` of messages; `since`/`until` (seconds) when it is a date range."""

    condition: str
    values: tuple[Any, ...] = ()
    since: float | None = None
    until: float | None = None
    few: bool = False  # true of few messages, read from an index: the walk starts from them


@frozen
class All:
    """Every message (`*`)."""


@frozen
class Op:
    kind: str  # "and", "or", "xor", "not"
    children: tuple[Any, ...]


@frozen
class Plan:
    """What a query asks: `match` for FTS5 (None: no text FTS5 answers alone), `condition`/`values` for the rest,
    and the rowid range a date gives (None: unbounded)."""

    match: str | None
    condition: str
    values: tuple[Any, ...]
    since: float | None = None
    until: float | None = None
    # Single-word phrases each matching every message `match` matches (see `probes_of`): empty when `match` holds
    # no phrase of two words or more and no two words, or when it is FTS5's own syntax.
    probes: tuple[str, ...] = ()
    # The prefixes (`word*`) `match` holds that a list of whole words can stand for (see `prefixes_of`).
    prefixes: tuple[str, ...] = ()


# ---- reading -----------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r'[()]|[^\s()"]*"(?:[^"]|"")*"\*?|[^\s()"]+|"')
_OPERATORS = {"and", "or", "not", "xor"}
MAX_DEPTH = 20  # parentheses within parentheses
_BAREWORD = re.compile(r"^\w+\*?$")


def _syntax(what: str) -> ToolError:
    return ToolError(f"the query cannot be read: {what}. Write words, prefixes such as from:ada@example.net or "
                     'date:2026-01..2026-03, "a quoted phrase", AND, OR, NOT and balanced parentheses '
                     "(or SQLite FTS5's own syntax)")


def is_fts5_syntax(query: str) -> bool:
    """A query only FTS5's own syntax reads (NEAR groups, column sets, `col : word`): given to FTS5 as it is."""
    return "{" in query or bool(re.search(r"\bNEAR\s*\(|\s:\s", query))


class _Reader:
    def __init__(self, query: str, zone: tzinfo | None, now: datetime | None) -> None:
        if query.count('"') % 2:
            raise _syntax('a quote (") is left open')
        self.tokens = _TOKEN.findall(query)
        self.at = 0
        self.zone = zone
        self.now = now
        self.depth = 0
        self.negations = 0
        self.prefixes: dict[int, str] = {}  # a prefixed term's node (by id) -> its prefix, for `grouped`

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1]

    def expression(self) -> Any:
        left = self.conjunction()
        while (token := self.peek()) is not None and token.lower() in ("or", "xor"):
            kind = self.take().lower()
            right = self.conjunction()
            joined = kind == "or" and isinstance(left, Op) and left.kind == "or"  # one flat OR
            left = Op(kind, (*left.children, right) if joined else (left, right))
        return left

    def conjunction(self) -> Any:
        parts = [self.unary()]
        explicit = False
        while (token := self.peek()) is not None and token != ")" and token.lower() not in ("or", "xor"):
            if token.lower() == "and":
                self.take()
                explicit = True
            parts.append(self.unary())
        if not explicit:  # notmuch: terms side by side with one prefix are one OR (subject:a subject:b)
            parts = self.grouped(parts)
        return parts[0] if len(parts) == 1 else Op("and", tuple(parts))

    def grouped(self, parts: list[Any]) -> list[Any]:
        groups: dict[str, list[Any]] = {}
        out: list[Any] = []
        for part in parts:
            key = self.prefixes.get(id(part))
            if key is None:
                out.append(part)
            elif key in groups:
                groups[key].append(part)
            else:
                groups[key] = [part]
                out.append(groups[key])
        return [(p[0] if len(p) == 1 else Op("or", tuple(p))) if isinstance(p, list) else p for p in out]

    def unary(self) -> Any:
        token = self.peek()
        if token is None:
            raise _syntax("an operator has nothing after it")
        if token.lower() == "not" or token.startswith("-"):
            self.negations += 1
            if self.negations > MAX_DEPTH:
                raise _syntax(f"it holds more than {MAX_DEPTH} NOT")
        if token.lower() == "not":
            self.take()
            return Op("not", (self.unary(),))
        if token.startswith("-") and len(token) > 1 and token != "--":
            self.tokens[self.at] = token[1:]
            return Op("not", (self.unary(),))
        return self.atom()

    def atom(self) -> Any:
        token = self.take()
        if token == "(":
            if self.peek() == ")":
                raise _syntax("a pair of parentheses holds nothing")
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _syntax(f"parentheses are nested more than {MAX_DEPTH} deep")
            inner = self.expression()
            self.depth -= 1
            if self.peek() != ")":
                raise _syntax("a parenthesis is left open")
            self.take()
            return inner
        if token == ")":
            raise _syntax("a parenthesis closes what was not opened")
        if token.lower() in _OPERATORS:
            raise _syntax(f"{token} stands where a word was expected")
        return self.term(token)

    def term(self, token: str) -> Any:
        node = self.read_term(token)
        prefix, colon, value = token.partition(":")
        if colon and value and prefix.lower() in _PREFIX_KEYS:
            self.prefixes[id(node)] = _PREFIX_KEYS[prefix.lower()]
        return node

    def read_term(self, token: str) -> Any:
        if token == "*":
            return All()
        prefix, colon, value = token.partition(":")
        name = prefix.lower()
        if colon and value and not prefix.startswith('"'):
            if name in COLUMNS:
                return _text(value, COLUMNS[name])
            if name == "date":
                since, until = date_range(value, self.zone, self.now)
                condition = " AND ".join(c for c in ("m.date >= ?" if since is not None else "",
                                                      "m.date < ?" if until is not None else "") if c) or "1"
                return Sql(condition, tuple(v for v in (since, until) if v is not None), since, until)
            if name in ("is", "tag"):
                wanted = value.strip('"').lower()
                if wanted not in FLAG_TAGS:
                    raise ToolError(f"{name}:{wanted} is not searchable: the mail index has no tags but those the "
                                    "Maildir flags keep (is:unread, is:flagged, is:answered or is:replied, is:draft, "
                                    "is:passed)")
                flag, absent = FLAG_TAGS[wanted]
                test = f"instr(flags, '{flag}') {'=' if absent else '>'} 0"
                if (flag, absent) in _INDEXED_FLAGS:  # the few, read from their partial index once
                    return Sql(f"m.id IN (SELECT id FROM messages WHERE {test})", few=True)
                return Sql(f"instr(m.{test[6:]}")
            if name == "id":
                return Sql("m.message_id = ?", (value.strip('"').strip("<>"),))
        if colon and name in NOT_SEARCHABLE:
            advice = " (the folder argument narrows to a folder)" if name in ("folder", "path") else ""
            raise ToolError(f"{name}: is not searchable{advice}; {TAKES}")
        return _text(token, ())


def _text(value: str, columns: tuple[str, ...]) -> Any:
    starred = value.endswith("*") and not value.endswith('"')
    words = value.rstrip("*") if starred else value
    if words.startswith('"') and words.endswith('"') and len(words) >= 2:
        words = words[1:-1].replace('""', '"')
        starred = value.endswith('"*')
    if CJK.search(words):
        pieces = [Cjk(piece, columns) for piece in _CJK_WORD.findall(words)]
        rest = _CJK_WORD.sub(" ", words)
        if re.search(r"\w", rest):
            pieces.append(Text(_phrase(rest), columns))
        return pieces[0] if len(pieces) == 1 else Op("and", tuple(pieces))
    if not re.search(r"\w", words):
        raise _syntax(f"{value!r} holds no word to search")
    if _BAREWORD.match(value) and not starred:
        return Text(f'"{words}"', columns)
    return Text(_phrase(words) + ("*" if starred else ""), columns)


def _phrase(words: str) -> str:
    return '"' + " ".join(words.replace('"', " ").split()) + '"'


def parse(query: str, zone: tzinfo | None = None, now: datetime | None = None) -> Any:
    """The query's tree; a ToolError saying what to write when it cannot be read."""
    reader = _Reader(query, zone, now)
    if not reader.tokens:
        raise _syntax("it holds nothing to search")
    tree = reader.expression()
    if reader.peek() is not None:
        raise _syntax("a parenthesis closes what was not opened" if reader.peek() == ")" else "it ends oddly")
    return tree


# ---- into SQL ----------------------------------------------------------------------------------------------------

FTS_IN = "m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)"
CJK_IN = "m.id IN (SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH ?)"
CJK_LIKE = "m.id IN (SELECT rowid FROM messages_cjk WHERE {likes})"
SIDE_COLUMNS = ("subject", "sender", "body", "recipients", "cc", "list", "attachment")


def _fts(node: Any) -> str | None:
    """The node as one FTS5 expression, or None when FTS5 cannot say it alone."""
    if isinstance(node, Text):
        return f"{{{' '.join(node.columns)}}} : {node.item}" if node.columns else node.item
    if isinstance(node, Op) and node.kind == "or":
        parts = [_fts(c) for c in node.children]
        return None if None in parts else " OR ".join(f"({p})" for p in parts)
    if isinstance(node, Op) and node.kind == "and":
        positive = [_fts(c) for c in node.children if not _negated(c)]
        negative = [_fts(c.children[0]) for c in node.children if _negated(c)]
        if not positive or None in positive or None in negative:
            return None
        return " AND ".join(f"({p})" for p in positive) + "".join(f" NOT ({n})" for n in negative)
    return None


def _negated(node: Any) -> bool:
    return isinstance(node, Op) and node.kind == "not"


def _sql(node: Any) -> tuple[str, list[Any]]:
    whole = _fts(node)
    if whole is not None:
        return FTS_IN, [whole]
    if isinstance(node, Sql):
        return node.condition, list(node.values)
    if isinstance(node, All):
        return "1", []
    if isinstance(node, Cjk):
        columns = node.columns or SIDE_COLUMNS
        if len(node.text) >= 3:
            return CJK_IN, [f"{{{' '.join(columns)}}} : \"{node.text}\""]
        pattern = "%" + node.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return CJK_LIKE.format(likes=" OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns)), [pattern] * len(columns)
    parts = [_sql(c) for c in node.children]
    values = [v for _c, vs in parts for v in vs]
    if node.kind == "not":
        return f"NOT ({parts[0][0]})", values
    if node.kind == "xor":
        return f"(({parts[0][0]}) <> ({parts[1][0]}))", values
    return f" {node.kind.upper()} ".join(f"({c})" for c, _vs in parts), values


# Plans already read, by the query's text: only those of queries without `date:`, the one term whose meaning
# depends on the zone and the clock (a plan is a frozen value; reading a query again cost more than its statement).
_plans: dict[str, Plan] = {}
_PLANS_KEPT = 256


def plan(query: str, zone: tzinfo | None = None, now: datetime | None = None) -> Plan:
    """What `query` asks, for search_mail's statement (see the module's docstring)."""
    undated = "date:" not in query.lower()
    found = _plans.get(query) if undated else None
    if found is None:
        found = _plan(query, zone, now)
        if undated:
            if len(_plans) >= _PLANS_KEPT:
                _plans.clear()
            _plans[query] = found
    return found


def _plan(query: str, zone: tzinfo | None, now: datetime | None) -> Plan:
    if is_fts5_syntax(query):
        return Plan(query, "1", ())
    tree = parse(query, zone, now)
    conjuncts = list(tree.children) if isinstance(tree, Op) and tree.kind == "and" else [tree]
    # Words common or rare, a flag few messages bear is the shorter walk: then FTS5 is asked as a condition.
    few = any(isinstance(c, Sql) and c.few for c in conjuncts)
    positive = [c for c in conjuncts if not few and not _negated(c) and _fts(c) is not None]
    negative = [c for c in conjuncts if _negated(c) and _fts(c.children[0]) is not None] if positive else []
    match = None
    if positive:
        match = " AND ".join(f"({_fts(c)})" for c in positive) + "".join(
            f" NOT ({_fts(c.children[0])})" for c in negative)
    rest = [c for c in conjuncts if not any(c is p for p in positive + negative)]
    rest.sort(key=lambda c: not (isinstance(c, Sql) and c.few))  # the first IN is the one SQLite walks from
    conditions, values = [], []
    since = until = None
    for node in rest:
        condition, found = _sql(node)
        conditions.append(f"({condition})")
        values += found
        if isinstance(node, Sql) and node.since is not None:
            since = node.since if since is None else max(since, node.since)
        if isinstance(node, Sql) and node.until is not None:
            until = node.until if until is None else min(until, node.until)
    return Plan(match, " AND ".join(conditions) or "1", tuple(values), since, until, probes_of(positive),
                prefixes_of(positive + negative))


_ONE_PREFIX = re.compile(r'"([A-Za-z0-9]+)"\*\Z')


def prefixes_of(nodes: list[Any]) -> tuple[str, ...]:
    """The prefixes of one token in ASCII letters and digits (`spamass*`, `to:Spamass*`) written in the match made of
    `nodes`, as they are written there: each is a whole item of a phrase, `"Spamass"*`, which answers.expanded may
    write as the OR of the index's words beginning with it (FTS5 reads it in lower case)."""
    found: list[str] = []
    for node in nodes:
        for leaf in leaves(node):
            matched = _ONE_PREFIX.match(leaf.item) if isinstance(leaf, Text) else None
            if matched and matched[1] not in found:
                found.append(matched[1])
    return tuple(found)


# Characters every `unicode61` tokenizer (as the index's is made: no tokenchars, no separators option) takes as a
# separator: all of ASCII but its letters and digits. A phrase's text cut at them keeps each piece's own tokens.
_ASCII_SEPARATORS = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")


# A piece FTS5 reads as exactly one token whatever its Unicode tables: ASCII letters and digits only. Others are not
# probes: a piece holding a character those tables take for a separator (or for nothing) could be read as no token,
# and an empty phrase matches no message where the phrase around it does.
_ONE_TOKEN = re.compile(r"[A-Za-z0-9]+\Z")


def probes_of(positive: list[Any]) -> tuple[str, ...]:
    """For the phrases FTS5 is asked for all together (`positive`, AND-ed in the plan's match): each phrase's pieces
    between ASCII separators that are one token each (`_ONE_TOKEN`), each as an FTS5 phrase in the same columns. A message matching the whole match holds
    each piece's tokens side by side in one of those columns, so it matches each probe: a probe that matches few
    messages bounds where the whole match can be (see answers.narrowed). A prefix (`word*`) gives none (its last
    piece's tokens are not whole tokens). Empty when there are fewer than two pieces: the match is its own probe."""
    found: list[str] = []
    for node in positive:
        if not isinstance(node, Text) or node.item.endswith("*"):
            continue
        columns = f"{{{' '.join(node.columns)}}} : " if node.columns else ""
        found += [f'{columns}"{piece}"' for piece in _ASCII_SEPARATORS.split(node.item) if _ONE_TOKEN.match(piece)]
    return tuple(found) if len(found) >= 2 else ()


# ---- dates -------------------------------------------------------------------------------------------------------

_MONTHS = [m.lower() for m in calendar.month_name[1:]]
_WEEKDAYS = [d.lower() for d in calendar.day_name]
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "dozen": 12, "hundred": 100}
# Units as notmuch reads them: any beginning of the name, a single `m` minutes and a single `M` months.
_UNITS = (("years", "y"), ("months", "M"), ("weeks", "w"), ("days", "d"), ("hours", "h"), ("hrs", "h"),
          ("minutes", "m"), ("mins", "m"), ("seconds", "s"), ("secs", "s"))
_RELATIVE = re.compile(r"(\d+|" + "|".join(_NUMBERS) + r")?[ _-]?([a-zA-Z]+)")


def date_range(value: str, zone: tzinfo | None, now: datetime | None = None) -> tuple[float | None, float | None]:
    """`date:`'s value as [since, until) in seconds (None: open): `since` the earliest moment its first expression
    can mean, `until` just past the latest its second can."""
    now = now or datetime.now(zone)
    if now.tzinfo is None:
        now = now.astimezone(zone)
    value = value.strip('"')
    if ".." in value:
        first, _, second = value.partition("..")
        if second == "!":
            second = first
    else:
        first = second = value
    since = date_interval(first, now)[0].timestamp() if first else None
    until = date_interval(second, now)[1].timestamp() if second else None
    if since is None and until is None:
        raise ToolError("date: needs a date on at least one side of its two dots, as in date:2026-01.. or "
                        "date:..2025-12-31")
    return since, until


def date_interval(expression: str, now: datetime) -> tuple[datetime, datetime]:
    """The moments one date expression can mean, [start, end), in `now`'s zone. Taken: `@<seconds>`, `now`, `today`,
    `yesterday`, `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `M/D/YYYY`, `D.M.YYYY`, a month's name (this year's, or last
    year's when it is still to come) and a weekday's (the last one, today included), and relative times such as
    `2w`, `5M2d`, `3_days`, `two_weeks` (in the past, each counted from now, rounded to its smallest unit)."""
    text = expression.strip()  # its case kept for the units: m minutes, M months
    lowered = text.lower()
    zone = now.tzinfo
    if lowered.startswith("@"):
        try:
            moment = datetime.fromtimestamp(int(lowered[1:]), zone)
        except (ValueError, OverflowError, OSError):
            raise ToolError(f"date:{expression} is not a number of seconds after @") from None
        return moment, moment + timedelta(seconds=1)
    if lowered == "now":
        return now, now + timedelta(seconds=1)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if lowered == "today":
        return _days(day, 0, 1)
    if lowered == "yesterday":
        return _days(day, -1, 0)
    absolute = _absolute(lowered, zone)
    if absolute is not None:
        return absolute
    named = _named(lowered, day)
    if named is not None:
        return named
    relative = _relative(text, now)
    if relative is not None:
        return relative
    raise ToolError(f"date:{expression} is not a date search_mail reads (it takes 2026-01-31, 2026-01, 2026, "
                  "today, yesterday, a month or a weekday's name, @<seconds>, and times ago such as 2w, 3d, 5M2d, "
                  "with .. between two of them)")


def _days(day: datetime, start: int, end: int) -> tuple[datetime, datetime]:
    # Whole days in the zone, summer time included: each end made again from its calendar date.
    zone = day.tzinfo

    def moment(offset: int) -> datetime:
        date = (day.replace(tzinfo=None) + timedelta(days=offset)).date()
        return datetime(date.year, date.month, date.day, tzinfo=zone)

    return moment(start), moment(end)


def _month(year: int, month: int, zone: Any) -> tuple[datetime, datetime]:
    following = (year + 1, 1) if month == 12 else (year, month + 1)
    return datetime(year, month, 1, tzinfo=zone), datetime(*following, 1, tzinfo=zone)


def _absolute(text: str, zone: Any) -> tuple[datetime, datetime] | None:
    try:
        if m := re.fullmatch(r"(\d{4})", text):
            year = int(m[1])
            return datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone)
        if m := re.fullmatch(r"(\d{4})-(\d{1,2})", text):
            return _month(int(m[1]), int(m[2]), zone)
        day = None
        if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text):
            day = datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=zone)
        elif m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
            day = datetime(int(m[3]), int(m[1]), int(m[2]), tzinfo=zone)
        elif m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", text):
            day = datetime(int(m[3]), int(m[2]), int(m[1]), tzinfo=zone)
        elif m := re.fullmatch(r"(\d{1,2})/(\d{4})", text):
            return _month(int(m[2]), int(m[1]), zone)
    except ValueError:
        raise ToolError(f"date:{text} names no day of the calendar; write it as 2026-01-31") from None
    return _days(day, 0, 1) if day is not None else None


def _named(text: str, day: datetime) -> tuple[datetime, datetime] | None:
    if len(text) < 3 or not text.isalpha():
        return None
    for number, name in enumerate(_MONTHS, 1):
        if name.startswith(text):
            year = day.year if number <= day.month else day.year - 1
            return _month(year, number, day.tzinfo)
    for number, name in enumerate(_WEEKDAYS):
        if name.startswith(text):
            back = (day.weekday() - number) % 7
            return _days(day, -back, -back + 1)
    return None


def _relative(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    if text.lower().endswith("ago"):
        text = text[:-3].rstrip(" _-")
    position, found = 0, []
    for match in _RELATIVE.finditer(text):
        if match.start() != position:
            return None
        position = match.end()
        count = match[1] or "1"
        number = int(count) if count.isdigit() else _NUMBERS[count.lower()]
        unit = _unit(match[2])
        if unit is None:
            return None
        found.append((number, unit))
        position += len(text[position:]) - len(text[position:].lstrip(" _-"))
    if not found or position != len(text):
        return None
    moment = now
    for number, unit in found:
        moment = _back(moment, number, unit)
    return _rounded(moment, found[-1][1])


def _unit(word: str) -> str | None:
    if word == "M":
        return "M"
    if word == "m":
        return "m"
    lowered = word.lower()
    for name, unit in _UNITS:
        if name.startswith(lowered):
            return unit
    return None


def _back(moment: datetime, number: int, unit: str) -> datetime:
    if unit in ("y", "M"):
        months = moment.year * 12 + moment.month - 1 - number * (12 if unit == "y" else 1)
        year, month = divmod(months, 12)
        last = calendar.monthrange(year, month + 1)[1]
        return moment.replace(year=year, month=month + 1, day=min(moment.day, last))
    seconds = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}[unit] * number
    return moment - timedelta(seconds=seconds)


def _rounded(moment: datetime, unit: str) -> tuple[datetime, datetime]:
    """The period of `unit` holding `moment` (notmuch rounds a time ago to its unit: 2w.. begins on the Sunday)."""
    if unit == "s":
        start = moment.replace(microsecond=0)
        return start, start + timedelta(seconds=1)
    if unit == "m":
        start = moment.replace(second=0, microsecond=0)
        return start, start + timedelta(minutes=1)
    if unit == "h":
        start = moment.replace(minute=0, second=0, microsecond=0)
        return start, start + timedelta(hours=1)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "d":
        return _days(day, 0, 1)
    if unit == "w":  # weeks begin on Sunday, as notmuch's do
        first = -((day.weekday() + 1) % 7)
        return _days(day, first, first + 7)
    if unit == "M":
        return _month(moment.year, moment.month, moment.tzinfo)
    return datetime(moment.year, 1, 1, tzinfo=moment.tzinfo), datetime(moment.year + 1, 1, 1, tzinfo=moment.tzinfo)


def leaves(tree: Any) -> Iterator[Any]:
    """Every leaf of a tree (for tests and the bench)."""
    if isinstance(tree, Op):
        for child in tree.children:
            yield from leaves(child)
    else:
        yield tree
