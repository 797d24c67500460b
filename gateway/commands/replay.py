"""A command's answer said again, without running the command, while nothing it depends on has changed.

Some commands are run again and again with nothing to do (`gateway mail index` from a timer, a minute after the
last run): most of their time is Python's imports and the plugins' loading, not their work. Such a command, when
it has finished, may keep what it printed (`record`, the public `gateway.replayable`) with the paths its answer
was read from. The next run of the very same command line (same arguments, working folder, Python, and the
variables that choose the gateway's folders and config) first looks at those paths (`replayed`, from
`gateway.commands.start`, before anything heavy is imported); when every one of them is as it was (the same file
or folder, size, modification time and mode, or still missing) it prints the kept answer and stops.

Besides the paths the command names, the answer depends on the code that made it and the config it read, so
these are looked at too: every module file the process had loaded (outside Python's own library, which is
named by its executable), each folder on `sys.path` (a package installed or removed changes it), the config
file and its folder. A path that changed less than two seconds before it was looked at may change again within
its time's granularity unseen: an answer that depends on one is not kept.

The kept answers are in the cache folder (`<cache>/replay`, one file per command line in Python's `marshal`
format, which loads without importing anything, 0600 in 0700 folders): they hold what the command printed, which never holds message text (a count, a time), and the paths.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
import zlib

TYPE_CHECKING = False  # typing itself is not imported: this module runs before anything else, see `replayed`
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

APP_NAME = "gateway"  # the folders' name: gateway.api.context.APP_NAME (a test keeps the two equal)
FORMAT = 1
SECONDS = "\x00seconds\x00"  # where the kept answer says how long the command took: said again with its own time
_SETTLE_NS = 2_000_000_000
# The command line this process runs as `gateway` (set by `replayed`, which gateway.commands.start calls first):
# None in a process that did not start so (a test's CliRunner, a program), which keeps nothing.
_running: list[str] | None = None
# What chooses the gateway's folders, its config and how it speaks: a command line run under other values is
# another command.
_ENVIRONMENT = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "LANG", "LC_ALL",
                "TZ")


def _cache_folder() -> str:
    """`<cache>/replay`: platformdirs's cache folder, worked out without importing it where its rule is short (the
    XDG rule of Linux and the BSDs; a test keeps the two equal)."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = os.environ.get("XDG_CACHE_HOME", "")
        base = base if base.strip() else os.path.expanduser("~/.cache")
        return os.path.join(base, APP_NAME, "replay")
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir(APP_NAME), "replay")


def _key(arguments: list[str]) -> tuple:
    """What makes a command line the same command: its arguments, working folder, Python and variables."""
    environment = {k: v for k, v in os.environ.items() if k in _ENVIRONMENT or k.startswith("GATEWAY_")}
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    return (FORMAT, tuple(arguments), here, sys.executable, sys.version, tuple(sorted(environment.items())))


def _file_of(key: tuple) -> str:
    """The kept answer's file name: a checksum of the key names it (the key itself, kept inside, is compared)."""
    return f"{zlib.crc32(repr(key).encode('utf-8', 'surrogateescape')):08x}.answer"


def _signature(path: str) -> tuple[int, int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_mode)


def replayed(arguments: list[str]) -> bool:
    """Print the kept answer of this command line, if there is one and nothing it depends on has changed."""
    global _running
    started = time.perf_counter()
    _running = list(arguments)
    key = _key(arguments)
    try:
        with open(os.path.join(_cache_folder(), _file_of(key)), "rb") as handle:
            kept = marshal.loads(handle.read())
        if kept["key"] != key:
            return False
        for path, signature in kept["watched"]:
            if _signature(path) != signature:
                return False
        output = kept["output"]
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return False
    sys.stdout.write(output.replace(SECONDS, f"{time.perf_counter() - started:.1f}"))
    sys.stdout.flush()
    return True


def record(output: str, watched: Iterable[Path | str], config: Path | None) -> bool:
    """Keep `output` (what the command printed, `SECONDS` where its time goes) for the next identical command line,
    with the paths it was read from; True when kept. Nothing is kept when a path changed too recently to be
    trusted, and a kept answer that cannot be written is left out (the command runs in full next time)."""
    from pathlib import Path

    if _running is None:
        return False
    folder = Path(_cache_folder())
    key = _key(_running)
    now = time.time_ns()
    paths = [str(p) for p in watched]
    if config is not None:
        paths += [str(config), str(Path(config).parent)]
    paths += [entry or "." for entry in sys.path]
    paths += _code_files()
    signatures = []
    for path in dict.fromkeys(paths):
        signature = _signature(path)
        if signature is not None and now - signature[2] < _SETTLE_NS:
            _forget(folder, key)
            return False
        signatures.append((path, signature))
    kept = {"key": key, "output": output, "watched": tuple(signatures)}
    try:
        for place in (folder.parent, folder):
            place.mkdir(parents=True, exist_ok=True, mode=0o700)
        final = folder / _file_of(key)
        part = folder / f"{final.name}.{os.getpid()}.part"
        descriptor = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(marshal.dumps(kept))
        os.replace(part, final)
    except OSError:
        return False
    return True


def _forget(folder: Path, key: tuple) -> None:
    try:
        (folder / _file_of(key)).unlink()
    except OSError:  # none was kept
        return


def _code_files() -> list[str]:
    """Every module file loaded in this process, but Python's own library's (the executable names that)."""
    import sysconfig

    own = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})
    files = []
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and not where.startswith(own):
            files.append(where)
    return sorted(files)


def replayable(output: str, watched: Iterable[Path | str]) -> bool:
    """For a plugin's command: keep what it printed (`output`, with `gateway.REPLAY_SECONDS` where it says how long
    it took), to be printed again by the next run of the same command line, without loading anything, while none of
    the `watched` paths (what the answer was read from), the config and the code has changed. True when kept.

    Call it only when running the command again would print the same thing if those paths are unchanged (a command
    whose answer depends on the clock or another program must not). Outside `gateway`'s command line, nothing is kept.
    """
    import click

    context = click.get_current_context(silent=True)
    session = context.find_root().obj if context is not None else None
    make = getattr(session, "gateway", None)
    if make is None:
        return False
    return record(output, watched, make().source.path)
