"""`gateway-spam-classify [--data DIR] [--ham-cutoff X] [--spam-cutoff Y] [--here] FILE|-`: one message's verdict.

What a procmail or maildrop rule runs for each delivered message (also what `gateway spam classify` runs). It
prints `spam 0.998712` (the verdict, then the score) and exits as bogofilter does: 0 spam, 1 ham, 2 unsure,
3 error (no model yet, unreadable file or message); and 4 for a file that is not mail at all (no header block).

When the long-lived classifier runs (`gateway-spam-classify --serve`, as spamd runs beside spamc), the command
only reads the file and hands its bytes over the classifier's socket (`classify.sock` in the data folder): it then
imports no more than Python's own socket module, and the verdict is the one the classifier's `judge` gives, the
same function this process would run. When no classifier answers (none started, or it is busy or gone), or with
`--here`, the message is judged in this process: the email package, SQLite and this library, nothing of the
gateway (no MCP SDK, no plugin system, no click). Either way the model is looked up (the message's tokens, a few
hundred rows), not loaded, and it is the newest one trained.

The quickest Python start is `-I -S` (no site-packages to scan) on `deliver.py` beside this file:
`gateway-spam-classify --command` prints that command line for this installation, for a delivery rule. Quicker
still is the compiled client `gateway spam client` builds (the spam plugin's `client/classify.c`): it speaks the
same request to the classifier, trusts its socket by the same checks (`trusted`, then the listener's user), prints
what this command prints, and runs this command (by that same command line) whenever no classifier answers.

The folder is the spam plugin's data folder (`$XDG_DATA_HOME/gateway/plugins/spam`, else `~/.local/share/...`),
or --data. The cutoffs are --ham-cutoff/--spam-cutoff when given, else those the model was last trained with (the
config's at the time), else the defaults (0.45 and 0.80): after changing them in the config, train again or pass
them here. (`python -m spamfilter.classify ...` is the same command, a few milliseconds slower to start: runpy.)
"""

from __future__ import annotations

import os
import sys

# No pathlib here, and nothing imported at the top but os, sys and the verdicts' words: every import is paid for
# each delivery.
from spamfilter.verdicts import (  # noqa: F401 - the command's names, as callers and tests have known them
    ERROR,
    EXIT_CODES,
    HAM,
    NOT_MAIL,
    PROTOCOL,
    SOCKET,
    SOCKET_PATH_MAX,
    SPAM,
    UNSURE,
    Judged,
    judge,
)

USAGE = ("usage: gateway-spam-classify [--data DIR] [--ham-cutoff X] [--spam-cutoff Y] [--here] FILE|-\n"
         "       gateway-spam-classify [--data DIR] --serve | --command")
REPLY_TIMEOUT = 10.0  # seconds the command waits for the classifier before judging the message itself


def data_folder() -> str:
    """The spam plugin's data folder, as the gateway finds it (platformdirs' rule for Linux's XDG folders)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.local/share")
    return os.path.join(base, "gateway", "plugins", "spam")


def _read(file: str) -> bytes:
    from spamfilter import MAX_MESSAGE, read_message

    if file == "-":
        return sys.stdin.buffer.read(MAX_MESSAGE)
    return read_message(file)


def _line(file: str, judged: Judged) -> tuple[int, str]:
    code, text, about_file = judged
    if code in (ERROR, NOT_MAIL):
        return code, f"error: {file}: {text}" if about_file else f"error: {text}"
    return code, text


def run(file: str, data: str | os.PathLike | None = None,
        cutoffs: tuple[float | None, float | None] = (None, None)) -> tuple[int, str]:
    """(exit code, the line to print), judged in this process: the verdict and score on success, else a sentence
    saying what to do."""
    data = data_folder() if data is None else os.fspath(data)
    try:
        raw = _read(file)
    except OSError as error:
        return ERROR, f"error: {file}: {error.strerror or error}"
    return _line(file, judge(raw, data, cutoffs))


def connect(sockets, path: str):  # noqa: ANN001, ANN201 (the socket module, or its C half; a socket)
    """A stream connected to the classifier's socket at `path`; a path longer than AF_UNIX takes (107 bytes) is
    named through its folder's descriptor (/proc/self/fd/N/classify.sock), which changes nothing of this process."""
    connection = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    try:
        connection.settimeout(REPLY_TIMEOUT)
        if len(os.fsencode(path)) <= SOCKET_PATH_MAX:
            connection.connect(path)
        else:
            folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
            try:
                connection.connect(f"/proc/self/fd/{folder}/{os.path.basename(path)}")
            finally:
                os.close(folder)
    except BaseException:
        connection.close()
        raise
    return connection


