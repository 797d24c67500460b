"""The AI shield: mail to a shielded address (`[plugins.mail] shielded`) judged hostile or not before any tool
reads it, each message once, the verdict kept in the index's table `shield` (`maildirs.shield.SCHEMA`).

A pass (`update`) does two things, each bounded in time: it looks at every message the index holds that it has
not looked at (or whose file changed since), reading the addressees from its headers (To, Cc, Delivered-To,
X-Original-To: `maildirs.shield`); then it judges the messages addressed to a shielded address that have no verdict.
The person's own label of a message (`gateway mail hostile MID`) is the verdict of every copy the index holds then,
and of any later file of the same bytes; never of another message that reuses its Message-ID (a sender chooses
that). Else the judge is the person's `shield_command` when set, else the model of their labels (`judge.py`).

Where it runs: each call runs a pass for at most `CALL_SECONDS` after the index's refresh, judging with the label
model only (a few milliseconds a message); a `shield_command` is never waited for by a call: the server runs it on
a thread of its own, one message after the other (`judge_in_background`), and the calls that come after see its
verdicts. `gateway mail index` and `gateway watch` judge in the same pass, waiting for the command. A judge that
fails leaves the message unjudged with its reason; the server tries it again after `RETRY_SECONDS`,
`gateway mail index` at once. The labels' model, when counted with another version of the spam filter's tokenizer,
is counted again from the labels at the start of the pass of `gateway mail index` and `gateway watch`; a call
leaves that to a thread of the server's (`relearn_in_background`), and the model judges nothing meanwhile (the
person's labels still judge their messages).

What the tools do with it (`hidden`): a message addressed to a shielded address is given only once judged not
hostile. Judged hostile, or not judged yet (its judge failed, is still at work, or the message was not looked at
yet), it is kept: in no list or search, refused by its address, never answered; counted (as set aside in the
Porch). Closing errs towards keeping: the person turned the shield on for that address.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen
from maildirs.shield import HOSTILE, OK, UNJUDGED, addressees_of, is_addressed, shielded_in
from spamfilter import read_up_to

from gateway import ToolError
from gateway_mail.docindex import meta, set_meta
from gateway_mail.mail import judge
from gateway_mail.mail.accounts import Account
from gateway_mail.mail.gating import folder_paths

CALL_SECONDS = 1.0  # of a call's time, at most, for looking at new messages and judging them with the labels
RETRY_SECONDS = 300.0  # a failed judgement is tried again by the server after this long
WATCH_SECONDS = 60.0  # of each round of gateway watch, at most, for the shield's judge
DEFAULT_TIMEOUT = 30.0
MAX_MESSAGE = 20 * 1024 * 1024  # bytes of a message read to judge it (the spam filter's bound)
_BATCH = 200
_GENERATION = "shield_generation"
SHIELD_REFUSAL = ("this message went to an address the person shields, and their AI shield judged it hostile (or "
                  "has not judged it yet): it is neither read nor answered through the gateway. The person reads it "
                  "in their own mail program.")
_LOOKED = "shield_looked"  # the index generation whose every message was looked at
_ADDRESSES = "shield_addresses"  # the shielded addresses `addressed` was worked out for


@frozen
class Shield:
    """The shield's settings: the shielded addresses, the judge command, its timeout, the model's folder."""

    shielded: frozenset[str]
    command: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    data: Path = Path()

    @property
    def on(self) -> bool:
        return bool(self.shielded)

    @property
    def signature(self) -> str:
        return " ".join(sorted(self.shielded))


# The shield last made, with the settings' values it was made from (kept alive, so that their ids name no other value
# meanwhile): the core hands every call of one configuration the same values, which a plugin never changes, so a
# call of an unchanged configuration does not parse the shielded addresses again.
_shield_made: dict[str, tuple[tuple[Any, ...], Shield]] = {}


def shield_of(settings: Mapping[str, Any], data: Path) -> Shield:
    """The shield of the plugin's settings (raises ToolError, a sentence naming the key, when they are wrong)."""
    made_of = (settings.get("shielded"), settings.get("shield_command"), settings.get("shield_timeout"))
    kept = _shield_made.get(str(data))
    if kept is not None and all(a is b for a, b in zip(kept[0], made_of, strict=True)):
        return kept[1]
    made = _shield_of(settings, data)
    if len(_shield_made) >= 8:
        _shield_made.clear()
    _shield_made[str(data)] = (made_of, made)
    return made


