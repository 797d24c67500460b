"""Reminders from `remind` files (Dianne Skoll's remind, Debian's `remind`): read by the program itself.

remind's language (dates, OMIT, SATISFY, expressions, INCLUDE) is only fully understood by remind, so the program
is run, never imitated: `remind -r -b2 -pppN FILE DATE` prints N months of the file's reminders as JSON (date, time,
file, line, body), from DATE, in the zone given as TZ (the person's). `-r` turns off RUN and shell(): a remind file
can run commands, and the gateway runs none. The program gets no standard input, a small environment, TIMEOUT
seconds and its output read up to MAX_OUTPUT bytes; what goes wrong is said in a sentence, never a failed call.

The file: the `remind` setting (a file, or a folder of `*.rem` files, as remind reads one), else `~/.reminders`
(remind's own default) when it exists; none is no reminder.

Each reminder has an address, `sioul:remind/<file>@<hash>`: its file relative to the remind setting's folder (an
INCLUDEd file elsewhere by its name only) and the first HASH_LENGTH hex digits of the SHA-256 of the line remind
read it from (its continuation lines joined, surrounding blanks left out), `-2`, `-3`... after it for the second
and later identical lines of a file. The line's number is not in it: adding or removing lines elsewhere in the file
does not move it; editing the reminder's own line makes it a new reminder. Read by its address (`occurrences`),
remind is run over LOOK_BACK before today and LOOK_AHEAD after it, and the reminder is its occurrences there: one
that rings in neither is no longer there. The words the gate places a reminder by are what remind says of it and
its whole line (`traits`), so a word a `%"...%"` body leaves out still keeps it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from gateway import Context, PluginHost, Traits
from gateway_mail import zone

DEFAULT_FILE = "~/.reminders"
TIMEOUT = 10.0
MAX_OUTPUT = 8 << 20
MAX_ENTRIES = 10_000
MAX_SOURCE = 4 << 20  # a remind file read for its lines' hashes up to this size; a bigger one's reminders get none
HASH_LENGTH = 12
WRITTEN_LIMIT = 8_000  # of a reminder's line, kept for the gate's words
LOOK_BACK = timedelta(days=31)  # what a reminder's address finds of it: its occurrences from a month ago...
LOOK_AHEAD = timedelta(days=366)  # ...to a year ahead


@frozen
class Entry:
    """One reminder remind gives: when (in the person's zone; a day's start when it has no time), what it says
    (masked), and where it was written (its file relative to the remind setting's folder, and its line)."""

    at: datetime
    timed: bool
    body: str
    file: str  # absolute: for the gate's traits only, never shown
    shown_file: str
    line: int
    ident: str = ""  # its address's part after `sioul:remind/` ("" when its file could not be read again)
    written: str = ""  # the line remind read it from: for the gate's words only, never shown

    @property
    def address(self) -> str:
        from gateway_mail.projects.ties import address

        return address("remind", self.ident) if self.ident else ""


def source(ctx: Context) -> tuple[Path | None, bool]:
    """The remind file or folder, and whether the person named it (a named one missing is said)."""
    named = ctx.path_setting("remind")
    if named is not None:
        return named, True
    default = Path(DEFAULT_FILE).expanduser()
    return (default, False) if default.exists() else (None, False)


def entries(ctx: Context, begin: datetime, finish: datetime, tz: tzinfo, ident: str | None = None,
            ) -> tuple[list[Entry], str]:
    """remind's reminders from `begin` to `finish` (a day's untimed ones from that day's start) and a sentence
    when something kept them from being read ("" when all went well or there is no remind file); with `ident`,
    only the occurrences of the reminder of that address."""
    from gateway import mask

    path, named = source(ctx)
    if path is None:
        return [], ""
    if not path.exists():
        return [], (f"The remind file {_shown(path)} does not exist ([plugins.mail] remind in the gateway's config): "
                    "its reminders are left out until it is there." if named else "")
    program = shutil.which("remind")
    if program is None:
        return [], (f"The remind file {_shown(path)} is there but the remind program is not installed (Debian: "
                    "apt install remind): its reminders are left out.")
    first, last = begin.astimezone(tz).date(), (finish.astimezone(tz) - timedelta(seconds=1)).date()
    months = (last.year - first.year) * 12 + last.month - first.month + 1
    folder = path if path.is_dir() else path.parent
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home()),
                   "TZ": zone.zone_name(tz), "LANG": "C.UTF-8"}
    try:
        done = subprocess.run([program, "-r", "-b2", f"-ppp{months}", str(path), first.isoformat()],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, env=environment,
                              cwd=str(folder), check=False)
    except subprocess.TimeoutExpired:
        return [], f"remind took over {TIMEOUT:.0f} s on {_shown(path)} and was stopped: its reminders are left out."
    except OSError as error:
        return [], f"remind could not be run ({error.strerror}): its reminders are left out."
    try:
        months_read = json.loads(done.stdout[:MAX_OUTPUT].decode("utf-8", "replace") or "[]")
    except ValueError:
        return [], (f"remind gave no calendar for {_shown(path)} (exit {done.returncode}; run `remind -n` on it to "
                    "see why): its reminders are left out.")
    found = []
    lines = _Lines()
    for month in months_read if isinstance(months_read, list) else []:
        for entry in (month.get("entries") or []) if isinstance(month, dict) else []:
            made = _entry(entry, folder, tz, mask)
            if made is None or not (begin <= made.at + (timedelta(days=1) if not made.timed else timedelta(0))
                                    and made.at < finish):
                continue
            made = lines.named(made)
            if ident is None or made.ident == ident:
                found.append(made)
            if len(found) >= MAX_ENTRIES:
                break
    return found, ""


