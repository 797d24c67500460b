"""The compiled client of the long-lived classifier (`classify.c`, beside this file), built on the person's machine.

A delivery rule runs one process per message. Python's own start (`python -I -S -c pass`) costs more than the
10 ms a message should, so the quickest client is a small C program, as spamc is to spamd: it reads the message,
hands it to `gateway-spam-classify --serve` over its socket and prints its answer, and when no trusted classifier
answers it executes the Python command, which judges the message itself.

`gateway spam client` builds it with the system's C compiler (`$CC`, else `cc`) into the spam plugin's data
folder, as `gateway-spam-classify` there, and prints that path. The program holds the paths of this installation's
Python and of `spamfilter/deliver.py` (what it runs when no classifier answers), and the command's limit on a
message's size and its request's words, all given as definitions when it is compiled: after the gateway is
upgraded or moved, build it again. Nothing here runs at import time; the C file ships inside the wheel.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

NAME = "gateway-spam-classify"  # the program's name in the data folder
SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=,:@ ")


class ClientError(Exception):
    """The client cannot be built here; the message says what to do."""


def _c_string(text: str | bytes) -> str:
    """A C string literal of `text`'s bytes, every byte outside a plain set written as a three-digit octal
    escape (so that no path, whatever its bytes, can end the literal or the definition early)."""
    raw = os.fsencode(text) if isinstance(text, str) else text
    return '"' + "".join(chr(b) if b in SAFE else f"\\{b:03o}" for b in raw) + '"'


def definitions(python: str | None = None, timeout: int | None = None) -> list[str]:
    """The compiler's -D options: the Python command to fall back on, its limit on a message, the request's first
    word, the socket's name and the seconds to wait for the classifier's reply, all taken from the Python command
    itself (`timeout`, when given, replaces the last: the tests wait less, or longer)."""
    from spamfilter import MAX_MESSAGE, classify
    from spamfilter.verdicts import PROTOCOL, SOCKET

    deliver = os.path.join(os.path.dirname(os.path.abspath(classify.__file__)), "deliver.py")
    return [f"-DGATEWAY_PYTHON={_c_string(python or sys.executable)}", f"-DGATEWAY_DELIVER={_c_string(deliver)}",
            f"-DMAX_MESSAGE={int(MAX_MESSAGE)}L", f"-DPROTOCOL={_c_string(PROTOCOL)}",
            f"-DSOCKET_NAME={_c_string(SOCKET)}",
            f"-DREPLY_TIMEOUT_SECONDS={max(1, int(timeout or classify.REPLY_TIMEOUT))}"]


def compiler() -> list[str]:
    """The C compiler's command: `$CC` (split as a shell would), else `cc`; ClientError when there is none."""
    command = shlex.split(os.environ.get("CC", "").strip() or "cc")
    if shutil.which(command[0]) is None:
        raise ClientError(f"no C compiler found ({command[0]}): install one (on Debian or Ubuntu: "
                          f"apt-get install gcc libc6-dev) or name it in CC, then run this again; until then a "
                          f"delivery rule can run `gateway-spam-classify --command`'s command line")
    return command


def build(folder: str | os.PathLike, *, python: str | None = None, flags: tuple[str, ...] = (),
          timeout: int | None = None) -> Path:
    """Compile the client into `folder` (made if missing) as `gateway-spam-classify`, executable by its owner
    alone, and return its path. It is written under another name and renamed into place, so a delivery that
    runs it meanwhile finds the old program or the new, never half of one. `python` is the interpreter the
    client falls back on (this one by default); `flags` are added to the compiler's (the tests ask for every
    warning as an error); `timeout`, the seconds it waits for the classifier's reply (the Python command's by
    default)."""
    command = compiler()
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, partial = tempfile.mkstemp(prefix=f".{NAME}.", dir=target)
    os.close(handle)
    try:
        with resources.as_file(resources.files(__package__) / "classify.c") as source:
            done = subprocess.run([*command, "-std=c99", "-O2", *flags, *definitions(python, timeout), "-o",
                                   partial, str(source)], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()[-12:]
            raise ClientError(f"{command[0]} could not build the client (exit {done.returncode}):\n"
                              + "\n".join(said))
        os.chmod(partial, 0o700)
        os.replace(partial, target / NAME)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target / NAME
