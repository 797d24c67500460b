"""The `gateway` command's first module: what runs before anything heavy is imported.

A command line whose answer was kept, and whose inputs have not changed since, is answered from what was kept
(`gateway.commands.replay`). Otherwise the cycle collector is held off while the process starts
(`gateway.engine.startup`), and the command line is handed to `gateway.commands.cli`.
"""

from __future__ import annotations

import sys


def main() -> None:
    arguments = sys.argv[1:]
    if arguments and arguments[0] != "serve":  # serving is never kept: it answers a host
        from gateway.commands.replay import replayed

        if replayed(arguments):
            return
    from gateway.engine import startup

    startup.hold()
    from gateway.commands.cli import main as command_line

    command_line()
