"""Diagnostics go to standard error, always: standard output belongs to the protocol."""

from __future__ import annotations

import logging
import os
import sys

import structlog


def configure(level: str | None = None) -> None:
    """structlog to stderr: readable on a terminal, JSON lines otherwise (a host's log file)."""
    name = (level or os.environ.get("GATEWAY_LOG_LEVEL") or "warning").upper()
    threshold = getattr(logging, name, logging.WARNING)
    renderer = (
        structlog.dev.ConsoleRenderer(colors=False)
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.WriteLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
