"""The reading process: PDFs (with pypdf) and paperless-ngx manifests, read apart from the server.

A PDF or a manifest comes from anyone: a stream that inflates to gigabytes, a page whose content never ends, a file
cut short. Each is read here, in a process of its own (`python -m gateway_papers.worker MEMORY_MB`), whose memory is
capped by the system (RLIMIT_AS) and whose time the server bounds from outside (`gateway_papers.reading` kills it
past the bound and starts another for the next file). So a hostile file can fail only itself: the server's memory,
its threads and its other answers never see it.

The protocol, one JSON object per line: the server writes a request (`{"pdf": path, ...}` or
`{"manifests": [paths], ...}`); the worker answers with zero or more `{"doc": {...}}` lines (a manifest's documents)
and one last line holding `"end": true`, with `"error"` when the file could not be read.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

# What paperless-ngx's exporter writes beside each document's record (its documents/settings.py).
EXPORTED_FILE = "__exported_file_name__"
EXPORTED_ARCHIVE = "__exported_archive_name__"
EXPORTED_THUMBNAIL = "__exported_thumbnail_name__"


def clean(text: str) -> str:
    """Text safe to carry and store: no NUL, no lone surrogate (some PDFs' fonts map glyphs to them)."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, and then back past its last hundred characters to a space or a line: a
    number cut in two (an IBAN, a card) no longer checks out and would escape the masks, so none is left half."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - 100, 0)]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\f"))
    return head[:space] if space > 0 else ""


def read_pdf(path: str, max_pages: int, max_chars: int, soft_seconds: float) -> dict[str, Any]:
    """A PDF's text layer, page by page (pages joined by form feeds), within the bounds; a partial read says why.

    pypdf bounds what one stream may inflate to itself (75 MB by default, `LimitReachedError` past it); the process's
    memory cap and the server's clock bound the rest."""
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError, LimitReachedError, PdfReadError

    started = time.monotonic()
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError):
                return {"error": "it is encrypted in a way this reader cannot open; the person saves an unencrypted "
                                 "copy to have it read"}
            if opened == PasswordType.NOT_DECRYPTED:
                return {"error": "it is encrypted with a password; the person saves an unencrypted copy to have it "
                                 "read"}
        total = len(reader.pages)
    except MemoryError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError, RecursionError,
            AssertionError, ZeroDivisionError) as error:
        return {"error": f"it is not a readable PDF (damaged or cut short: {_said(error)})"}
    texts: list[str] = []
    chars = broken = bombs = 0
    why = ""
    for index in range(total):
        if index >= max_pages:
            why = f"only the first {max_pages:,} of its {total:,} pages were read (max_pages)"
            break
        if time.monotonic() - started > soft_seconds:
            why = f"only the first {index:,} of its {total:,} pages were read in {soft_seconds:g} s (max_seconds)"
            break
        try:
            text = reader.pages[index].extract_text() or ""
        except MemoryError:
            raise
        except LimitReachedError:  # a stream that inflates past pypdf's bound: a compression bomb
            broken += 1
            bombs += 1
            text = ""
        except Exception:  # noqa: BLE001 (pypdf raises many kinds on a broken page: that page fails alone)
            broken += 1
            text = ""
        texts.append(clean(text))
        chars += len(text) + 1
        if chars >= max_chars:
            why = f"only its first {max_chars:,} characters were read (max_chars)"
            break
    bomb = "a stream in it inflates past the reader's bound (a compression bomb)"
    if total and broken == len(texts) and broken:
        return {"error": f"{bomb}; it was not read" if bombs else f"none of its {total:,} pages could be read "
                "(damaged)"}
    if broken:
        why = "; ".join(filter(None, [why, f"{broken:,} of its pages could not be read"
                                      + (f" ({bomb})" if bombs else "")]))
    return {"text": cut("\f".join(texts), max_chars), "pages": total, "read": len(texts), "partial": why,
            **_metadata(reader)}