def occurrences(ctx: Context, ident: str | None, tz: tzinfo) -> tuple[list[Entry], str]:
    """The occurrences of the reminder at `sioul:remind/<ident>` (of every reminder when None) from LOOK_BACK before
    today's start to LOOK_AHEAD after it (none: it is not there, or no longer rings), and a sentence when remind
    could not say."""
    today = zone.day_start(zone.now_in(tz).date(), tz)
    return entries(ctx, today - LOOK_BACK, today + LOOK_AHEAD, tz, ident)


def traits(found: list[Entry], tied: frozenset[str] = frozenset()) -> Traits:
    """A reminder's traits (over its occurrences `found`): its files and their folders, and its words (what remind
    says and the line it was written on); the projects it is `tied` to."""
    paths = tuple(dict.fromkeys(p for e in found for p in (e.file, str(Path(e.file).parent))))
    words = tuple(dict.fromkeys(w for e in found for w in (e.body, e.written) if w))
    return Traits(paths=paths, words=words, projects=tuple(sorted(tied)))


class _Lines:
    """Each remind file's lines, read once per reading (bounded by MAX_SOURCE), and the ident of each line."""

    def __init__(self) -> None:
        self.files: dict[str, dict[int, tuple[str, str]] | None] = {}
        self.masked: dict[str, str] = {}  # each line's words masked once, however often it rings

    def named(self, entry: Entry) -> Entry:
        from gateway import mask

        lines = self.files.get(entry.file, False)
        if lines is False:
            lines = self.files[entry.file] = _idents(entry.file, entry.shown_file)
        if not lines or entry.line not in lines:
            return entry
        ident, written = lines[entry.line]
        if ident not in self.masked:
            self.masked[ident] = mask(written)
        return evolve(entry, ident=ident, written=self.masked[ident])


def _idents(file: str, shown_file: str) -> dict[int, tuple[str, str]] | None:
    """For each line number of a remind file, the ident of the (logical) line it belongs to, and that line."""
    from gateway_mail import contentlines

    try:  # the file remind read, through the person's own links, but never a FIFO
        with contentlines.open_regular(os.path.realpath(file)) as handle:
            if os.fstat(handle.fileno()).st_size > MAX_SOURCE:
                return None
            text = handle.read(MAX_SOURCE + 1).decode("utf-8", "replace")
    except OSError:
        return None
    found: dict[int, tuple[str, str]] = {}
    seen: dict[str, int] = {}
    numbers: list[int] = []
    parts: list[str] = []
    physical = text.split("\n")
    for number, line in enumerate(physical, start=1):
        line = line.removesuffix("\r")
        numbers.append(number)
        parts.append(line)
        if line.endswith("\\") and number < len(physical):
            continue  # remind's continuation: the next line is part of this one
        written = "\n".join(parts).strip()
        digest = hashlib.sha256(written.encode("utf-8")).hexdigest()[:HASH_LENGTH]
        seen[digest] = seen.get(digest, 0) + 1
        ident = f"{shown_file}@{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")
        for one in numbers:
            found[one] = (ident, written[:WRITTEN_LIMIT])
        numbers, parts = [], []
    return found


def _entry(entry: Any, folder: Path, tz: tzinfo, mask: Any) -> Entry | None:
    try:
        day = date.fromisoformat(str(entry["date"]))
        minutes = entry.get("time")
        timed = isinstance(minutes, int) and 0 <= minutes < 24 * 60
        at = zone.day_start(day, tz) + (timedelta(minutes=minutes) if timed else timedelta(0))
        file = Path(str(entry.get("filename") or ""))
        real = file if file.is_absolute() else folder / file
        try:
            shown = str(real.relative_to(folder))
        except ValueError:
            shown = real.name  # an INCLUDEd file elsewhere: its name only
        return Entry(at, timed, mask(str(entry.get("body") or "")), str(real), shown, int(entry.get("lineno") or 0))
    except (KeyError, TypeError, ValueError, OverflowError):
        return None


def _shown(path: Path) -> str:
    from gateway_mail.shown import shown_path

    return shown_path(path)


def _host_context(host: PluginHost) -> tuple[Context, tzinfo] | None:
    try:
        tz = zone.zone_of(host.settings)
    except zone.ZoneError:
        return None
    return Context(plugin=host.name, settings=host.settings, folders=host.folders, gate=host.gate), tz


def traits_at(host: PluginHost, address: str) -> Traits | None:
    """For `gateway access why`: the traits of the reminder at `address`, as its reading places it (None when
    remind gives nothing of it around today)."""
    from gateway_mail.projects.projects import tied_projects
    from gateway_mail.projects.ties import ident_of

    ident, made = ident_of(address, "remind"), _host_context(host)
    if ident is None or made is None:
        return None
    ctx, tz = made
    found, _said = occurrences(ctx, ident, tz)
    return traits(found, tied_projects(ctx, address)) if found else None


def census(host: PluginHost) -> Iterator[tuple[str, Traits]]:
    """For `gateway access list`: each reminder remind gives around today (as its address finds it), with its
    traits."""
    made = _host_context(host)
    if made is None:
        return
    ctx, tz = made
    today = zone.day_start(zone.now_in(tz).date(), tz)
    found, _said = entries(ctx, today - LOOK_BACK, today + LOOK_AHEAD, tz)
    by_ident: dict[str, list[Entry]] = {}
    for entry in found:
        by_ident.setdefault(entry.ident or f"{entry.shown_file}:{entry.line}", []).append(entry)
    for same in by_ident.values():
        yield f"remind file {same[0].shown_file}", traits(same)
