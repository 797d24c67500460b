"""What a thing is, said the same way by every plugin, and which projects' routes take it: decided here only.

A plugin never decides which of a project's routes apply to its things. It describes each thing by its
`Traits` (the files it lives in or comes from, the people on it, its words as indexed, its place, the projects
it names itself) and asks the gate (`Gate.owners(traits)`); the gate asks `take`, the one function that reads
the manifest's routes for every source. So a route means the same everywhere:

- `paths` take a thing any of whose files is under the route (a message file or its account's root, a task
  list's or a calendar's folder, a note, a card, a transcript's cwd, a tool call's file), with links resolved
  and `~` read both ways (`gateway.gate.routes`); a file hard-linked out of a route's folder is the same file.
- `senders` take a thing any of whose people has that address (or is at that domain), or that phone number.
  Closing errs towards keeping, opening needs proof: a closed project's sender route takes a person whether
  or not the account's server authenticated the address; an open project's takes only a `proven` person (an
  authenticated sender, a recipient of the person's own sent mail, a card in the person's address book).
- `subjects` take a thing any of whose words (its subject or title, its text, its attachments' names, all
  masked as indexed) hold the route's words. A closed project's route also takes words whose mask labels
  (`[code]`, `[link]`...) could hide the route's text (a code: digits and separators only), so what is kept
  depends on the masked words alone; an open project's route must be in the masked words themselves.
- `folders` take a mail folder as the tools print it (`account/folder`), or a bare folder name in every
  account (`Archive` takes `Archive`, `Archive/2026` and `INBOX/Archive`, offlineimap's nesting).
- `accounts`, `lists`, `calendars`, `addressbooks` take a whole mail account, task list, calendar or address
  book by its name (without case). An `accounts` route holding `:` names a ledger's account and takes it with
  the accounts below it (`Expenses:Lawsuit` takes `Expenses:Lawsuit:Fees`).
- `apps`, `urls`: as `gateway.gate.routes` says.
- A thing that names a project itself (a task's `REFID`, a `project:<id>` category, a card's client key, a
  tie) belongs to it: ids compared without case.

`explain` gives the same decision as reasons, for the person (`gateway access why`): each route that took the
thing, and each that could not apply and why.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterable
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from gateway.gate.routes import homes, item_form, route_form, taker

if TYPE_CHECKING:
    from gateway.gate.access import Gate, Project

# The labels the masks put in place of what they hide (gateway.privacy), as they read once casefolded. A code is
# digits of any script joined by spaces, dashes, dots or lines: never a letter. The others may hide anything.
_LABEL = re.compile(r"\[(code|link|sign-in link|link with a token|secret(?::[^\[\]]{1,40})?|(?:iban|card|nir) …[^\[\]]{0,8}"
                    r"|a message giving a password, kept from agents)\]")
MASK_LABELS = _LABEL  # public: the labels the masks leave, as they read once casefolded
_ANY, _NO_LETTER = "any", "no letter"
_PHONE = re.compile(r"^\+?[\d\s().\-/]{6,}$")
_NAME_ROUTES = ("accounts", "lists", "calendars", "addressbooks")
_PLACE_OF = {"accounts": "account", "lists": "list", "calendars": "calendar", "addressbooks": "addressbook"}


def _tuple(value: Any) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str | Person):
        return (value,)
    return tuple(value)


def _people(value: Any) -> tuple[Person, ...]:
    return tuple(p if isinstance(p, Person) else Person(str(p)) for p in _tuple(value))


@frozen
class Person:
    """Someone on a thing: an e-mail address (a display name is allowed: `Lee <lee@example.net>`) or a phone
    number; `proven` when the address is known to be theirs (the account's server authenticated the sender,
    the person wrote to them, or the card is in the person's own address book). `why_unproven` says, for the
    person, why nothing could prove it ("account work has no authserv_id"); it changes no decision."""

    address: str
    proven: bool = False
    # When not proven and the plugin knows why nothing could prove it (an account with no authserv_id): the
    # reason, in a few words, said by `gateway access why` beside an open sender route that could not take it.
    why_unproven: str = ""


@frozen
class Traits:
    """A thing described for the gate. Give every value the thing has; leave the rest empty."""

    paths: tuple[str, ...] = field(default=(), converter=_tuple)
    people: tuple[Person, ...] = field(default=(), converter=_people)
    words: tuple[str, ...] = field(default=(), converter=_tuple)
    account: str = ""
    folder: str = ""
    list: str = ""
    calendar: str = ""
    addressbook: str = ""
    apps: tuple[str, ...] = field(default=(), converter=_tuple)
    urls: tuple[str, ...] = field(default=(), converter=_tuple)
    projects: tuple[str, ...] = field(default=(), converter=_tuple)
    # Why the plugin itself keeps the thing from agents whatever the routes say, in a few words for the person
    # (mail judged hostile by the AI shield); "" for none. It changes no route's decision: `access why` says it.
    held: str = ""


@frozen
class Reason:
    """One route and what it did with a thing: `took` it, or could not apply for the reason `why_not`."""

    project: str
    kind: str
    route: str
    took: bool
    why_not: str = ""


def owners(gate: Gate, traits: Traits) -> frozenset[str]:
    """The projects whose routes take a thing with these traits (any one route of a project suffices)."""
    prepared = _Prepared(traits)
    return frozenset(compiled.project.id for compiled in _compiled(gate, prepared.homes)
                     if _takes(compiled, prepared, None))


def explain(gate: Gate, traits: Traits) -> list[Reason]:
    """Every route that took the thing, and every route of its kind that could not apply, with why."""
    prepared = _Prepared(traits)
    reasons: list[Reason] = []
    for compiled in _compiled(gate, prepared.homes):
        _takes(compiled, prepared, reasons)
    return reasons


class _Routes:
    """One project's routes, each prepared once per gate: the forms of its paths (links resolved), a sender route's
    phone digits or address form, words folded, app and URL forms. A gate asked about 100,000 things prepares them
    once, not once per thing."""

    __slots__ = ("apps", "folded_id", "folders", "names", "paths", "project", "senders", "subjects", "urls")

    def __init__(self, project: Project, home_folders: tuple[str, ...]) -> None:
        self.project = project
        self.folded_id = project.id.casefold()
        self.paths = [(route, route_form("paths", route, home_folders)) for route in project.paths]
        self.senders = []
        for route in project.senders:
            phone = "" if "@" in route else _phone(route)
            self.senders.append((route, phone, "" if phone else route_form("senders", route)))
        self.subjects = [(route, route.casefold()) for route in project.subjects]
        self.folders = tuple(project.folders)
        self.names = [(kind, _PLACE_OF[kind], tuple(getattr(project, kind)))
                      for kind in _NAME_ROUTES if getattr(project, kind)]
        self.apps = [(route, route_form("apps", route)) for route in project.apps]
        self.urls = [(route, route_form("urls", route)) for route in project.urls]


# Per gate (its manifest, the reading of the config that made it, what `~` means): the projects' prepared routes.
_COMPILED: dict[tuple[int, int, tuple[str, ...]], tuple[Any, list[_Routes]]] = {}


def _compiled(gate: Gate, home_folders: tuple[str, ...]) -> list[_Routes]:
    key = (id(gate.manifest), gate.reading, home_folders)
    found = _COMPILED.get(key)
    if found is not None and found[0] is gate.manifest:
        return found[1]
    routes = [_Routes(project, home_folders) for project in gate.projects]
    if len(_COMPILED) >= 16:
        _COMPILED.clear()
    _COMPILED[key] = (gate.manifest, routes)  # the manifest kept: its id cannot be reused while it is here
    return routes


class _Prepared:
    """A thing's traits each prepared once for comparing (forms of paths, addresses lower-cased...)."""

    def __init__(self, traits: Traits) -> None:
        self.traits = traits
        self.homes = homes()
        self.paths = [item_form("paths", p) for p in traits.paths if p]
        self._files: list[tuple[int, int]] | None = None
        self.addresses: list[tuple[str, Person]] = []
        self.phones: list[tuple[str, Person]] = []
        for person in traits.people:
            for address in _addresses_of(person.address):
                self.addresses.append((address, person))
            phone = _phone(person.address)
            if phone:
                self.phones.append((phone, person))
        self.words = [w.casefold() for w in traits.words if w]
        self._patterns: list[list[str]] | None = None
        self.apps = [item_form("apps", a) for a in traits.apps if a]
        self.urls = [item_form("urls", u) for u in traits.urls if u]
        self.projects = {p.casefold() for p in traits.projects if p}

    @property
    def files(self) -> list[tuple[int, int]]:
        """(device, inode) of each of the thing's files that has other names (hard links): asked of the file
        system only when a path route did not take the thing by its paths."""
        if self._files is None:
            self._files = [f for f in map(_file_id, self.traits.paths) if f is not None]
        return self._files

    @property
    def patterns(self) -> list[list[str]]:
        if self._patterns is None:
            self._patterns = [_pattern(word) for word in self.words if "[" in word]
        return self._patterns


def _takes(compiled: _Routes, thing: _Prepared, reasons: list[Reason] | None) -> bool:
    """Does any route of the project take the thing? With `reasons`, every route is tried and said."""
    project = compiled.project
    took = False

    def said(kind: str, route: str, ok: bool, why_not: str = "") -> bool:
        nonlocal took
        if ok:
            took = True
        if reasons is not None and (ok or why_not):
            reasons.append(Reason(project.id, kind, route, ok, why_not))
        return ok and reasons is None  # stop at the first route that takes, unless every reason is wanted

    t = thing.traits
    if thing.projects and compiled.folded_id in thing.projects and said("project", project.id, True):
        return True
    if thing.paths:
        for route, form in compiled.paths:
            if said("paths", route, _path_route_takes(route, form, thing)):
                return True
    if thing.addresses or thing.phones:
        for route, phone, form in compiled.senders:
            ok, why_not = _sender_route_takes(phone, form, thing, project.ai)
            if said("senders", route, ok, why_not):
                return True
    if thing.words:
        for route, folded in compiled.subjects:
            ok, why_not = _words_take(folded, thing, project.ai)
            if said("subjects", route, ok, why_not):
                return True
    if t.folder:
        for route in compiled.folders:
            if said("folders", route, folder_route_takes(route, t.account, t.folder)):
                return True
    for kind, place, routes in compiled.names:
        value = getattr(t, place)
        if value:
            for route in routes:
                if said(kind, route, name_route_takes(kind, route, value)):
                    return True
    if thing.apps:
        take_app = taker("apps")
        for route, form in compiled.apps:
            if said("apps", route, any(take_app(form, a) for a in thing.apps)):
                return True
    if thing.urls:
        take_url = taker("urls")
        for route, form in compiled.urls:
            if said("urls", route, any(take_url(form, u) for u in thing.urls)):
                return True
    return took


def name_route_takes(kind: str, route: str, value: str) -> bool:
    """Does a route naming a whole place (`accounts`, `lists`, `calendars`, `addressbooks`) take this one? Names
    compare without case; an account route whose name holds `:` (a ledger's `Expenses:Lawsuit`) also takes the
    accounts below it (`Expenses:Lawsuit:Fees`), never a sibling that only starts alike (`Expenses:Lawsuits`);
    `Expenses:` names a top-level account with the accounts below it."""
    route, value = route.strip().casefold(), value.strip().casefold()
    if not route:
        return False
    if route == value:
        return True
    if kind != "accounts" or ":" not in route:
        return False
    top = route.rstrip(":")  # `Expenses:` names the whole tree of a top-level account
    return value == top or value.startswith(top + ":")


def _path_route_takes(route: str, prepared: Any, thing: _Prepared) -> bool:
    take = taker("paths")
    if any(take(prepared, item) for item in thing.paths):
        return True
    # A file with other names (hard links): the route takes it when one of its names lies under the route.
    linked = thing.files
    return bool(linked) and any(f in _linked_files_under(route, thing.homes) for f in linked)


@functools.lru_cache(maxsize=131072)
def _file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of a regular file with more than one name; None otherwise (nothing more to find).

    Only absolute paths (``~`` expanded) are asked about: a relative one would be read from wherever the
    server happens to run. Remembered per path until the config or the manifest is read again (`forget_linked`),
    as the files under each route are: a stat per thing per call would cost more than the decision itself."""
    if not path:
        return None
    full = os.path.expanduser(path)
    if not os.path.isabs(full):
        return None
    try:
        status = os.stat(full)
    except (OSError, ValueError):
        return None
    if status.st_nlink < 2 or not stat.S_ISREG(status.st_mode):
        return None
    return status.st_dev, status.st_ino


_LINKED_SCAN_LIMIT = 200_000
_linked_cache: dict[tuple[str, tuple[str, ...]], frozenset[tuple[int, int]]] = {}


def forget_linked() -> None:
    """Forget which hard-linked files lie under which route (the config or the manifest was read again)."""
    _linked_cache.clear()
    _file_id.cache_clear()


def _linked_files_under(route: str, home_folders: tuple[str, ...]) -> frozenset[tuple[int, int]]:
    """Every file with more than one name under the route's folders, as (device, inode); remembered per route."""
    key = (route, home_folders)
    found = _linked_cache.get(key)
    if found is not None:
        return found
    files: set[tuple[int, int]] = set()
    seen = 0
    for form, glob, _inside in route_form("paths", route, home_folders):
        if glob or not os.path.isdir(form):
            continue
        for folder, _dirs, names in os.walk(form):
            for name in names:
                try:
                    status = os.stat(os.path.join(folder, name), follow_symlinks=False)
                except OSError:
                    continue
                if status.st_nlink > 1 and stat.S_ISREG(status.st_mode):
                    files.add((status.st_dev, status.st_ino))
            seen += len(names)
            if seen > _LINKED_SCAN_LIMIT:
                break  # a route over a very large tree: the files looked at so far (said in the plugin guide)
    result = frozenset(files)
    if len(_linked_cache) > 256:
        _linked_cache.clear()
    _linked_cache[key] = result
    return result


@functools.lru_cache(maxsize=16384)
def _addresses_of(value: str) -> tuple[str, ...]:
    """The e-mail addresses in a value (`Lee <lee@example.net>`, `mailto:lee@...`, a bare address), lower-cased."""
    text = value.strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    # `Lee <mailto:lee@...>`, as some cards write: the scheme dropped before parsing (a strict parser, as Python's
    # with the fix of CVE-2023-27043 has, reads nothing from the colon inside the brackets).
    text = re.sub(r"<\s*mailto:", "<", text, flags=re.IGNORECASE)
    found = [address.strip().lower() for _name, address in getaddresses([text]) if "@" in address]
    found = [a[7:] if a.startswith("mailto:") else a for a in found]
    if not found and "@" in text and " " not in text:
        found = [text.lower()]
    return tuple(dict.fromkeys(found))


def _phone(value: str) -> str:
    """A phone number's digits (a leading + kept), or "" when the value is not one."""
    text = value.strip()
    if text.lower().startswith("tel:"):
        text = text[4:]
    if not _PHONE.match(text):
        return ""
    digits = re.sub(r"\D", "", text)
    return digits if len(digits) >= 6 else ""


def _same_phone(route: str, phone: str) -> bool:
    # The last nine digits decide (a number written with or without its country code: +33 6..., 06...).
    return route[-9:] == phone[-9:] and len(route) >= 6


def _sender_route_takes(phone_route: str, prepared: str, thing: _Prepared, open_project: bool) -> tuple[bool, str]:
    """`phone_route`: the route's phone digits when it is a number, else "" and `prepared`, its address form."""
    take = taker("senders")
    if phone_route:
        candidates = [(p, person) for p, person in thing.phones if _same_phone(phone_route, p)]
    else:
        candidates = [(a, person) for a, person in thing.addresses if take(prepared, a)]
    for _value, person in candidates:
        if person.proven or not open_project:
            return True, ""
    if candidates:
        because = next((person.why_unproven for _value, person in candidates if person.why_unproven),
                       "the account's server did not authenticate it")
        return False, (f"{candidates[0][0]} matches, but nothing proves the address is theirs ({because}), and an "
                       "open project's sender route opens only proven addresses")
    return False, ""


def _words_take(route: str, thing: _Prepared, open_project: bool) -> tuple[bool, str]:
    if not route.strip():
        return False, ""
    if any(route in word for word in thing.words):
        return True, ""
    hidden = any(may_take(route, pattern) for pattern in thing.patterns)
    if hidden and open_project:
        return False, ("the words may be behind a mask ([code], [link]...), but an open project's subject route "
                       "opens only words it can read")
    return hidden, ""


def folder_route_takes(route: str, account: str, folder: str) -> bool:
    """Does a `folders` route (`account/folder`, or a bare folder name in every account) take this folder?"""
    route = route.strip().strip("/")
    if not route:
        return False
    folder = folder.strip("/")
    # INBOX is a name without case (IMAP), and some servers nest every folder under it (INBOX/Archive).
    if folder[:6].casefold() == "inbox/" or folder.casefold() == "inbox":
        folder = "INBOX" + folder[5:]
    nested = folder[len("INBOX/"):] if folder.startswith("INBOX/") else ""
    forms = [route]
    head, _, rest = route.partition("/")
    if account and rest and head.casefold() == account.strip().casefold():
        forms.append(rest.strip("/"))  # account/folder, as the tools print it
    take = taker("folders")
    for form in forms:
        if form[:6].casefold() == "inbox/" or form.casefold() == "inbox":
            form = "INBOX" + form[5:]
        if take(form, folder) or (nested and take(form, nested)):
            return True
    return False


def closed_by_hidden_words(gate: Gate, masked: str, owners: Iterable[str] = ()) -> frozenset[str]:
    """The closed projects a subject route of which may take the real text behind this masked text."""
    if "[" not in masked:
        return frozenset()
    pattern = _pattern(masked.casefold())
    if len(pattern) == len(masked):  # no label: the masked text is the real one
        return frozenset()
    mine = set(owners)
    return frozenset(project.id for project in gate.projects
                     if project.subjects and not project.ai and project.id not in mine
                     and any(may_take(route.casefold(), pattern) for route in project.subjects))


def _pattern(text: str) -> list[str]:
    """The text as a list of its characters, each mask label one element: `_ANY` or `_NO_LETTER`."""
    pattern: list[str] = []
    at = 0
    for label in _LABEL.finditer(text):
        pattern += text[at:label.start()]
        pattern.append(_NO_LETTER if label.group(1) == "code" else _ANY)
        at = label.end()
    return pattern + list(text[at:])


def _fits(element: str, character: str) -> bool:
    return element is _ANY or (element is _NO_LETTER and not character.isalpha())


def may_take(route: str, pattern: list[str]) -> bool:
    """Is `route` part of some text the pattern may stand for (each label any text of its kind, even none)?"""
    if not route:
        return False
    holes = {i for i, element in enumerate(pattern) if element is _ANY or element is _NO_LETTER}
    # The places the route may have reached in the pattern: before element i (a hole may also be inside).
    alive = set(range(len(pattern) + 1))
    for character in route:
        reached = set()
        for place in _after_holes(alive, holes):
            if place < len(pattern):
                element = pattern[place]
                if place in holes:
                    if _fits(element, character):
                        reached.add(place)  # still inside the hole, which may go on
                elif element == character:
                    reached.add(place + 1)
        if not reached:
            return False
        alive = reached
    return True


def _after_holes(places: set[int], holes: set[int]) -> set[int]:
    """The places, and those reached by letting each hole they stand at end there (a hole may hide nothing)."""
    found = set(places)
    for place in sorted(places):
        while place in holes:
            place += 1
            found.add(place)
    return found
