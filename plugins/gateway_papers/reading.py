"""Reading one file's words, bounded: PDFs and manifests through the reading process, text files and sidecars here.

`Reader` keeps one reading process (`gateway_papers.worker`) for a refresh: it asks it for each PDF and waits at most
`max_seconds`; past that, or when the process dies (its memory cap reached), the file fails with a sentence saying
why and the next file gets a new process. Plain text and an image's sidecar (`.txt`, or tesseract's `.hocr`) are
read here, each bounded in bytes; hOCR is HTML, read with the standard library's HTML parser.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway_papers.worker import cut

STARTUP_SECONDS = 20.0  # the reading process's own start (Python and pypdf imported), outside any file's bound
MAX_LINE = 256 << 20


class ReadError(ValueError):
    """One file cannot be read: that file alone fails, with this sentence."""


@frozen
class Bounds:
    max_file_bytes: int
    max_pages: int
    max_chars: int
    max_seconds: float
    max_memory_mb: int
    max_manifest_bytes: int


class Reader:
    """The reading process of one refresh: started when the first PDF or manifest comes, stopped at the end."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = bytearray()
        self.started = 0  # processes started (one more each time a file killed one)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        process, self.process = self.process, None
        self.buffer.clear()
        if process is None:
            return
        try:
            if process.stdin:
                process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        self.process = None
        self.buffer.clear()

    def _start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gateway_papers.worker", str(self.bounds.max_memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, close_fds=True)
        self.started += 1
        try:
            first = next(self._lines(time.monotonic() + STARTUP_SECONDS, "start"))
        except ReadError as error:
            raise ReadError(f"the PDF reader could not start ({error})") from None
        if not first.get("ready"):
            self._kill()
            raise ReadError("the PDF reader could not start")

    def _ask(self, request: dict[str, Any], seconds: float) -> Iterator[dict[str, Any]]:
        """The worker's lines for one request, the last one (`end`) included; ReadError past the bound."""
        if self.process is None or self.process.poll() is not None:
            self._kill()
            self._start()
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
        except OSError:
            self._kill()
            raise ReadError("the PDF reader stopped; it is started again for the next file") from None
        deadline = time.monotonic() + seconds
        for message in self._lines(deadline, "read"):
            yield message
            if message.get("end"):
                return

    def _lines(self, deadline: float, doing: str) -> Iterator[dict[str, Any]]:
        assert self.process is not None and self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[:newline + 1]
                yield json.loads(line)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                raise ReadError(f"reading it took more than {self.bounds.max_seconds:g} s (max_seconds)"
                                if doing == "read" else "it took too long to start")
            ready, _, _ = select.select([descriptor], [], [], left)
            if not ready:
                continue
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                self._kill()
                raise ReadError(f"reading it needed more than the {self.bounds.max_memory_mb} MiB allowed "
                                "(max_memory_mb), or broke the reader")
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE:
                self._kill()
                raise ReadError("what it holds is too large to read")

    def pdf(self, path: Path) -> dict[str, Any]:
        """A PDF's text and what is known of it (`text`, `pages`, `read`, `partial`, `title`, `created`)."""
        size = _size(path)
        if size > self.bounds.max_file_bytes:
            raise ReadError(f"it is {_mib(size)}, over the limit of {_mib(self.bounds.max_file_bytes)} "
                            "(max_file_mb)")
        bounds = self.bounds
        request = {"pdf": str(path), "max_pages": bounds.max_pages, "max_chars": bounds.max_chars,
                   "soft_seconds": bounds.max_seconds * 0.8}
        answer: dict[str, Any] = {}
        for message in self._ask(request, bounds.max_seconds):
            answer = message
        if answer.get("error"):
            if "max_memory_mb" in answer["error"]:
                self._kill()
            raise ReadError(answer["error"])
        return answer

    def manifest(self, paths: list[Path]) -> list[dict[str, Any]]:
        """The documents of a paperless-ngx export (its manifest, and the per-document ones of a split export)."""
        request = {"manifests": [str(p) for p in paths], "max_chars": self.bounds.max_chars,
                   "max_bytes": self.bounds.max_manifest_bytes}
        documents: list[dict[str, Any]] = []
        # A manifest holds many documents: its bound is a few files' worth.
        for message in self._ask(request, self.bounds.max_seconds * 4):
            if "doc" in message:
                documents.append(message["doc"])
            elif message.get("error"):
                raise ReadError(message["error"])
        return documents


def _mib(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count < 10 << 20 else f"{count >> 20:,} MiB"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as error:
        raise ReadError(f"it cannot be read: {error.strerror or error}") from None


def read_text(path: Path, max_bytes: int, max_chars: int) -> tuple[str, str]:
    """A plain text file's words (UTF-8, a wrong byte replaced) and why it was read in part ("" when whole). Read in
    this process, so no more is read than the characters kept can take (four bytes each at most)."""
    limit = min(max_bytes, max_chars * 4)
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as error:
        raise ReadError(f"it cannot be read: {error.strerror or error}") from None
    if b"\x00" in raw[:8192]:
        raise ReadError("it is not text (it holds NUL bytes)")
    text = raw[:limit].decode("utf-8", "replace")
    partial = ""
    if len(raw) > limit:
        text = cut(text, len(text) - 1)
        partial = (f"only its first {_mib(max_bytes)} were read (max_file_mb)" if limit == max_bytes
                   else f"only its first {max_chars:,} characters were read (max_chars)")
    if len(text) > max_chars:
        text = cut(text, max_chars)
        partial = f"only its first {max_chars:,} characters were read (max_chars)"
    return text, partial


class _Hocr(HTMLParser):
    """The words of an hOCR file (tesseract's `hocr` output): each `ocr_line` on a line of its own."""

    BREAKS = ("ocr_line", "ocrx_line", "ocr_caption", "ocr_header", "ocr_textfloat", "ocr_par", "ocr_page")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.body = False
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.body = True
        if tag in ("script", "style", "head", "title"):
            self.skip += 1
        classes = (dict(attrs).get("class") or "").split()
        if any(c in self.BREAKS for c in classes):
            self.parts.append("\f" if "ocr_page" in classes and self.parts else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head", "title") and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if self.body and not self.skip and data.strip():
            self.parts.append(data.strip() + " ")


def read_hocr(path: Path, max_bytes: int, max_chars: int) -> tuple[str, str]:
    raw, partial = read_text(path, max_bytes, max_chars * 10)
    parser = _Hocr()
    try:
        parser.feed(raw)
        parser.close()
    except (AssertionError, ValueError) as error:  # html.parser raises little; a broken file still says why
        raise ReadError(f"its hOCR cannot be read ({type(error).__name__})") from None
    lines = ["".join(parser.parts).strip()]
    text = "\n".join(" ".join(line.split(" ")).strip() for line in lines[0].split("\n"))
    if len(text) > max_chars:
        text, partial = cut(text, max_chars), f"only its first {max_chars:,} characters were read (max_chars)"
    return text, partial
