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
that label, whatever the command or the model says (`shield.label`, on the index's rows; `Labels.person`, for a file
of the very bytes labelled that the index's rows do not know).

The model records the tokenizer's version it was counted with and, for each label, the digest of the bytes it
counted: a label is taken back exactly, and a model of another version is counted again from the labels (`learn`,
`relearn`; the plugin's README says when).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from attrs import Factory, define, frozen
from maildirs.shield import HOSTILE, OK, UNJUDGED
from spamfilter import store
from spamfilter import tokens as _tokenizer
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
        self.stale = False
        try:
            self.table = store.Table(model_path(data))
        except store.ModelError:
            self.problem = ("no shield_command is set and the person has labelled no mail yet (gateway mail "
                            "hostile MID, gateway mail not-hostile MID)")
            return
        if is_stale(self.table):  # its counts are of other tokens than a message gives now: it waits for its count
            self.stale = True
            self.problem = ("no shield_command is set and the model of the person's labels is being counted again "
                            "for the spam filter's new tokenizer (gateway mail index counts it at once)")
        elif not self.table.spam or not self.table.ham:
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

    def person(self, message_id: str, raw: bytes) -> Judgement | None:
        """The person's label, when they labelled these very bytes under this Message-ID (a message gone from the
        index and back, an index made anew): it stands, whatever a judge would say. None when they did not."""
        if self.table is None or not message_id:
            return None
        found = self.table.label_of(label_key(message_id))
        if found is None or not found[1] or found[1] != digest_of(raw):
            return None
        return Judgement(HOSTILE if found[0] == _HOSTILE_COLUMN else OK, "person")

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


# -- the model's upkeep: labels learnt, taken back, counted again ----------------------------------------------------

# What a label needs to be taken back exactly is the tokens it added. They are not kept (a message gives hundreds of
# tokens: thousands of labels would make the model file tens of megabytes); what is kept is the identity of the
# bytes they were made from (the SHA-256 of the message as read to judge it, as the shield's table hashes it) and
# the tokenizer's version (one for the whole model). The same bytes under the same version give the same tokens, so
# taking a label back subtracts the tokens of its copy of those bytes; when that copy is gone or the version
# changed, the whole model is counted again from the labels (`_recount`): exact either way.
Copies = Callable[[str], Iterable[bytes]]  # a Message-ID's indexed copies, each as read to judge it (first found first)


@define
class _Model:
    counts: dict[str, list[int]] = Factory(dict)
    trained: dict[str, str] = Factory(dict)  # label_key: the model file's column name of its label
    sources: dict[str, tuple[str, bool]] = Factory(dict)  # label_key: (digest of the bytes labelled, counted)
    totals: list[int] = Factory(lambda: [0, 0])  # hostile and not-hostile messages counted
    version: int | None = None  # the tokenizer's, None for a model that predates its record


@frozen
class Learnt:
    """What a label or a new count left in the model."""

    hostile: int  # messages counted as hostile
    ok: int  # and as not hostile
    recounted: int = 0  # labels counted again (all of them) for the tokenizer's current version; 0 when not
    uncounted: tuple[str, ...] = ()  # Message-IDs of labels whose message is not found: they stand, uncounted


def digest_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def learn(data: Path, message_id: str, verdict: str, copies: Copies) -> Learnt:
    """Train the model on the person's label of one message (taking back exactly what an earlier label of it added).
    `copies` finds a Message-ID's indexed copies: the one labelled is the copy of the bytes labelled before if there
    is one, else the first; the other labels' messages are looked for when the model must be counted again. Raises
    ValueError when no copy can be read, or it cannot be read as mail; nothing is then written."""
    path = model_path(data)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key, label = label_key(message_id), _HOSTILE_COLUMN if verdict == HOSTILE else _OK_COLUMN
    with _locked(path):
        model = _read(path)
        picked = _pick(copies(message_id), model.sources.get(key, ("", False))[0], strict=False)
        if picked is None:
            raise ValueError("its file cannot be read now (gateway mail index reads the Maildir again; then try "
                             "again)")
        raw, digest = picked
        found = tokens_of(raw)
        if found is None:
            raise ValueError("the message cannot be read as mail (broken, or nested too deep)")
        recounted, changed = 0, False
        if model.version != _tokenizer.VERSION:
            model, recounted, changed = _recount(model, copies), len(model.trained), True
        else:
            changed = _count_missing(model, copies, leave=key)
        before = model.trained.get(key)
        counted_digest, counted = model.sources.get(key, ("", False))
        if before is not None and counted and counted_digest != digest:
            # The bytes counted for the earlier label are not those at hand: their tokens are taken out by counting
            # every other label again.
            del model.trained[key], model.sources[key]
            model, changed = _recount(model, copies), True
            recounted = len(model.trained) + 1
            before, counted = None, False
        if before != label or not counted:
            if before is not None and counted:
                _count(model, found, before, -1)
            _count(model, found, label, 1)
            model.trained[key], model.sources[key] = label, (digest, True)
            changed = True
        if changed:
            _write(path, model)
        return _learnt(model, recounted)


def relearn(data: Path, copies: Copies) -> Learnt | None:
    """Count the model again from the person's labels when it was counted with another version of the tokenizer (or
    before the version was recorded), each labelled message found again by `copies` and tokenized anew; else count
    the labels whose message was not found before and is now. None when there was nothing to do. Written whole,
    under the model's lock; never raises for a model that cannot be read (the labels' judge says it)."""
    path = model_path(data)
    try:
        table = store.Table(path)
    except store.ModelError:
        return None
    try:
        stale, missing = is_stale(table), table.sources(uncounted_only=True)
    finally:
        table.close()
    # A label whose message is gone for good is looked for at each pass (gateway watch's rounds): found first, before
    # the whole model is read.
    if not stale and not any(_pick(copies(key.removeprefix("mid:")), digest, strict=True) is not None
                             for key, (digest, _counted) in missing.items()):
        return None
    with _locked(path):
        try:
            model = _read(path)
        except ValueError:
            return None
        if model.version != _tokenizer.VERSION:
            model, recounted = _recount(model, copies), len(model.trained)
        elif _count_missing(model, copies):
            recounted = 0
        else:
            return None
        _write(path, model)
        return _learnt(model, recounted)


def is_stale(table: store.Table) -> bool:
    """Whether the model was counted with another version of the tokenizer than today's (or an unrecorded one)."""
    return table.tokens_version != _tokenizer.VERSION


def uncounted(data: Path) -> list[str]:
    """The Message-IDs of the labels whose message was not found when the model was last counted."""
    try:
        table = store.Table(model_path(data))
    except store.ModelError:
        return []
    try:
        return sorted(key.removeprefix("mid:") for key in table.sources(uncounted_only=True))
    finally:
        table.close()


def uncounted_said(message_ids: tuple[str, ...] | list[str], limit: int = 10) -> str:
    """The sentence that names the labels whose message is not found (for the label commands and doctor)."""
    named = ", ".join(f"mid:{m}" for m in message_ids[:limit]) + (", ..." if len(message_ids) > limit else "")
    count = len(message_ids)
    return (f"{count} labelled message{'s' if count != 1 else ''} cannot be found in the mail index as labelled "
            f"({named}): each label stands as the verdict of its message, should it come back, and the model learns "
            "from it again once it is found")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The model's lock (every writer of it takes it: a label command, a server counting it again)."""
    lock = os.open(path.with_name(f".{MODEL_FILE}.lock"), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)


def _read(path: Path) -> _Model:
    """The model in memory (an empty one of today's tokenizer when there is no file). Raises ValueError when the
    file is there but cannot be read."""
    if not path.exists():
        return _Model(version=_tokenizer.VERSION)
    try:
        table = store.Table(path)
    except store.ModelError as error:
        raise ValueError(f"the shield's model {path} cannot be read ({error}); move it away and label again") \
            from error
    try:
        counts, trained = table.everything()
        sources = table.sources()
        # A model that predates the record of sources counted each of its labels (from bytes it did not identify).
        sources.update({key: ("", True) for key in trained.keys() - sources.keys()})
        return _Model(counts, trained, sources, [table.spam, table.ham], table.tokens_version)
    finally:
        table.close()


def _write(path: Path, model: _Model) -> None:
    store.write(path, model.totals[0], model.totals[1], model.counts, model.trained,
                tokens_version=model.version, sources=model.sources)


def _learnt(model: _Model, recounted: int) -> Learnt:
    return Learnt(model.totals[0], model.totals[1], recounted,
                  tuple(sorted(k.removeprefix("mid:") for k, (_d, counted) in model.sources.items() if not counted)))


def _pick(copies: Iterable[bytes], digest: str, strict: bool) -> tuple[bytes, str] | None:
    """The copy of the bytes of `digest`, else (unless `strict`, or with no digest) the first copy; with its digest.
    Strict is how a label is found again: a copy of other bytes under its Message-ID (which a sender chooses) is
    another message, never counted under the person's label."""
    first = None
    for raw in copies:
        found = digest_of(raw)
        if found == digest:
            return raw, found
        if first is None:
            first = (raw, found)
    return None if strict and digest else first


def _recount(model: _Model, copies: Copies) -> _Model:
    """The model counted anew, for today's tokenizer, from the labels of `model`: each labelled message found again
    (the bytes it was labelled on) and tokenized; a label whose message is not found stands, uncounted."""
    fresh = _Model(trained=dict(model.trained), version=_tokenizer.VERSION)
    for key, label in sorted(model.trained.items()):
        digest = model.sources.get(key, ("", False))[0]
        if not _add_found(fresh, copies, key, label, digest):
            fresh.sources[key] = (digest, False)
    return fresh


def _count_missing(model: _Model, copies: Copies, leave: str = "") -> bool:
    """The labels not counted before whose message is found now, counted; whether there was one."""
    added = False
    for key, (digest, counted) in sorted(model.sources.items()):
        if not counted and key != leave:
            added = _add_found(model, copies, key, model.trained[key], digest) or added
    return added


def _add_found(model: _Model, copies: Copies, key: str, label: str, digest: str) -> bool:
    picked = _pick(copies(key.removeprefix("mid:")), digest, strict=True)
    found = tokens_of(picked[0]) if picked is not None else None
    if found is None:
        return False
    _count(model, found, label, 1)
    model.sources[key] = (picked[1], True)
    return True


def _count(model: _Model, found: Iterable[str], label: str, sign: int) -> None:
    column = 0 if label == _HOSTILE_COLUMN else 1
    counts = model.counts
    for token in found:
        pair = counts.setdefault(token, [0, 0])
        pair[column] = max(0, pair[column] + sign)
        if pair == [0, 0]:
            del counts[token]
    model.totals[column] = max(0, model.totals[column] + sign)
