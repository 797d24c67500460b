"""The verdict on one message's bytes (`judge`) and the words the command and the long-lived classifier share:
exit codes, the socket's name, the request's first word. Light to import (os alone at the top): the command's
client imports it on every delivery; `judge` imports the tokenizer, SQLite and the score when it runs.
"""

from __future__ import annotations

import os

SPAM, HAM, UNSURE, ERROR, NOT_MAIL = 0, 1, 2, 3, 4
EXIT_CODES = {"spam": SPAM, "ham": HAM, "unsure": UNSURE}
SOCKET = "classify.sock"  # the long-lived classifier's socket, in the data folder
PROTOCOL = b"gateway-spam-classify/1"
SOCKET_PATH_MAX = 107  # bytes of an AF_UNIX path on Linux (108 with its NUL)

# (exit code, text, whether the text is about the message, so that the file's name goes before it)
Judged = tuple[int, str, bool]


def judge(raw: bytes, data: str, cutoffs: tuple[float | None, float | None] = (None, None)) -> Judged:
    """The verdict on one message's bytes, by the model in `data`: what this command and the long-lived
    classifier both answer. A cutoff given as None is the model's (as last trained), else the default."""
    from spamfilter import score, store
    from spamfilter.tokens import is_mail, stripped, tokens

    if not is_mail(raw):
        return NOT_MAIL, ("this is not a mail message (it does not start with mail headers such as From, To, Date "
                          "or Subject); give the message file itself"), True
    try:
        found = tokens(stripped(raw))
    except Exception:  # noqa: BLE001 - a stranger's message: broken or nested too deep to read
        return ERROR, "the message cannot be read (its structure is broken or nested too deep)", True
    try:
        table = store.Table(os.path.join(data, store.NAME))
    except store.ModelError as error:
        return ERROR, f"{error} (train it: spam_train, or gateway spam train)", False
    try:
        value, _strength, _clues = score.combine(table.counts(found), table.spam, table.ham)
    finally:
        table.close()
    recorded = table.cutoffs or (score.HAM_CUTOFF, score.SPAM_CUTOFF)
    ham_cutoff, spam_cutoff = (given if given is not None else kept for given, kept in zip(cutoffs, recorded, strict=True))
    verdict = score.verdict(value, ham_cutoff, spam_cutoff)
    return EXIT_CODES[verdict], f"{verdict} {value:.6f}", False
