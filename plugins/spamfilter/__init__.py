"""The spam filter's core, importable without the gateway: a message's tokens (`tokens`), the score (`score`),
the model file (`store`) and the lean command a delivery rule runs for each message (`classify`).

The spam plugin (`gateway_spam`) trains and serves with these same modules, so that what `python -m
spamfilter.classify` decides for a message is what the plugin decides for it. Nothing here imports the MCP SDK,
the plugin system or click: a procmail or maildrop rule pays for Python, the email package and SQLite alone.
"""

import io
import os

# Bytes read of one message file, here and by the long-lived classifier: bigger files are attachments' carriers,
# not what a filter learns from. Here (not in `tokens`) so that the command's client reads files without importing
# the email package.
MAX_MESSAGE = 20 * 1024 * 1024


def read_message(path: str | os.PathLike) -> bytes:
    """The first MAX_MESSAGE bytes of a message file (OSError when it cannot be read), by `read_up_to`."""
    with open(path, "rb", buffering=0) as handle:
        return read_up_to(handle, MAX_MESSAGE)


def read_up_to(handle: io.RawIOBase | io.BufferedIOBase, bound: int) -> bytes:
    """At most `bound` bytes of an open message file, read in a piece the size of the file (and one byte more, so
    that the end is seen at once): Python's `read(bound)` makes a buffer of the whole bound for every file, megabytes
    where a message fills a few kilobytes (three quarters of the time it took to read a corpus of small messages).
    A file that grew since is read on, in larger pieces, to the bound. The mail plugin reads its messages so too."""
    wanted = min(os.fstat(handle.fileno()).st_size + 1, bound)
    chunks: list[bytes] = []
    left = bound
    while left > 0:
        chunk = handle.read(min(wanted, left))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        wanted = max(wanted, 1 << 16)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
