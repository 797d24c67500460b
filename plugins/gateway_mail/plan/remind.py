"""Reminders from `remind` files (Dianne Skoll's remind, Debian's `remind`): read by the program itself.

remind's language (dates, OMIT, SATISFY, expressions, INCLUDE) is only fully understood by remind, so the program
is run, never imitated: `remind -r -b2 -pppN FILE DATE` prints N months of the file's reminders as JSON (date, time,
file, line, body), from DATE, in the zone given as TZ (the person's). `-r` turns off RUN and shell(): a remind file
can run commands, and the gateway runs none. The program gets no standard input, a small environment, TIMEOUT
seconds and its output read up to MAX_OUTPUT bytes; what goes wrong is said in a sentence, never a failed call.

The file: the `remind` setting (a file, or a folder of `*.rem` files, as remind reads one), else `~/.reminders`
(remind's own default) when it exists; none is no reminder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import Context
from gateway_mail import zone

DEFAULT_FILE = "~/.reminders"
TIMEOUT = 10.0
MAX_OUTPUT = 8 << 20
MAX_ENTRIES = 10_000


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


def source(ctx: Context) -> tuple[Path | None, bool]:
    """The remind file or folder, and whether the person named it (a named one missing is said)."""
    named = ctx.path_setting("remind")
    if named is not None:
        return named, True
    default = Path(DEFAULT_FILE).expanduser()
    return (default, False) if default.exists() else (None, False)


def entries(ctx: Context, begin: datetime, finish: datetime, tz: tzinfo) -> tuple[list[Entry], str]:
    """remind's reminders from `begin` to `finish` (a day's untimed ones from that day's start) and a sentence
    when something kept them from being read ("" when all went well or there is no remind file)."""
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
    for month in months_read if isinstance(months_read, list) else []:
        for entry in (month.get("entries") or []) if isinstance(month, dict) else []:
            made = _entry(entry, folder, tz, mask)
            if made is not None and begin <= made.at + (timedelta(days=1) if not made.timed else timedelta(0)) \
                    and made.at < finish:
                found.append(made)
            if len(found) >= MAX_ENTRIES:
                break
    return found, ""


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
