"""How a project's route takes an item's trait: what the computer means, not how a string is spelled.

- Paths: the route and the item are each taken in every form they can have (as written; with ``~`` as the
  account's home from the password database and as ``$HOME``; with links resolved), and the route takes
  the item when any form of it takes any form of the item.
- URLs: host without case or trailing dot, default ports, the path percent-decoded, its ``.``/``..``
  segments and repeated slashes resolved, compared without case (many sites ignore it; erring towards
  the route is erring towards closing).
- Apps: the name itself, or the name followed by more words (``Signal`` takes ``Signal Desktop`` and
  ``signal-desktop``, never ``Signalis``).

Forms are remembered per string in bounded caches. Resolving links asks the file system, so those
forms are forgotten whenever the config or the manifest is read again (``forget_links``): a link changed
while the gateway serves is seen at the next change of either file (touch the manifest to force it), or
once the bounded cache has let the path go.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import pwd
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

_FORMS_REMEMBERED = 16384
_GLOB = re.compile(r"[*?\[]")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_APP_SEPARATORS = re.compile(r"[\s_.\-]+")


@functools.lru_cache(maxsize=4)
def _account_home(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_dir or None
    except KeyError:
        return None


def homes() -> tuple[str, ...]:
    """The account's home (password database), then ``$HOME`` when it differs: what ``~`` may mean."""
    return _homes(os.getuid(), os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _homes(uid: int, env_home: str | None) -> tuple[str, ...]:
    found = [_account_home(uid), env_home]
    return tuple(dict.fromkeys(os.path.normpath(home) for home in found if home))


def _expanded(value: str, home_folders: tuple[str, ...]) -> list[str]:
    if value == "~" or value.startswith("~/"):
        return [home + value[1:] for home in home_folders] or [value]
    if value.startswith("~"):
        return [os.path.expanduser(value)]  # ~other: that account's home, from the password database
    return [value]


def _literal(value: str) -> str:
    if not value:
        return value
    # On this system "//x" is "/x" (POSIX leaves two leading slashes to the system; Linux and macOS ignore them).
    return "/" + os.path.normpath(value).strip("/") if value.startswith("/") else os.path.normpath(value).rstrip("/")


def _resolved(value: str) -> str:
    """Links resolved (the part of the path that exists; a glob resolved up to its first pattern)."""
    pattern = _GLOB.search(value)
    if pattern is None:
        return os.path.realpath(value)
    head, _, _ = value[: pattern.start()].rpartition("/")
    rest = value[len(head):]
    return (os.path.realpath(head or "/").rstrip("/") + rest) if head else value


@functools.lru_cache(maxsize=_FORMS_REMEMBERED)
def _literal_forms(value: str, home_folders: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_literal(form) for form in _expanded(value.strip(), home_folders)))


@functools.lru_cache(maxsize=_FORMS_REMEMBERED)
def _resolved_forms(value: str, home_folders: tuple[str, ...]) -> tuple[str, ...]:
    forms = list(_literal_forms(value, home_folders))
    for form in _expanded(value.strip(), home_folders):
        if os.path.isabs(form):
            forms.append(_literal(_resolved(form)))
    return tuple(dict.fromkeys(forms))


