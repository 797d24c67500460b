"""The computer's own time zone, found by its name so that a day of the other season (summer or winter time) is
cut at its own midnight: a plugin asks `computer_zone()` when neither its own `timezone` key nor `[gateway]
timezone` names one (`Context.timezone`)."""

from __future__ import annotations

import os
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def _identity(path: str) -> tuple[int, ...] | None:
    """What tells a version of a file (or of a link itself) from another; None when it is not there."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_dev, found.st_mtime_ns, found.st_size)


# The zone found last, with what it was found from: $TZ and the identity of /etc/localtime and /etc/timezone.
_found: tuple[tuple[Any, ...], tzinfo] | None = None


def computer_zone() -> tzinfo:
    """The computer's zone: $TZ, else /etc/localtime's name, else its fixed offset now.

    Found again only when $TZ, /etc/localtime or /etc/timezone changed (the person moved the computer's zone): two
    lstat calls, where resolving /etc/localtime's link takes one per folder of its target (a link further along the
    chain changed in place is not seen: systems change the zone by replacing /etc/localtime). A zone known only by its
    offset now is not kept (the offset changes with summer time).
    """
    global _found
    key = (os.environ.get("TZ"), _identity("/etc/localtime"), _identity("/etc/timezone"))
    if _found is not None and _found[0] == key:
        return _found[1]
    zone, named = _computer_zone()
    _found = (key, zone) if named else None
    return zone


def _computer_zone() -> tuple[tzinfo, bool]:
    """The computer's zone, and whether it was found by its name."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name), True
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            return ZoneInfo(target.split("zoneinfo/", 1)[1]), True
    except (ZoneInfoNotFoundError, ValueError, OSError):
        pass
    try:
        return ZoneInfo(Path("/etc/timezone").read_text().strip()), True
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    local = datetime.now().astimezone().tzinfo
    return (local if local is not None else ZoneInfo("UTC")), False
