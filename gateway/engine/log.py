"""Diagnostics go to standard error, always: standard output belongs to the protocol.

A line is readable on a terminal and JSON otherwise (a host's log file), decided when each line is written, not
once when the module is imported: whatever stands in for stderr by then (a terminal, a pipe to a host, a stream a
caller swapped in) is what the line is written for. ``GATEWAY_LOG_FORMAT=console|json`` chooses by hand.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any

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
        import structlog

        raise structlog.DropEvent
    return event


class _Render:
    """A line for a person on a terminal, JSON otherwise (the renderers made once, when structlog is set up)."""

    def __init__(self, structlog: ModuleType) -> None:
        self.console = structlog.dev.ConsoleRenderer(colors=False)
        self.json = structlog.processors.JSONRenderer()

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
        if not on_terminal():
            return self.json(logger, method, event)
        if isinstance(event.get("traceback"), str):
            # Below the line, as Python prints it, rather than one long quoted string with \n in it.
            event["exception"] = event.pop("traceback").rstrip("\n")
        return self.console(logger, method, event)


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


_QUIET_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}


def _threshold(level: str | None = None) -> int:
    name = (level or os.environ.get("GATEWAY_LOG_LEVEL") or "warning").upper()
    return getattr(logging, name, logging.WARNING)


def _dropped(*_args: Any, **_fields: Any) -> None:
    return None


_render: _Render | None = None


def configure(level: str | None = None) -> None:
    """structlog to stderr at `level` (else GATEWAY_LOG_LEVEL, else warning): readable on a terminal, JSON otherwise."""
    global _render
    import structlog

    _render = _render or _Render(structlog)
    threshold = _threshold(level)
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


# structlog's default writes to stdout, which would corrupt a stdio MCP stream: whatever imports the gateway's
# engine (and `from gateway import ...`, which imports this module first) logs to stderr from then on. structlog
# itself (a tenth of what the gateway imports beyond the SDK) is imported only when a line is first logged: until
# then the gateway's own loggers are `Logger`s, which import and set it up on first use, and a plugin that imports
# structlog itself finds it set up as it is imported (`_SetUpWhenImported`).


class _SetUpWhenImported:
    """A finder at the head of ``sys.meta_path`` that lets structlog be found as usual, and sets it up (unless
    something else did) as soon as it is imported, before the importer gets it; it leaves the path then. (A
    spec only looked up, never imported, leaves it in place.)"""

    def __init__(self) -> None:
        self._finding = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "structlog" or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec(name)  # as the finders after this one find it
        finally:
            self._finding = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _stop_watching()
            if not module.is_configured():
                configure()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader only
        return spec


_WATCHING = _SetUpWhenImported()


def _stop_watching() -> None:
    if _WATCHING in sys.meta_path:
        sys.meta_path.remove(_WATCHING)


if "structlog" in sys.modules:
    if not sys.modules["structlog"].is_configured():
        configure()
else:
    sys.meta_path.insert(0, _WATCHING)


class Logger:
    """A module's structlog logger, made when it first logs: ``log = get_logger(__name__)`` costs nothing at import,
    and each call goes to ``structlog.get_logger(name)`` (set up as `configure` says, or as a test captures)."""

    def __init__(self, name: str | None = None) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute in _QUIET_LEVELS and "structlog" not in sys.modules and _QUIET_LEVELS[attribute] < _threshold():
            # What structlog, once set up, would drop (a debug line at the default level, the end of a stdio run's
            # input among them) does not import it.
            return _dropped
        if self._logger is None:
            import structlog

            self._logger = structlog.get_logger(self._name) if self._name else structlog.get_logger()
        return getattr(self._logger, attribute)


def get_logger(name: str | None = None) -> Logger:
    """A logger named `name` that imports structlog only when it first logs."""
    return Logger(name)


@contextmanager
def said_elsewhere(*events: str) -> Iterator[None]:
    """Within this block, log events of these names are not written: the command says them to the person itself."""
    token = _said_elsewhere.set(_said_elsewhere.get() | frozenset(events))
    try:
        yield
    finally:
        _said_elsewhere.reset(token)