def _shield_of(settings: Mapping[str, Any], data: Path) -> Shield:
    shielded = shielded_in(settings)
    command = settings.get("shield_command") or []
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command) or (command and not command[0]):
        raise ToolError('[plugins.mail] shield_command must be a program and its arguments, e.g. ["/usr/local/bin/'
                        'judge", "--strict"]: ask the person to fix the config')
    timeout = float(settings.get("shield_timeout") or DEFAULT_TIMEOUT)
    return Shield(shielded, tuple(command), timeout, Path(data))


@frozen
class Hidden:
    """The indexed messages the shield keeps: judged hostile, or addressed to a shielded address and not judged
    (`unjudged` also holds the messages not looked at yet)."""

    hostile: frozenset[int] = frozenset()
    unjudged: frozenset[int] = frozenset()

    @property
    def ids(self) -> frozenset[int]:
        return self.hostile | self.unjudged


NONE = Hidden()
_hidden_memo: dict[tuple, Hidden] = {}
_memo_lock = threading.Lock()


def generation(connection: sqlite3.Connection) -> int:
    return int(meta(connection, _GENERATION) or 0)


def _bump(connection: sqlite3.Connection) -> None:
    set_meta(connection, _GENERATION, str(generation(connection) + 1))


def index_state(connection: sqlite3.Connection) -> str:
    """The index's generation and its count of messages: rows a refresh wrote before its deadline stopped it are
    counted, though the generation is bumped only by a refresh that ends."""
    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    return f"{meta(connection, 'generation') or 0}:{count}"


def hidden(connection: sqlite3.Connection, key: tuple[str, int], shield: Shield) -> Hidden:
    """What the shield keeps now; `key` is the index's path and generation. Worked out again only when the index,
    the shield's table or the shielded addresses changed."""
    if not shield.on:
        return NONE
    slot = (key[0], index_state(connection), generation(connection), shield.signature)
    with _memo_lock:
        found = _hidden_memo.get(slot)
    if found is not None:
        return found
    hostile, unjudged = set(), set()
    if meta(connection, _LOOKED) == slot[1]:
        # Every message looked at, each row of its file as it is now: only the addressed rows can be kept (found by
        # their partial index, each message then looked up).
        rows = connection.execute(
            "SELECT m.id, s.verdict, 1 FROM shield s CROSS JOIN messages m ON m.account = s.account AND "
            "m.folder = s.folder AND m.unique_name = s.unique_name AND m.size = s.size AND m.mtime_ns = s.mtime_ns "
            "WHERE s.addressed = 1 AND s.verdict != 'ok'")
    else:
        rows = connection.execute(
            "SELECT m.id, s.verdict, s.size = m.size AND s.mtime_ns = m.mtime_ns FROM messages m LEFT JOIN shield s "
            "ON s.account = m.account AND s.folder = m.folder AND s.unique_name = m.unique_name "
            "WHERE s.unique_name IS NULL OR s.size != m.size OR s.mtime_ns != m.mtime_ns "
            "OR (s.addressed = 1 AND s.verdict != 'ok')")
    for id_, verdict, current in rows:
        (hostile if current and verdict == HOSTILE else unjudged).add(id_)
    found = Hidden(frozenset(hostile), frozenset(unjudged))
    with _memo_lock:
        if len(_hidden_memo) > 8:
            _hidden_memo.clear()
        _hidden_memo[slot] = found
    return found


# -- the pass -------------------------------------------------------------------------------------------------------


def update(connection: sqlite3.Connection, accounts: list[Account], shield: Shield, *, until: float,
           commands: bool, retry_after: float = RETRY_SECONDS) -> int:
    """One pass, stopping at `until` (time.monotonic); `commands`: run the shield_command (else only the labels).

    Returns how many messages addressed to a shielded address wait for the command (0 when there is none)."""
    if not shield.on:
        return 0
    _addressed_for(connection, shield)
    _look(connection, accounts, shield, until)
    # The labels' model costs little: what it could not judge is tried again at each pass.
    return _judge(connection, accounts, shield, until, commands, retry_after if shield.command else 0.0)


