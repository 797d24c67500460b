"""`gateway-spam-classify [--data DIR] [--ham-cutoff X] [--spam-cutoff Y] FILE|-`: one message's verdict.

(`python -m spamfilter.classify ...` is the same command, a few milliseconds slower to start: runpy.)

What a procmail or maildrop rule runs for each delivered message (also what `gateway spam classify` runs). It
prints `spam 0.998712` (the verdict, then the score) and exits as bogofilter does: 0 spam, 1 ham, 2 unsure,
3 error (no model yet, unreadable file or message); and 4 for a file that is not mail at all (no header block).

It imports the email package, SQLite and this library, nothing of the gateway: no MCP SDK, no plugin system, no
click. The model is looked up (the message's tokens, a few hundred rows), not loaded. The folder is the spam
plugin's data folder (`$XDG_DATA_HOME/gateway/plugins/spam`, else `~/.local/share/...`), or --data. The cutoffs
are --ham-cutoff/--spam-cutoff when given, else those the model was last trained with (the config's at the time),
else the defaults (0.30 and 0.80): after changing them in the config, train again or pass them here.
"""

from __future__ import annotations

import os
import sys

# No pathlib here: its import is a large share of this process's start.

SPAM, HAM, UNSURE, ERROR, NOT_MAIL = 0, 1, 2, 3, 4
EXIT_CODES = {"spam": SPAM, "ham": HAM, "unsure": UNSURE}
USAGE = "usage: gateway-spam-classify [--data DIR] [--ham-cutoff X] [--spam-cutoff Y] FILE|-"


def data_folder() -> str:
    """The spam plugin's data folder, as the gateway finds it (platformdirs' rule for Linux's XDG folders)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.local/share")
    return os.path.join(base, "gateway", "plugins", "spam")


def _read(file: str) -> bytes:
    from spamfilter.tokens import MAX_MESSAGE

    if file == "-":
        return sys.stdin.buffer.read(MAX_MESSAGE)
    with open(file, "rb") as handle:
        return handle.read(MAX_MESSAGE)


def run(file: str, data: str | os.PathLike | None = None,
        cutoffs: tuple[float | None, float | None] = (None, None)) -> tuple[int, str]:
    """(exit code, the line to print): the verdict and score on success, else a sentence saying what to do.

    A cutoff given as None is the model's (as last trained), else the default."""
    from spamfilter import score, store
    from spamfilter.tokens import is_mail, stripped, tokens

    data = data_folder() if data is None else os.fspath(data)
    try:
        raw = _read(file)
    except OSError as error:
        return ERROR, f"error: {file}: {error.strerror or error}"
    if not is_mail(raw):
        return NOT_MAIL, (f"error: {file}: this is not a mail message (it does not start with mail headers such as "
                          "From, To, Date or Subject); give the message file itself")
    try:
        found = tokens(stripped(raw))
    except Exception:  # noqa: BLE001 - a stranger's message: broken or nested too deep to read
        return ERROR, f"error: {file}: the message cannot be read (its structure is broken or nested too deep)"
    try:
        table = store.Table(os.path.join(data, store.NAME))
    except store.ModelError as error:
        return ERROR, f"error: {error} (train it: spam_train, or gateway spam train)"
    try:
        value, _strength, _clues = score.combine(table.counts(found), table.spam, table.ham)
    finally:
        table.close()
    recorded = table.cutoffs or (score.HAM_CUTOFF, score.SPAM_CUTOFF)
    ham_cutoff, spam_cutoff = (given if given is not None else kept for given, kept in zip(cutoffs, recorded, strict=True))
    verdict = score.verdict(value, ham_cutoff, spam_cutoff)
    return EXIT_CODES[verdict], f"{verdict} {value:.6f}"


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    data: str | None = None
    cutoffs: list[float | None] = [None, None]
    file = None
    while arguments:
        argument = arguments.pop(0)
        if argument in ("-h", "--help"):
            print(__doc__.strip())
            return 0
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
    if file is None:
        print(f"error: name the message file (or - for standard input)\n{USAGE}", file=sys.stderr)
        return ERROR
    code, line = run(file, data, (cutoffs[0], cutoffs[1]))
    print(line, file=sys.stderr if code in (ERROR, NOT_MAIL) else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main())
