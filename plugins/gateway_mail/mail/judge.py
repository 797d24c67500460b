"""The AI shield's judges: the person's `shield_command`, else a model of the person's own labels.

The command is a program the person chose (a local model, any CLI): it is run without a shell, given the message's
bytes on its standard input (at most `MAX_INPUT`), and its first word on standard output is read (at most
`MAX_OUTPUT` bytes): `hostile` or `ok`, case and punctuation aside. Its standard error goes nowhere (it may echo the message; it
never reaches an answer or the log). A command that cannot start, exits with another status than 0, prints
something else, or is still running after `shield_timeout` seconds (then killed, with whatever it started in its
session) gives no verdict: the message stays unjudged, and says why.

The labels: `gateway mail hostile MID` and `gateway mail not-hostile MID` train a model of the spam filter's kind
(`spamfilter`: the same tokens, Robinson's f(w) and Fisher's chi-square, the same file format) in its own file,
`<data>/plugins/mail/shield-model.sqlite`, hostile in the place of spam. A message is hostile when its score is
0.5 or more (0.5 is what no evidence gives: with no evidence either way, mail to a shielded address is kept). The
model judges nothing until it holds at least one label of each kind. A message the person labelled is judged by
that label, whatever the command or the model says (`shield.label`, on the index's rows).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from attrs import frozen
from maildirs.shield import HOSTILE, OK, UNJUDGED
from spamfilter import store
from spamfilter.score import combine
from spamfilter.tokens import stripped, tokens

MAX_INPUT = 1024 * 1024  # bytes of a message given to the command: its headers and the start of its text
MAX_OUTPUT = 4096  # bytes of the command's output read: a word is asked for
MODEL_FILE = "shield-model.sqlite"
HOSTILE_AT = 0.5
_HOSTILE_COLUMN, _OK_COLUMN = "spam", "ham"  # the model file's names for the two kinds
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


@frozen
class Judgement:
    verdict: str  # HOSTILE, OK, or UNJUDGED
    judge: str  # "command", "labels", "person"
    reason: str = ""  # why no verdict


# -- the command --------------------------------------------------------------------------------------------------


def run_command(argv: tuple[str, ...], raw: bytes, timeout: float) -> Judgement:
    """The command's verdict on one message (see the module's docstring); never raises."""
    name = Path(argv[0]).name if argv else "?"
    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except (OSError, ValueError) as error:
        return Judgement(UNJUDGED, "command", f"the shield_command {name} could not be started "
                                              f"({getattr(error, 'strerror', None) or error})")
    with _running_lock:
        _running.add(process)
    try:
        threading.Thread(target=_feed, args=(process, raw[:MAX_INPUT]), daemon=True).start()
        end = time.monotonic() + timeout
        out = _read_bounded(process, end)
        try:
            status = process.wait(max(end - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            return Judgement(UNJUDGED, "command", f"the shield_command {name} did not answer within {timeout:g} s")
    finally:
        _stop(process)
        with _running_lock:
            _running.discard(process)
    if status != 0:
        return Judgement(UNJUDGED, "command", f"the shield_command {name} exited with status {status}")
    words = out.decode("utf-8", "replace").split()
    word = words[0].strip(".,:;!?\"'`*()[]").lower() if words else ""  # a model may write "Hostile." or "**ok**"
    if word in (HOSTILE, OK):
        return Judgement(word, "command")
    return Judgement(UNJUDGED, "command", f"the shield_command {name} printed neither hostile nor ok")


def _feed(process: subprocess.Popen, data: bytes) -> None:
    """The message on the command's standard input (a command that reads none of it is no error)."""
    with contextlib.suppress(OSError, ValueError):
        process.stdin.write(data)
    with contextlib.suppress(OSError, ValueError):
        process.stdin.close()


def _read_bounded(process: subprocess.Popen, end: float) -> bytes:
    """What the command printed, its first MAX_OUTPUT bytes kept, read until it closes its output or `end` passes."""
    out = bytearray()
    descriptor = process.stdout.fileno()
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([descriptor], [], [], left)
        if not ready:
            continue
        chunk = os.read(descriptor, 65536)
        if not chunk:
            break
        if len(out) < MAX_OUTPUT:  # the rest is read and dropped, so that a chatty judge never blocks on its pipe
            out += chunk[:MAX_OUTPUT - len(out)]
    with contextlib.suppress(OSError):
        process.stdout.close()
    return bytes(out)