def trusted(path: str) -> bool:
    """Whether `path` may be the person's own classifier: a socket (not a link to one), owned by this user, with no
    permission for group or others (the classifier makes it 0600). Anything else there, a socket another user
    planted in a shared folder given as --data for instance, is not asked: the message is judged here."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return (found.st_mode & 0o170000 == 0o140000 and found.st_uid == os.getuid()
            and found.st_mode & 0o077 == 0)


def _listener_is_me(sockets, connection) -> bool:  # noqa: ANN001
    """Whether the process listening on the other end runs as this user (the kernel's SO_PEERCRED: the uid of the
    process that called listen); True where the system has no such option (the socket's owner and mode alone)."""
    option = getattr(sockets, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        credentials = connection.getsockopt(sockets.SOL_SOCKET, option, 12)  # struct ucred: pid, uid, gid
    except OSError:
        return False
    return int.from_bytes(credentials[4:8], sys.byteorder) == os.getuid()


def ask(raw: bytes, data: str, cutoffs: tuple[float | None, float | None] = (None, None)) -> Judged | None:
    """The long-lived classifier's verdict on `raw`, or None when none answers in time (then judge it here).

    Request: a line `gateway-spam-classify/1 HAM SPAM` (each cutoff, or `-` for the model's), then the message's
    bytes, then end of stream. Reply: one line, `CODE ABOUT TEXT` (ABOUT 1 when the text is about the message).
    Only a trusted socket (`trusted`) whose listener runs as this user is asked."""
    path = os.path.join(data, SOCKET)
    if not trusted(path):
        return None
    try:  # the C module alone: `socket` imports enum, selectors and more, milliseconds of each delivery
        import _socket as sockets
    except ImportError:  # not CPython
        import socket as sockets
    header = b" ".join([PROTOCOL, *(b"-" if c is None else repr(float(c)).encode() for c in cutoffs)]) + b"\n"
    try:
        connection = connect(sockets, path)
        try:
            if not _listener_is_me(sockets, connection):
                return None
            connection.sendall(header + raw)
            connection.shutdown(sockets.SHUT_WR)
            reply = b""
            while len(reply) < 65536:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                reply += chunk
        finally:
            connection.close()
    except OSError:  # none listening, gone, busy past the timeout: judged here instead
        return None
    code, _, rest = reply.rstrip(b"\n").partition(b" ")
    about, _, text = rest.partition(b" ")
    if not (code.isdigit() and int(code) in (SPAM, HAM, UNSURE, ERROR, NOT_MAIL) and about in (b"0", b"1") and text
            and b"\0" not in text):
        return None  # not the classifier's reply (another program's socket, a crash mid-reply)
    try:
        return int(code), text.decode("utf-8"), about == b"1"
    except UnicodeDecodeError:  # nor is this: the classifier writes UTF-8
        return None


def command_line() -> str:
    """The quickest command line for a delivery rule here: `deliver.py`, beside this file, run by this Python
    with `-I -S`."""
    import shlex

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deliver.py")
    return " ".join(shlex.quote(part) for part in (sys.executable, "-I", "-S", script))


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    data: str | None = None
    cutoffs: list[float | None] = [None, None]
    file = None
    here = serve = False
    while arguments:
        argument = arguments.pop(0)
        if argument in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if argument == "--command":
            print(command_line())
            return 0
        if argument in ("--here", "--serve"):
            here, serve = here or argument == "--here", serve or argument == "--serve"
            continue
        if argument in ("--data", "--ham-cutoff", "--spam-cutoff"):
            if not arguments:
                print(f"error: {argument} needs a value\n{USAGE}", file=sys.stderr)
                return ERROR
            value = arguments.pop(0)
            if argument == "--data":
                data = value
                continue
            try:
                number = float(value)
            except ValueError:
                number = -1.0
            if not 0.0 <= number <= 1.0:
                print(f"error: {argument} takes a number from 0 to 1, not {value!r}", file=sys.stderr)
                return ERROR
            cutoffs[argument == "--spam-cutoff"] = number
        elif file is None and (argument == "-" or not argument.startswith("-")):
            file = argument
        else:
            print(f"error: unexpected {argument!r}\n{USAGE}", file=sys.stderr)
            return ERROR
    folder = data_folder() if data is None else data
    if serve:
        if file is not None or cutoffs != [None, None]:
            print(f"error: --serve takes only --data\n{USAGE}", file=sys.stderr)
            return ERROR
        from spamfilter.daemon import serve as serving

        return serving(folder)
    if file is None:
        print(f"error: name the message file (or - for standard input)\n{USAGE}", file=sys.stderr)
        return ERROR
    try:
        raw = _read(file)
    except OSError as error:
        print(f"error: {file}: {error.strerror or error}", file=sys.stderr)
        return ERROR
    given = (cutoffs[0], cutoffs[1])
    judged = None if here else ask(raw, folder, given)
    code, line = _line(file, judged if judged is not None else judge(raw, folder, given))
    print(line, file=sys.stderr if code in (ERROR, NOT_MAIL) else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main())
