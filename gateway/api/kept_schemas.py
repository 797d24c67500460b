"""Tool schemas kept between starts, so that `gateway serve` answers tools/list without reading every tool's types.

Describing a tool (its type hints read, its input and output schemas written) costs a fraction of a millisecond
to a few milliseconds; with every built-in on, a fifth of what a start does beyond importing the SDK. What a
description gives (the input schema, the output schema, which parameters pydantic converts) depends only on:

- the function's own signature: its parameters, their defaults and annotations as written (taken in full, so
  that a closure or a default computed at import that changes is a different key);
- the modules its annotations are read from: every module of the function's top-level package that is loaded
  when it is described (where a type alias or a shape may live), and the module of every class its hints name
  (a shape from another package of the same checkout, a library's type);
- the code that writes schemas (`gateway.api.schemas`, `gateway.wire.seams`), the Python running it, and what
  is installed (each `sys.path` folder, whose modification time changes when a distribution is added, removed
  or upgraded in it).

The working folder is the exception among the `sys.path` folders: `python -m gateway` (and `python -c`) puts it
first, and a person's working folder changes all the time (a log written, a file saved) without anything
importable changing. Its modification time would throw away everything kept at each such change. It is watched
instead by what in it can be imported: each folder in it that can be a package or a namespace package (a name
without a dot) or a distribution's metadata (`.dist-info`, `.egg-info`), by its name and inode, and each file with
a module's suffix (`.py`, `.pyc`, an extension module's) or an `.egg-info`'s, by its name and signature; nothing
else in a folder can give a module or a plugin. So a file of any other kind made there (a log, a note, a folder
named `.cache`) keeps what was kept; a module file or a package that appears, goes, is replaced, or (a file)
changes there throws it away (it could shadow a module a description was read from: the working folder comes
before every other), as does a module file there changed in the last two seconds. A file made inside one of its
folders is not looked at, as the folder's modification time never showed one either. The `gateway` console
script does not put the working folder on `sys.path` at all.

So each description is kept, per plugin, in ``<cache>/schemas/<plugin>.marshal`` with the signature (inode,
size, modification time, mode) of each of those files and folders, and is given again only while every one of
them is unchanged and the function's own key is equal. Anything else (a changed or missing file, another
Python, a new key) describes the tool again and keeps the new description. A file that changed in the last two
seconds is not trusted (a modification time may not move between two writes that close), so nothing is kept
then. A function that is not a plain module-level function (a closure, a method, a callable object) is never
kept. The file is read only when it is the person's own and nobody else may write it; a damaged one is ignored
and written again.

The same file keeps what the plugin's settings model made of the table it was loaded with (its settings filled
in, the table's problem, whether it is switched off), watched the same way by the files of the plugin's and the
model's packages, of the classes its fields name and of the code that reads tables (`files_for`; see
`gateway.engine.registry.Registry._settings`), so that a start does not make the model.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.machinery
import inspect
import marshal
import os
import sys
import time
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

FORMAT = 1
MAX_BYTES = 16 * 1024 * 1024
_SETTLE_NS = 2_000_000_000
# The modules whose code writes the schemas: a change in either is a change in every description.
_WRITERS = ("gateway.api.schemas", "gateway.wire.seams")

Signature = tuple[int, int, int, int] | None
# The ends of a file's name by which the working folder can give a module (or a distribution's metadata), and of a
# folder's name with a dot in it that can still give something (a distribution's metadata, its entry points).
_IMPORTABLE = (*importlib.machinery.all_suffixes(), ".egg-info")
_METADATA = (".dist-info", ".egg-info")

_kept: contextvars.ContextVar[KeptSchemas | None] = contextvars.ContextVar("gateway_kept_schemas", default=None)


def signature(path: str) -> Signature:
    """What says a file or folder changed: inode, size, modification time (ns) and mode; None when it is missing."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_mode)


@functools.cache
def _stdlib_folders() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple({paths["stdlib"], paths["platstdlib"]})