def _stop(process: subprocess.Popen) -> None:
    """The command and whatever it started in its session, killed if still there, then reaped."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


def stop_all() -> None:
    """Every judge still running in this process, killed (when the process exits)."""
    with _running_lock:
        running = list(_running)
    for process in running:
        _stop(process)


# -- the person's labels and their model ---------------------------------------------------------------------------


def model_path(data: Path) -> Path:
    return Path(data) / MODEL_FILE


def label_key(message_id: str) -> str:
    return f"mid:{message_id}"


def tokens_of(raw: bytes) -> set[str] | None:
    """The spam filter's tokens of a message, or None when it cannot be read (out of the filter's bounds)."""
    try:
        return tokens(stripped(raw))
    except Exception:  # noqa: BLE001 - a stranger's file: unjudged, never a failed call
        return None


class Labels:
    """The person's labels and the model trained on them, opened once for a pass over many messages."""

    def __init__(self, data: Path) -> None:
        self.table: store.Table | None = None
        self.problem = ""
        try:
            self.table = store.Table(model_path(data))
        except store.ModelError:
            self.problem = ("no shield_command is set and the person has labelled no mail yet (gateway mail "
                            "hostile MID, gateway mail not-hostile MID)")
            return
        if not self.table.spam or not self.table.ham:
            self.problem = ("no shield_command is set and the person's labels need at least one hostile and one "
                            "not-hostile message (gateway mail hostile MID, gateway mail not-hostile MID)")

    def close(self) -> None:
        if self.table is not None:
            self.table.close()
            self.table = None

    def __enter__(self) -> Labels:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def judge(self, raw: bytes) -> Judgement:
        if self.problem or self.table is None:
            return Judgement(UNJUDGED, "labels", self.problem)
        found = tokens_of(raw)
        if found is None:
            return Judgement(UNJUDGED, "labels", "the message cannot be read to be judged (broken, or nested too deep)")
        return Judgement(self.verdict_of(found), "labels")

    def verdict_of(self, found: Iterable[str]) -> str:
        assert self.table is not None
        score, _strength, _clues = combine(self.table.counts(found), self.table.spam, self.table.ham)
        return HOSTILE if score >= HOSTILE_AT else OK


def learn(data: Path, message_id: str, raw: bytes, verdict: str) -> tuple[int, int]:
    """Train the model on the person's label of one message (taking back an earlier label of it); returns how
    many hostile and not-hostile messages the model then holds. Raises ValueError when the message cannot be read."""
    found = tokens_of(raw)
    if found is None:
        raise ValueError("the message cannot be read as mail (broken, or nested too deep)")
    path = model_path(data)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = os.open(path.with_name(f".{MODEL_FILE}.lock"), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counts: dict[str, list[int]] = {}
        trained: dict[str, str] = {}
        totals = [0, 0]
        if path.exists():
            table = store.Table(path)
            try:
                counts, trained = table.everything()
                totals = [table.spam, table.ham]
            finally:
                table.close()
        key, label = label_key(message_id), _HOSTILE_COLUMN if verdict == HOSTILE else _OK_COLUMN
        before = trained.get(key)
        if before != label:
            if before is not None:
                _count(counts, totals, found, before, -1)
            _count(counts, totals, found, label, 1)
            trained[key] = label
            store.write(path, totals[0], totals[1], counts, trained)
        return totals[0], totals[1]
    finally:
        os.close(lock)


def _count(counts: dict[str, list[int]], totals: list[int], found: Iterable[str], label: str, sign: int) -> None:
    column = 0 if label == _HOSTILE_COLUMN else 1
    for token in found:
        pair = counts.setdefault(token, [0, 0])
        pair[column] = max(0, pair[column] + sign)
        if pair == [0, 0]:
            del counts[token]
    totals[column] = max(0, totals[column] + sign)