def path_forms(value: str, home_folders: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Every form of a path: as written, `~` expanded both ways, links resolved (absolute paths only)."""
    return _resolved_forms(value, homes() if home_folders is None else home_folders)


def forget_links() -> None:
    """Forget resolved links (the config or the manifest was read again)."""
    _resolved_forms.cache_clear()
    _route_form.cache_clear()


def _path_takes(route: tuple[tuple[str, bool, str], ...], item: tuple[str, ...]) -> bool:
    for form, glob, inside in route:
        for path in item:
            if glob:
                if fnmatch.fnmatchcase(path, form) or fnmatch.fnmatchcase(path, form.rstrip("/") + "/*"):
                    return True
            # Inside the route's folder, or the folder itself: "/a/b" takes "/a/b/c", never "/a/bc".
            elif path == form or path.startswith(inside):
                return True
    return False


@functools.lru_cache(maxsize=_FORMS_REMEMBERED)
def url_parts(value: str) -> tuple[str, int | None, str] | None:
    """(host, port or None for the scheme's default, path) as a browser means them; None if not a URL."""
    text = value.strip().replace("\\", "/")  # browsers read a backslash as a slash in web addresses
    try:
        parts = urlsplit(text if "//" in text else "//" + text)
        port = parts.port
    except ValueError:
        return None
    host = unquote(parts.hostname or "").rstrip(".").lower()
    if not host:
        return None
    if not host.isascii():
        with contextlib.suppress(UnicodeError):
            host = host.encode("idna").decode("ascii")
    if port is not None and port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        port = None
    segments: list[str] = []
    for segment in unquote(parts.path).split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment not in ("", "."):
            segments.append(segment)
    return host, port, ("/" + "/".join(segments)).casefold()


def _url_takes(route: tuple[str, int | None, str] | None, url: tuple[str, int | None, str] | None) -> bool:
    if route is None or url is None:
        return False
    (route_host, route_port, route_path), (host, port, path) = route, url
    if not (host == route_host or host.endswith("." + route_host)):
        return False
    # A route naming a port of its own (localhost:3000) takes only that port; otherwise any.
    if route_port not in (None, 80, 443) and port != route_port:
        return False
    return route_path == "/" or path == route_path or path.startswith(route_path + "/")


@functools.lru_cache(maxsize=_FORMS_REMEMBERED)
def _app_words(name: str) -> str:
    return _APP_SEPARATORS.sub(" ", name.casefold()).strip()


def _app_takes(route: str, app: str) -> bool:
    return bool(route) and (app == route or app.startswith(route + " "))


def _sender_takes(route: str, sender: str) -> bool:
    if "@" in route.lstrip("@"):
        return sender == route
    domain = route.lstrip("@").rstrip(".")
    host = sender.rpartition("@")[2].rstrip(".")
    return host == domain or host.endswith("." + domain)


def _folder_takes(route: str, folder: str) -> bool:
    return folder == route or folder.startswith(route.rstrip("/") + "/")


def _normal(value: str) -> str:
    return value.strip().lower()


# Per kind of route: how an item's value is prepared, how a route is prepared, and whether one takes the other.
_ITEM: dict[str, Callable[[str], Any]] = {
    "paths": path_forms, "urls": url_parts, "apps": _app_words, "senders": _normal, "subjects": str.casefold,
    "folders": str,
}
_TAKES: dict[str, Callable[[Any, Any], bool]] = {
    "paths": _path_takes, "urls": _url_takes, "apps": _app_takes, "senders": _sender_takes,
    "subjects": lambda route, subject: route in subject, "folders": _folder_takes,
}


def item_form(kind: str, value: str) -> Any:
    """An item's trait prepared for comparing with routes of this kind (remembered per string)."""
    return _ITEM[kind](value)


@functools.lru_cache(maxsize=_FORMS_REMEMBERED)
def _route_form(kind: str, route: str, home_folders: tuple[str, ...]) -> Any:
    if kind == "paths":
        forms = _resolved_forms(route, home_folders)
        return tuple((form, bool(_GLOB.search(form)), form if form == "/" else form + "/") for form in forms)
    if kind == "subjects":
        return route.casefold()
    return _ITEM[kind](route)


def route_form(kind: str, route: str, home_folders: tuple[str, ...] | None = None) -> Any:
    """A route prepared for comparing (remembered; paths with their resolved links until `forget_links`)."""
    return _route_form(kind, route, homes() if home_folders is None else home_folders)


def taker(kind: str) -> Callable[[Any, Any], bool]:
    """The test of this kind: does a prepared route take a prepared item?"""
    return _TAKES[kind]


def matches(kind: str, route: str, value: str) -> bool:
    """Does a route of this kind (``paths``, ``urls``...) take this value? Both as the computer means them."""
    return taker(kind)(route_form(kind, route), item_form(kind, value))