def _addressed_for(connection: sqlite3.Connection, shield: Shield) -> None:
    """`addressed` worked out again from the addressees when the shielded addresses changed."""
    if meta(connection, _ADDRESSES) == shield.signature:
        return
    rows = connection.execute("SELECT account, folder, unique_name, addressees, addressed FROM shield").fetchall()
    with connection:
        connection.executemany(
            "UPDATE shield SET addressed = ? WHERE account = ? AND folder = ? AND unique_name = ?",
            [(now, r[0], r[1], r[2]) for r in rows if (now := int(is_addressed(r[3], shield.shielded))) != r[4]])
        set_meta(connection, _ADDRESSES, shield.signature)
        _bump(connection)


def _look(connection: sqlite3.Connection, accounts: list[Account], shield: Shield, until: float) -> None:
    """Read the addressees of every message not looked at yet (or whose file changed)."""
    current = index_state(connection)
    if meta(connection, _LOOKED) == current:
        return
    rows = connection.execute(
        "SELECT m.account, m.folder, m.unique_name, m.sub, m.filename, m.size, m.mtime_ns, m.message_id "
        "FROM messages m LEFT JOIN shield s "
        "ON s.account = m.account AND s.folder = m.folder AND s.unique_name = m.unique_name "
        "WHERE s.unique_name IS NULL OR s.size != m.size OR s.mtime_ns != m.mtime_ns").fetchall()
    dirs = folder_paths(accounts) if rows else {}
    complete = True
    pending: list[tuple] = []
    for number, (account, folder, unique, sub, filename, size, mtime_ns, message_id) in enumerate(rows):
        if number % 50 == 0 and time.monotonic() > until:
            complete = False
            break
        folder_dir = dirs.get((account, folder))
        found = addressees_of(Path(folder_dir) / sub / filename) if folder_dir else None
        if found is None:  # gone or unreadable: the next refresh removes it; until then it stays not looked at
            complete = False
            continue
        addressed = int(is_addressed(found, shield.shielded))
        verdict, by, digest = UNJUDGED, "", ""
        if addressed:  # the same bytes seen before (a message moved from INBOX to Archive): its verdict goes with it
            raw = _raw(folder_dir, sub, filename)
            digest = hashlib.sha256(raw).hexdigest() if raw is not None else ""
            moved = connection.execute("SELECT verdict, judge FROM shield WHERE digest = ? AND digest != '' AND "
                                       "verdict != '' ORDER BY judge = 'person' DESC", (digest,)).fetchone()
            if moved is not None:
                verdict, by = moved
        pending.append((account, folder, unique, size, mtime_ns, message_id, f" {' '.join(found)} ", addressed,
                        digest, verdict, by, "", 0.0))
        if len(pending) >= _BATCH:
            _write_rows(connection, pending)
    _write_rows(connection, pending)
    if complete:
        with connection:
            _prune(connection)
            set_meta(connection, _LOOKED, current)


def _prune(connection: sqlite3.Connection) -> None:
    """The rows of messages the index no longer holds (moved, removed), dropped once the shield has more rows than
    the index has messages."""
    rows = connection.execute("SELECT count(*) FROM shield").fetchone()[0]
    if rows <= connection.execute("SELECT count(*) FROM messages").fetchone()[0]:
        return
    connection.execute("DELETE FROM shield WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.account = "
                       "shield.account AND m.folder = shield.folder AND m.unique_name = shield.unique_name)")
    _bump(connection)


