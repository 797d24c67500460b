"""Asking the gate where many things belong, without asking it once per thing for what no route could take.

The gate decides (`Gate.owners(traits)`); the plugin only describes. But the gate reads every route of every
project for each question (about a millisecond with fifty projects), and the plugin holds a hundred thousand
messages and tens of thousands of tasks. So each thing is described in parts, and each part asked about once per
distinct value and only when some route could take it:

- The gate's decision is a union over routes, each of which reads one trait (a `paths` route the paths, a
  `senders` route the people, a `subjects` route the words, a `folders` route the account and folder, a name
  route its place, the project's own id the named projects). So the owners of a thing are the union of the owners
  of its parts, each part a `Traits` of its own: the place (account, folder, list, calendar, address book, and the
  folders the thing lives in), the file, the people, the words, the projects it names.
- A part is asked about only when a route could take it: a person when some sender route's text (an address, or a
  domain without its `@`) is part of one of their addresses, or when some route is a phone number and they have
  one; words when some subject route's text (casefolded) is in them, or when a closed project has subject routes
  and the words hold a mask label (which may hide anything); a file when some path route is a pattern or lies
  inside the folder already asked about (every other path route that takes the file takes its folder), or when
  the file has other names (a hard link: notes are looked at so; a message or a task file is not). Each is a
  necessary condition of the gate's own test (gateway.gate.traits), never a sufficient one: the gate confirms.
- Each answer is remembered per gate (`GateMemo`, in the caller): what new things share with old ones is not
  asked again.

`traits_of` and `census` give the whole `Traits` of a thing, for the person; the parts asked here are pieces of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from maildirs.subjects import _LABEL

from gateway import Gate, GateMemo, Person, Traits

_NONE: frozenset[str] = frozenset()
_GLOB = re.compile(r"[*?\[]")
_PHONE_ROUTE = re.compile(r"^\+?[\d\s().\-/]{6,}$")
_LETTERS = re.compile(r"[^\W\d_]+")
_CODE = "[code]"


class Placer:
    """One gate's routes read once, and the parts of things asked about, each distinct value once."""

    def __init__(self, gate: Gate, memo: dict | None = None) -> None:
        self.gate = gate
        self.memo: dict = {} if memo is None else memo
        projects = gate.projects
        self.senders = sorted({_sender_text(r) for p in projects for r in p.senders
                               if "@" in r or not _PHONE_ROUTE.match(r.strip())} - {""})
        self.phones = any(_PHONE_ROUTE.match(r.strip()) and "@" not in r for p in projects for r in p.senders)
        self.subjects = sorted({r.casefold() for p in projects for r in p.subjects} - {""})
        # Any route's text anywhere in the casefolded words (a substring, as the gate compares), one search.
        self._any_subject = re.compile("|".join(map(re.escape, self.subjects))) if self.subjects else None
        closed = sorted({r.casefold() for p in projects if not p.ai for r in p.subjects} - {""})
        self.closed_subjects = bool(closed)
        # Each closed route's runs of letters: a code label hides no letter, so behind codes alone a route is
        # possible only when each of its runs of letters is in the text with the code labels taken out.
        self.closed_letters = [_LETTERS.findall(route) for route in closed]
        self.path_routes = [r for p in projects for r in p.paths if r.strip()]
        self._inside: dict[str, bool] = {}

    def _ask(self, key: tuple, traits: Callable[[], Traits]) -> frozenset[str]:
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self.gate.owners(traits())
        return found

    def place(self, paths: Iterable[str] = (), **place: str) -> frozenset[str]:
        """The owners of a place: its name(s) (account and folder, list, calendar, address book) and its folders."""
        paths = tuple(p for p in paths if p)
        return self._ask(("place", paths, *place.items()), lambda: Traits(paths=paths, **place))

    def file(self, path: str, folder: str, linked: bool = False) -> frozenset[str]:
        """The owners of one file by its own path, asked only when a path route could take it and not `folder`: a
        route inside the folder, a pattern, or the file `linked` (it has other names, which a route may take)."""
        if not self.path_routes or not (linked or self._may_reach_inside(folder)):
            return _NONE
        return self._ask(("file", path), lambda: Traits(paths=(path,)))

    def _may_reach_inside(self, folder: str) -> bool:
        found = self._inside.get(folder)
        if found is None:
            prefixes = {os.path.normpath(folder) + "/", os.path.realpath(folder) + "/"}
            found = False
            for route in self.path_routes:
                written = os.path.expanduser(route.strip())
                forms = {os.path.normpath(written), os.path.realpath(written)} if os.path.isabs(written) else {written}
                if any(_GLOB.search(form) or any(form.startswith(p) for p in prefixes) for form in forms):
                    found = True
                    break
            self._inside[folder] = found
        return found

    def people(self, people: Iterable[Person]) -> frozenset[str]:
        """The owners of the people on a thing (addresses with their proof, phone numbers)."""
        people = tuple(people)
        if not people or not (self.senders or self.phones):
            return _NONE
        if not self.phones:
            text = " ".join(p.address.lower() for p in people)
            if not any(route in text for route in self.senders):
                return _NONE
        return self._ask(("people", people), lambda: Traits(people=people))

    def words(self, words: Iterable[str], key: tuple | None = None) -> frozenset[str]:
        """The owners of a thing's words (masked): asked when a subject route's text is in them, or when they
        hold a mask label and a closed project has subject routes. `key` stands for long words in the memo."""
        words = tuple(w for w in words if w)
        if not words or not self.subjects or not self.may_take_words(words):
            return _NONE
        return self._ask(("words", key if key is not None else words), lambda: Traits(words=words))

    def may_take_words(self, words: tuple[str, ...]) -> bool:
        folded = [w.casefold() for w in words]
        if self._any_subject is not None and any(self._any_subject.search(w) for w in folded):
            return True
        if not self.closed_subjects:
            return False
        labels = [label for w in folded if "[" in w for label in _LABEL.finditer(w)]
        if not labels:
            return False
        if any(label.group(1) != "code" for label in labels):
            return True  # any other label may hide any text
        bare = " ".join(w.replace(_CODE, "") for w in folded)
        return any(all(run in bare for run in runs) for runs in self.closed_letters)

    def named(self, projects: Iterable[str]) -> frozenset[str]:
        """The owners a thing names itself (a REFID, a `project:` category, a client key, a tie)."""
        projects = tuple(sorted({p for p in projects if p}))
        if not projects:
            return _NONE
        return self._ask(("named", projects), lambda: Traits(projects=projects))