class KeptSchemas:
    """One plugin's kept descriptions: read when made, looked up and added to while it loads, written if changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        self.changed = False
        self._signatures: dict[str, Signature] = {}
        self._environment: tuple | None = None
        self._settling: list[Signature] = []  # the working folder's importable entries (`_importable`)
        self._packages: dict[tuple[str, int], tuple[str, ...]] = {}
        self._read()

    # --- the file ---

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                found = os.fstat(handle.fileno())
                if found.st_uid != os.getuid() or found.st_mode & 0o022 or found.st_size > MAX_BYTES:
                    return
                kept = marshal.loads(handle.read())
        except (OSError, ValueError, EOFError, TypeError):
            return
        if isinstance(kept, dict) and kept.get("format") == FORMAT and isinstance(kept.get("entries"), dict):
            self.entries = kept["entries"]

    def write(self) -> None:
        """Write the descriptions kept (only when one was added); a file that cannot be written is left out."""
        if not self.changed:
            return
        self.changed = False
        folder = self.path.parent
        part = folder / f"{self.path.name}.{os.getpid()}.part"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            data = marshal.dumps({"format": FORMAT, "entries": self.entries})
            descriptor = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(part, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                part.unlink()

    # --- what a description depends on ---

    def _signature(self, path: str) -> Signature:
        if path not in self._signatures:
            self._signatures[path] = signature(path)
        return self._signatures[path]

    def environment(self) -> tuple:
        """The Python running, and each folder modules are found in (installing or removing a package changes one):
        each folder's own signature, but the working folder's (see `_working_folder`) by what in it can be imported."""
        if self._environment is None:
            folders = [entry or "." for entry in sys.path]
            self._environment = (sys.version, sys.implementation.cache_tag, tuple(folders),
                                 tuple(self._importable(folder) if _working_folder(index, folder)
                                       else self._signature(folder) for index, folder in enumerate(folders)))
        return self._environment

    def _importable(self, folder: str) -> tuple:
        """The working folder as imports see it, in name order: each folder in it that can be a package or a
        distribution's metadata (a name without a dot, or ending in ``.dist-info`` or ``.egg-info``) by its name and
        inode, and each file with a module's suffix (or an ``.egg-info``) by its name and signature. A file counted
        here that changed in the last two seconds keeps nothing, as a file a description was read from (`keep`)."""
        found: list[tuple[str, Any]] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir():
                            if "." not in entry.name or entry.name.endswith(_METADATA):
                                found.append((entry.name, entry.stat().st_ino))
                        elif entry.name.endswith(_IMPORTABLE):
                            status = entry.stat()
                            signed = (status.st_ino, status.st_size, status.st_mtime_ns, status.st_mode)
                            found.append((entry.name, signed))
                            self._settling.append(signed)
                    except OSError:
                        continue
        except OSError:
            return ("importable", None)
        return ("importable", tuple(sorted(found)))

    def _fresh(self, watched: Iterable[tuple[str, Signature]]) -> bool:
        return all(self._signature(path) == kept for path, kept in watched)

    # --- one description ---

    def lookup(self, key: str, identity: tuple) -> dict[str, Any] | None:
        """The description kept under `key` when its function's `identity` and every file it was read from are as
        they were; None otherwise."""
        entry = self.entries.get(key)
        if entry is None or entry.get("identity") != identity or entry.get("environment") != self.environment():
            return None
        if not self._fresh(entry.get("watched", ())):
            return None
        return entry.get("described")

    def files_of(self, function: Callable[..., Any], hints: dict[str, Any]) -> list[str]:
        """The files a function's description was read from: the loaded modules of its top-level package, the module
        of each class its hints name (outside Python's own library), and the code that writes schemas."""
        return self.files_for((function.__module__,), hints.values(), _WRITERS)

    def files_for(self, modules: Iterable[str], annotations: Iterable[Any], writers: Iterable[str]) -> list[str]:
        """The files of the loaded modules of each of `modules`' top-level packages, of the module of each class
        `annotations` name (outside Python's own library), and of the `writers` modules."""
        files: list[str] = []
        for module in modules:
            top = module.partition(".")[0]
            known = (top, len(sys.modules))
            if known not in self._packages:  # asked again when more modules are loaded
                self._packages[known] = _package_files(top)
            files.extend(self._packages[known])
        stdlib = _stdlib_folders()
        for name in {*_modules_named(annotations), *writers}:
            module = sys.modules.get(name)
            where = getattr(module, "__file__", None)
            if isinstance(where, str) and not where.startswith(stdlib):
                files.append(where)
        return files

    def keep(self, key: str, identity: tuple, described: dict[str, Any], files: Iterable[str]) -> None:
        """Keep a description, with the signatures of the files it depends on (unless one changed just now)."""
        now = time.time_ns()
        environment = self.environment()
        if any(found is not None and now - found[2] < _SETTLE_NS for found in self._settling):
            return
        watched = []
        for path in sorted(set(files)):
            found = self._signature(path)
            if found is not None and now - found[2] < _SETTLE_NS:
                return
            watched.append((path, found))
        entry = {"identity": identity, "environment": environment, "watched": tuple(watched),
                 "described": described}
        try:
            marshal.dumps(entry)  # only plain data is kept (a default or a bound of another kind is described again)
        except ValueError:
            return
        self.entries[key] = entry
        self.changed = True


def _working_folder(index: int, folder: str) -> bool:
    """Whether this `sys.path` folder is the working folder the interpreter put there (first, under `python -m` and
    `python -c`, or written as "" or "."), rather than a folder packages are installed in."""
    if folder == ".":
        return True
    if index != 0:
        return False
    try:
        return os.path.samefile(folder, os.getcwd())
    except OSError:
        return False


def active() -> KeptSchemas | None:
    """The kept descriptions of the plugin loading now (in this thread), if any."""
    return _kept.get()


@contextlib.contextmanager
def keeping(path: Path | None) -> Iterator[KeptSchemas | None]:
    """While a plugin loads: its descriptions looked up in, and added to, the file at `path` (None: none kept)."""
    if path is None:
        yield None
        return
    kept = KeptSchemas(path)
    token = _kept.set(kept)
    try:
        yield kept
    finally:
        _kept.reset(token)
        kept.write()


def key_of(function: Callable[..., Any], tool: str, with_schema: bool, fast: bool) -> tuple[str, tuple] | None:
    """Where a function's description is kept, and what must be equal for it to be given again; None when the
    function is not a plain module-level one (its description is then never kept)."""
    target = inspect.unwrap(function)  # what `inspect.signature` reads the parameters of
    if not isinstance(function, types.FunctionType) or not isinstance(target, types.FunctionType):
        return None
    if "<locals>" in function.__qualname__ + target.__qualname__ or "__signature__" in function.__dict__:
        return None
    code = target.__code__
    try:
        written = [repr(function.__annotations__), repr(target.__annotations__), repr(target.__defaults__),
                   repr(target.__kwdefaults__)]
    except Exception:  # a default whose repr fails: described each time
        return None
    if any(" at 0x" in text for text in written):
        return None  # an object known only by its address is not the same object next time
    layout = (code.co_filename, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
              code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + 2])
    return f"{function.__module__}:{function.__qualname__}", (tool, with_schema, fast, *written, *layout)


