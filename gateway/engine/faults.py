"""Which exceptions that leave a plugin's code are that plugin failing, and which must go on up.

The rule, for every place the core runs a plugin's code (its import and registration, its hooks, its settings
model, its refreshes, its tools, resources, prompts and completions): any exception, `BaseException` included,
is the plugin failing, and is dealt with as its `Exception`s are (the plugin is off and said so, the hook is
skipped, the call answers an error), except two kinds that are never a plugin's to stop: `KeyboardInterrupt`
(the person's Ctrl-C) and cancellation (`asyncio.CancelledError`, which anyio's cancel scopes raise, or trio's
`Cancelled`). So a plugin that calls `sys.exit()` (a `SystemExit`), or raises a `GeneratorExit` or a
`BaseException` class of its own, ends nothing but what it was asked to do: the gateway and the other plugins
carry on. A plugin's command line command (`register_commands`) is the exception: click runs it in the
person's terminal, outside the core, and its `sys.exit(2)` is its exit status, as any click command's.

A `GeneratorExit` thrown into one of the core's own generators (closed early by whoever reads it) is not a
plugin's: the core never catches around its own `yield`, so it never meets one there.
"""

from __future__ import annotations

import sys


def _passed_on(error: BaseException) -> bool:
    """Whether `error` is the person's interrupt or a cancellation (looked for only in the modules that make them:
    a process that never imported asyncio or trio meets neither's cancellation)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None and isinstance(error, asyncio.CancelledError):
        return True
    trio = sys.modules.get("trio")
    return trio is not None and isinstance(error, trio.Cancelled)


def plugin_failed(error: BaseException) -> bool:
    """Whether `error`, raised out of a plugin's code, is that plugin failing (see the module's docstring): True for
    any exception but an interrupt or a cancellation, and for a group of exceptions holding neither."""
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(_passed_on) is None
    return not _passed_on(error)


def said(error: BaseException) -> str:
    """What a plugin's failure is, in a few words for the person: the exception's kind and message, and for a
    `SystemExit` that the plugin tried to end the process."""
    if isinstance(error, SystemExit):
        return f"it tried to end the process (SystemExit: {error.code!r})"
    return f"{type(error).__name__}: {error}"
