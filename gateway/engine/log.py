"""Diagnostics go to standard error, always: standard output belongs to the protocol.

A line is readable on a terminal and JSON otherwise (a host's log file), decided when each line is written, not
once when the module is imported: whatever stands in for stderr by then (a terminal, a pipe to a host, a stream a
caller swapped in) is what the line is written for. ``GATEWAY_LOG_FORMAT=console|json`` chooses by hand.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import structlog

_CONSOLE = structlog.dev.ConsoleRenderer(colors=False)
_JSON = structlog.processors.JSONRenderer()

# Events a command is saying to the person itself (``gateway doctor`` prints each plugin problem): not said twice.
_said_elsewhere: ContextVar[frozenset[str]] = ContextVar("gateway_said_elsewhere", default=frozenset())


def on_terminal() -> bool:
    """Whether a line written to stderr now is read by a person (a terminal) rather than kept in a log file."""
    chosen = os.environ.get("GATEWAY_LOG_FORMAT", "").strip().lower()
    if chosen in ("console", "json"):
        return chosen == "console"
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream: a log file, not a person
        return False


def _drop_said_elsewhere(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    if event.get("event") in _said_elsewhere.get():
        raise structlog.DropEvent
    return event


def _render(logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
    if not on_terminal():
        return _JSON(logger, method, event)
    if isinstance(event.get("traceback"), str):
        # Below the line, as Python prints it, rather than one long quoted string with \n in it.
        event["exception"] = event.pop("traceback").rstrip("\n")
    return _CONSOLE(logger, method, event)


class _Stderr:
    """Writes each line to whatever ``sys.stderr`` is when the line is written, one whole line at a time."""

    _lock = threading.Lock()

    def msg(self, message: str) -> None:
        stream = sys.stderr
        if stream is None:
            return
        with self._lock:
            stream.write(message + "\n")
            stream.flush()

    log = debug = info = warn = warning = error = err = critical = exception = fatal = msg


def configure(level: str | None = None) -> None:
    """structlog to stderr at `level` (else GATEWAY_LOG_LEVEL, else warning): readable on a terminal, JSON otherwise."""
    name = (level or os.environ.get("GATEWAY_LOG_LEVEL") or "warning").upper()
    threshold = getattr(logging, name, logging.WARNING)
    structlog.configure(
        processors=[
            _drop_said_elsewhere,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _render,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=lambda *_args: _Stderr(),
        # Not cached: `--log-level` may change the level after a plugin's module logger was first used.
        cache_logger_on_first_use=False,
    )


if not structlog.is_configured():
    # structlog's default writes to stdout, which would corrupt a stdio MCP stream: whatever imports the gateway's
    # engine (and `from gateway import ...`, which imports this module first) logs to stderr from then on.
    configure()


@contextmanager
def said_elsewhere(*events: str) -> Iterator[None]:
    """Within this block, log events of these names are not written: the command says them to the person itself."""
    token = _said_elsewhere.set(_said_elsewhere.get() | frozenset(events))
    try:
        yield
    finally:
        _said_elsewhere.reset(token)