def _package_files(top: str) -> tuple[str, ...]:
    """The files of the loaded modules of a top-level package."""
    prefix = f"{top}."
    found = []
    for name, module in list(sys.modules.items()):
        if name == top or name.startswith(prefix):
            where = getattr(module, "__file__", None)
            if isinstance(where, str):
                found.append(where)
    return tuple(found)


def _modules_named(annotations: Iterable[Any]) -> set[str]:
    """The modules of every class and metadata object in these annotations, their arguments, and the fields of the
    shapes they name (TypedDicts, dataclasses, attrs classes, pydantic models), at any depth. The gateway's own
    classes (`Answer`, a `Context`) are not looked into: their module's file stands for them."""
    found: set[str] = set()
    seen: set[int] = set()
    pending = list(annotations)
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        arguments = typing.get_args(item)
        if arguments:
            pending.extend(arguments)
            origin = typing.get_origin(item)
            if origin is not None:
                pending.append(origin)
            metadata = getattr(item, "__metadata__", ())
            pending.extend(metadata)
            continue
        kind = item if isinstance(item, type) else type(item)
        found.add(getattr(kind, "__module__", "") or "")
        if isinstance(item, type) and not kind.__module__.startswith("gateway."):  # the gateway's own: its file
            pending.extend(_fields_of(item))
    return found


@functools.lru_cache(maxsize=1024)
def _fields_of(kind: type) -> tuple[Any, ...]:
    """The annotations of a shape's fields (none for a class of another kind, or whose hints cannot be read)."""
    if not _is_shape(kind):
        return ()
    try:
        return tuple(typing.get_type_hints(kind, include_extras=True).values())
    except Exception:
        return ()


def _is_shape(kind: type) -> bool:
    """Does this class describe its fields by annotations (a TypedDict, dataclass, attrs class or pydantic model)?"""
    import dataclasses

    import attrs
    import typing_extensions

    return (typing_extensions.is_typeddict(kind) or dataclasses.is_dataclass(kind) or attrs.has(kind)
            or hasattr(kind, "model_fields"))