def _sender_text(route: str) -> str:
    """What of a sender route must be in an address it takes: the address (a display name and `mailto:` left
    out) or the domain, lower-cased, without a leading `@`."""
    text = route.strip().lower()
    if "<" in text and ">" in text:
        text = text[text.rindex("<") + 1:text.rindex(">")]
    return text.removeprefix("mailto:").strip().lstrip("@")


def has_label(text: str) -> bool:
    """Does this masked text hold a mask label (`[code]`, `[link]`...)?"""
    return "[" in text and _LABEL.search(text.casefold()) is not None


_placers: GateMemo[Placer] = GateMemo(gates=16)
# The placers last given, by the gate object itself: hashing a gate hashes its whole manifest (a millisecond with
# fifty projects), which asking once per task or event would pay each time.
_recent: dict[tuple[int, str], tuple[Gate, Placer]] = {}


def placer(gate: Gate, kind: str) -> Placer:
    """The placer of one kind of thing (`task`, `event`...) for this gate: its answers kept while the gate is."""
    found = _recent.get((id(gate), kind))
    if found is not None and found[0] is gate:
        return found[1]
    made = _placers.get(gate, lambda: Placer(gate), key=kind)
    if len(_recent) > 32:
        _recent.clear()
    _recent[(id(gate), kind)] = (gate, made)
    return made