def _write_rows(connection: sqlite3.Connection, rows: list[tuple]) -> None:
    if not rows:
        return
    with connection:
        connection.executemany("INSERT OR REPLACE INTO shield (account, folder, unique_name, size, mtime_ns, "
                               "message_id, addressees, addressed, digest, verdict, judge, reason, tried) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        _bump(connection)
    rows.clear()


def waiting(connection: sqlite3.Connection, shield: Shield, retry_after: float = RETRY_SECONDS,
            new_only: bool = False) -> list[Any]:
    """The messages addressed to a shielded address with no verdict, their file as indexed, oldest try first;
    those whose judge failed less than `retry_after` seconds ago left out (with `new_only`, every one tried)."""
    return connection.execute(
        "SELECT s.account, s.folder, s.unique_name, s.message_id, s.judge, s.tried, m.sub, m.filename "
        # CROSS JOIN: the waiting rows first (the partial index shield_waiting), each message then looked up.
        "FROM shield s CROSS JOIN messages m ON m.account = s.account AND m.folder = s.folder "
        "AND m.unique_name = s.unique_name AND m.size = s.size AND m.mtime_ns = s.mtime_ns "
        "WHERE s.addressed = 1 AND s.verdict = '' AND (s.tried = 0 OR s.tried < ?) ORDER BY s.tried",
        (0.0 if new_only else time.time() - retry_after,)).fetchall()


def _judge(connection: sqlite3.Connection, accounts: list[Account], shield: Shield, until: float, commands: bool,
           retry_after: float) -> int:
    """Judge what waits: the person's labels first, then the command (when `commands`) or the labels' model."""
    left_for_command = 0
    if commands:  # gateway mail index, gateway watch: the labels' model counted again first, waited for
        try:
            judge.relearn(shield.data, copies_of(connection, accounts))
        except (OSError, sqlite3.Error):  # the model stays as it was: it judges nothing until counted
            import structlog

            structlog.get_logger("gateway_mail").error("the shield's labels could not be counted again",
                                                       exc_info=True)
    with judge.Labels(shield.data) as labels:
        if labels.stale:  # a call: counted again on a thread of the server's; the model judges nothing meanwhile
            relearn_in_background(connection, accounts, shield)
        # With no command and a model that cannot judge yet, only the messages never tried are looked at (for the
        # person's own labels, and to record why they wait): the others wait for a label, which judges them.
        new_only = not shield.command and bool(labels.problem)
        rows = waiting(connection, shield, 0.0 if commands else retry_after, new_only)
        if not rows:
            return 0
        dirs = folder_paths(accounts)
        judged: list[tuple[tuple[str, str, str], judge.Judgement]] = []
        for account, folder, unique, message_id, _by, _tried, sub, filename in rows:
            if time.monotonic() > until:
                break
            if shield.command and not commands:
                left_for_command += 1
                continue
            given = None
            if new_only and labels.table is None:  # no label at all: nothing to read
                given = judge.Judgement(UNJUDGED, "labels", labels.problem)
            if given is None:
                raw = _raw(dirs.get((account, folder)), sub, filename)
                if raw is None:
                    continue
                given = labels.person(message_id, raw)
                if given is None and new_only:
                    given = judge.Judgement(UNJUDGED, "labels", labels.problem)
            if given is None:
                if shield.command:
                    left = max(min(shield.timeout, until - time.monotonic()), 0.1)
                    given = judge.run_command(shield.command, raw, left)
                    if given.verdict == UNJUDGED and left < shield.timeout and time.monotonic() >= until:
                        continue  # stopped by the pass's bound, not the judge's own: tried again, said nothing
                else:
                    given = labels.judge(raw)
            judged.append(((account, folder, unique), given))
            if len(judged) >= _BATCH or shield.command:  # a command's verdict is written at once: it took long
                record_all(connection, judged)
        record_all(connection, judged)
    return left_for_command


def copies_of(connection: sqlite3.Connection, accounts: list[Account]) -> judge.Copies:
    """How the labels' model finds a labelled message: its indexed copies under its Message-ID, oldest first, each
    read as it is judged (the first `MAX_MESSAGE` bytes); a copy that cannot be read is left out."""
    dirs = folder_paths(accounts)

    def copies(message_id: str) -> Iterator[bytes]:
        rows = connection.execute("SELECT account, folder, sub, filename FROM messages WHERE message_id = ? "
                                  "ORDER BY id", (message_id,)).fetchall()
        for account, folder, sub, filename in rows:
            raw = _raw(dirs.get((account, folder)), sub, filename)
            if raw is not None:
                yield raw

    return copies


def _raw(folder_dir: str | None, sub: str, filename: str) -> bytes | None:
    if not folder_dir:
        return None
    try:
        with open(Path(folder_dir) / sub / filename, "rb", buffering=0) as handle:
            return read_up_to(handle, MAX_MESSAGE)
    except OSError:
        return None


def record(connection: sqlite3.Connection, key: tuple[str, str, str], given: judge.Judgement) -> None:
    """One message's judgement written (a verdict, or why there is none and when it was tried)."""
    record_all(connection, [(key, given)])


def record_all(connection: sqlite3.Connection, judged: list[tuple[tuple[str, str, str], judge.Judgement]]) -> None:
    """Judgements written in one transaction (`judged` is emptied)."""
    if not judged:
        return
    now = time.time()
    with connection:
        # Never over the person's own label (given meanwhile, from their terminal).
        connection.executemany("UPDATE shield SET verdict = ?, judge = ?, reason = ?, tried = ? WHERE account = ? "
                               "AND folder = ? AND unique_name = ? AND judge != 'person'",
                               [(given.verdict, given.judge, given.reason, now, *key) for key, given in judged])
        _bump(connection)
    judged.clear()


def label(connection: sqlite3.Connection, message_id: str, verdict: str) -> int:
    """The person's label of every indexed copy of a Message-ID now, as its verdict (a later file of the same bytes
    takes it too: `_look`); returns how many rows took it."""
    with connection:
        changed = connection.execute("UPDATE shield SET verdict = ?, judge = 'person', reason = '', tried = ? "
                                     "WHERE message_id = ?", (verdict, time.time(), message_id)).rowcount
        _bump(connection)
    return changed


# -- the server's judge, on a thread of its own ------------------------------------------------------------------------

_threads: dict[str, threading.Thread] = {}
_threads_lock = threading.Lock()


def judge_in_background(index: Path, accounts: list[Account], shield: Shield,
                        connect: Callable[[Path], sqlite3.Connection]) -> bool:
    """Start the server's judge for this index unless one runs (True when one runs now). It judges with the
    command every message waiting (those that failed less than RETRY_SECONDS ago aside), one after the other,
    each within the command's timeout, then ends; the next call that finds messages waiting starts it again."""
    with _threads_lock:
        running = _threads.get(str(index))
        if running is not None and running.is_alive():
            return True
        thread = threading.Thread(target=_background, args=(index, accounts, shield, connect),
                                  name="mail-shield", daemon=True)
        _threads[str(index)] = thread
        thread.start()
    return True


def _background(index: Path, accounts: list[Account], shield: Shield,
                connect: Callable[[Path], sqlite3.Connection]) -> None:
    import structlog

    log = structlog.get_logger("gateway_mail")
    try:
        connection = connect(index)
    except sqlite3.Error:
        log.error("the shield's judge could not open the mail index", traceback=True)
        return
    try:
        while True:
            rows = waiting(connection, shield)
            if not rows:
                return
            _judge_commands(connection, accounts, shield, rows)
    except Exception:  # noqa: BLE001 - the judge's thread must never take the server down; its messages stay kept
        log.error("the shield's judge failed", exc_info=True)
    finally:
        with contextlib.suppress(sqlite3.Error):
            connection.close()


def _judge_commands(connection: sqlite3.Connection, accounts: list[Account], shield: Shield, rows: list[Any]) -> None:
    dirs = folder_paths(accounts)
    for account, folder, unique, message_id, _by, _tried, sub, filename in rows:
        raw = _raw(dirs.get((account, folder)), sub, filename)
        if raw is None:
            given = judge.Judgement(UNJUDGED, "command", "the message's file could not be read")
        else:
            with judge.Labels(shield.data) as labels:  # opened for each: a command takes far longer
                given = labels.person(message_id, raw) or judge.run_command(shield.command, raw, shield.timeout)
        record(connection, (account, folder, unique), given)


_relearning: dict[str, threading.Thread] = {}
_relearn_failed: dict[str, float] = {}  # when a count failed, per model folder: tried again after RETRY_SECONDS


def relearn_in_background(connection: sqlite3.Connection, accounts: list[Account], shield: Shield) -> None:
    """Count the labels' model again (`judge.relearn`) on a thread of its own, unless one does it for this model
    now: a call never waits for it (thousands of labels take seconds). The thread reads the index through a connection
    of its own; the model's lock keeps it and a label command from writing at once."""
    index = next((row[2] for row in connection.execute("PRAGMA database_list") if row[1] == "main"), "")
    if not index:
        return
    with _threads_lock:
        running = _relearning.get(str(shield.data))
        if running is not None and running.is_alive():
            return
        if time.monotonic() - _relearn_failed.get(str(shield.data), -math.inf) < RETRY_SECONDS:
            return
        thread = threading.Thread(target=_relearn, args=(index, accounts, shield.data), name="mail-shield-relearn",
                                  daemon=True)
        _relearning[str(shield.data)] = thread
        thread.start()


def _relearn(index: str, accounts: list[Account], data: Path) -> None:
    import structlog

    log = structlog.get_logger("gateway_mail")
    try:
        connection = sqlite3.connect(index, timeout=30)
    except sqlite3.Error:
        log.error("the shield's labels could not be counted again: the mail index cannot be opened", exc_info=True)
        with _threads_lock:
            _relearn_failed[str(data)] = time.monotonic()
        return
    try:
        learnt = judge.relearn(data, copies_of(connection, accounts))
        if learnt is not None:
            log.info("the shield's model of the person's labels counted again for the current tokenizer",
                     labels=learnt.recounted, not_found=len(learnt.uncounted))
    except Exception:  # noqa: BLE001 - never the server's end; the model stays as it was, and is tried again
        log.error("the shield's labels could not be counted again", exc_info=True)
        with _threads_lock:
            _relearn_failed[str(data)] = time.monotonic()
    finally:
        connection.close()


def settle(index: Path, timeout: float) -> bool:
    """Wait for the server's judge of this index to end (tests and the benchmark); False when it still runs."""
    with _threads_lock:
        running = _threads.get(str(index))
    if running is None:
        return True
    running.join(timeout)
    return not running.is_alive()


atexit.register(judge.stop_all)


# -- for gateway doctor --------------------------------------------------------------------------------------------


def doctor_lines(connection: sqlite3.Connection, shield: Shield, limit: int = 10) -> tuple[int, str]:
    """How many messages the shield keeps unjudged, and a sentence naming the first few with why."""
    if not shield.on:
        return 0, ""
    gone = judge.uncounted(shield.data)
    said_gone = judge.uncounted_said(gone, limit) if gone else ""
    count, said = _waiting_lines(connection, shield, limit)
    return count, ". ".join(part for part in (said, said_gone) if part)


def _waiting_lines(connection: sqlite3.Connection, shield: Shield, limit: int) -> tuple[int, str]:
    rows = connection.execute(
        "SELECT m.account, m.folder, m.sub, m.filename, m.message_id, s.reason, "
        "s.unique_name IS NULL OR s.size != m.size OR s.mtime_ns != m.mtime_ns FROM messages m LEFT JOIN shield s "
        "ON s.account = m.account AND s.folder = m.folder AND s.unique_name = m.unique_name "
        "WHERE s.unique_name IS NULL OR s.size != m.size OR s.mtime_ns != m.mtime_ns "
        "OR (s.addressed = 1 AND s.verdict = '') ORDER BY m.date DESC").fetchall()
    if not rows:
        return 0, ""
    named = []
    for account, folder, sub, filename, message_id, reason, not_looked in rows[:limit]:
        where = f"mid:{message_id}" if message_id else f"{account}/{folder}/{sub}/{filename}"
        why = ("not looked at yet (the next call or gateway mail index reads its headers)" if not_looked else
               reason or ("waiting for the shield_command" if shield.command else "waiting for the labels' model"))
        named.append(f"{where} ({why})")
    more = "; ..." if len(rows) > limit else ""
    return len(rows), (f"{len(rows)} message{'s' if len(rows) != 1 else ''} to a shielded address not judged yet, "
                       f"kept from agents until judged (gateway mail index judges what waits): "
                       + "; ".join(named) + more)


def counts(connection: sqlite3.Connection) -> dict[str, int]:
    """How many messages addressed to a shielded address are judged hostile, judged ok, not judged."""
    found = {"hostile": 0, "ok": 0, "unjudged": 0}
    for verdict, count in connection.execute("SELECT verdict, count(*) FROM shield WHERE addressed = 1 "
                                             "GROUP BY verdict"):
        found[{HOSTILE: "hostile", OK: "ok"}.get(verdict, "unjudged")] += count
    return found


def hidden_json(found: Hidden) -> str:
    return json.dumps(sorted(found.ids))


__all__ = ["HOSTILE", "OK", "UNJUDGED", "Hidden", "Shield", "hidden", "shield_of", "update"]
