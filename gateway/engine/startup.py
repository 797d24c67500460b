"""Python's cycle collector held off while a `gateway` process starts, and running again once it has started.

Starting imports the SDK, pydantic, the plugins and their libraries: about a million objects, nearly all of
which live as long as the process. The cycle collector, left on, walks them again and again while they are
made (a tenth of the CPU time to the first `tools/list` answer, measured), and finds almost nothing to free.
So the `gateway` command holds it off from its first line (`hold`), and lets it run again (`release`) when
serving has started (the plugins loaded and their catalogue made), or when a command other than `serve` begins.
What was made before that is frozen (`gc.freeze`): the collector never walks it again, which makes each later
collection cheaper too; the few cycles left over from starting are kept, not freed.

Only a process whose collector was held by `hold` has it released: a program or a test that imports the
gateway keeps its own collector as it set it.
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    """Turn the cycle collector off until `release`, when it is on now."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Freeze what was made while starting and turn the collector on again (only what `hold` turned off)."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
