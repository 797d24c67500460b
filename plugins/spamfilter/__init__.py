"""The spam filter's core, importable without the gateway: a message's tokens (`tokens`), the score (`score`),
the model file (`store`) and the lean command a delivery rule runs for each message (`classify`).

The spam plugin (`gateway_spam`) trains and serves with these same modules, so that what `python -m
spamfilter.classify` decides for a message is what the plugin decides for it. Nothing here imports the MCP SDK,
the plugin system or click: a procmail or maildrop rule pays for Python, the email package and SQLite alone.
"""

import os

# Bytes read of one message file, here and by the long-lived classifier: bigger files are attachments' carriers,
# not what a filter learns from. Here (not in `tokens`) so that the command's client reads files without importing
# the email package.
MAX_MESSAGE = 20 * 1024 * 1024


def read_message(path: str | os.PathLike) -> bytes:
    """The first MAX_MESSAGE bytes of a message file (OSError when it cannot be read), read in a piece the size of the
    file: Python's `read(MAX_MESSAGE)` maps 20 MB of memory for every file, of which a message fills a few kilobytes
    (three quarters of the time it took to read a corpus of small messages)."""
    with open(path, "rb", buffering=0) as handle:
        wanted = min(os.fstat(handle.fileno()).st_size + 1, MAX_MESSAGE)  # one more byte: the end found at once
        chunks: list[bytes] = []
        left = MAX_MESSAGE
        while left > 0:
            chunk = handle.read(min(wanted, left))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            wanted = max(wanted, 1 << 16)  # the file grew since: read on in larger pieces
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
