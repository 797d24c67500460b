"""The `gateway` command's first module: what runs before anything heavy is imported.

It holds the cycle collector off while the process starts (`gateway.engine.startup`), then hands the command
line to `gateway.commands.cli`.
"""

from __future__ import annotations


def main() -> None:
    from gateway.engine import startup

    startup.hold()
    from gateway.commands.cli import main as command_line

    command_line()