def _metadata(reader: Any) -> dict[str, str]:
    try:
        info = reader.metadata
        title = str(info.title or "") if info is not None else ""
        created = info.creation_date if info is not None else None
    except Exception:  # noqa: BLE001 (a damaged information dictionary: the text still counts)
        return {"title": "", "created": ""}
    return {"title": clean(title)[:300], "created": created.date().isoformat() if isinstance(created, datetime) else ""}


def read_manifests(paths: list[str], max_chars: int, max_bytes: int) -> Iterator[dict[str, Any]]:
    """The documents of a paperless-ngx export: its manifest.json (and the per-document manifests of an export made
    with --split-manifest), as Django's JSON serialiser writes them: a list of `{"model", "pk", "fields"}`."""
    records: list[dict] = []
    for path in paths:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise ValueError(f"{path.rsplit('/', 1)[-1]} is over {max_bytes >> 20} MiB (max_manifest_mb)")
        loaded = json.loads(raw)
        if not isinstance(loaded, list):
            raise ValueError("it is not a paperless-ngx manifest (a list of records)")
        records.extend(r for r in loaded if isinstance(r, dict) and isinstance(r.get("fields"), dict))
    names: dict[str, dict[Any, str]] = {"documents.correspondent": {}, "documents.documenttype": {},
                                        "documents.tag": {}}
    for record in records:
        if record.get("model") in names:
            names[record["model"]][record.get("pk")] = str(record["fields"].get("name") or "")
    documents = [r for r in records if r.get("model") == "documents.document"]
    if not documents and not any(names.values()):
        raise ValueError("it is not a paperless-ngx manifest (no documents.document record)")
    for record in documents:
        fields = record["fields"]
        if fields.get("deleted_at"):
            continue  # in paperless-ngx's trash
        tags = fields.get("tags") or []
        yield {
            "pk": record.get("pk"),
            "title": clean(str(fields.get("title") or ""))[:1000],
            "content": cut(clean(str(fields.get("content") or "")), max_chars),
            "created": str(fields.get("created") or "")[:10],
            "correspondent": names["documents.correspondent"].get(fields.get("correspondent"), ""),
            "document_type": names["documents.documenttype"].get(fields.get("document_type"), ""),
            "tags": [names["documents.tag"].get(t, "") for t in tags if isinstance(t, int | str)],
            "original": str(record.get(EXPORTED_FILE) or ""),
            "archive": str(record.get(EXPORTED_ARCHIVE) or ""),
            "thumbnail": str(record.get(EXPORTED_THUMBNAIL) or ""),
            "pages": fields.get("page_count") if isinstance(fields.get("page_count"), int) else 0,
        }


def _said(error: BaseException) -> str:
    text = " ".join(str(error).split())[:160]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _answer(request: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    if "pdf" in request:
        return read_pdf(request["pdf"], int(request["max_pages"]), int(request["max_chars"]),
                        float(request["soft_seconds"]))
    count = 0
    try:
        for doc in read_manifests(list(request["manifests"]), int(request["max_chars"]), int(request["max_bytes"])):
            emit({"doc": doc})
            count += 1
    except (ValueError, OSError, RecursionError) as error:
        return {"error": str(error) if isinstance(error, ValueError) and not isinstance(error, json.JSONDecodeError)
                else f"it cannot be read ({_said(error)})"}
    return {"documents": count}


def main() -> None:
    import logging
    import resource
    import warnings

    memory = int(sys.argv[1]) << 20 if len(sys.argv) > 1 else 0
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    logging.disable(logging.CRITICAL)  # pypdf says what it repairs on its logger: nobody reads it here
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(5000)
    out = sys.stdout.buffer

    def emit(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode("ascii") + b"\n")
        out.flush()

    import pypdf  # noqa: F401 (imported before the first request: its cost is not the first file's)

    emit({"ready": True})
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            answer = _answer(request, emit)
        except MemoryError:
            emit({"end": True, "error": f"reading it needed more than the {memory >> 20} MiB allowed (max_memory_mb)"})
            return  # the process may be in a poor state: the server starts another for the next file
        except Exception as error:  # noqa: BLE001 (whatever a file does to the reader fails that file alone)
            answer = {"error": f"it cannot be read ({_said(error)})"}
        emit({"end": True, **answer})


if __name__ == "__main__":
    main()
