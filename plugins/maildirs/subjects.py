"""Subject routes read through the masks: which closed projects' routes may take the real subject behind a masked one.

Moved here from the mail plugin's gating (which imports it), so that every reader of mail (the spam plugin too)
places a message the same way. A closed project's route that may match once a mask label (`[code]`, `[link]`...) is
read as the text it could hide (a code: any run of digits and separators; anything else: any text) closes the
message; what is closed depends on the masked subject only, so counts tell an agent no digit behind a label.
"""

from __future__ import annotations

import re

from gateway import Gate

# The labels the masks put in place of what they hide (gateway.privacy), as they read once casefolded. A code is
# digits of any script joined by spaces, dashes, dots or lines: never a letter. The others may hide anything.
_LABEL = re.compile(r"\[(code|link|sign-in link|link with a token|secret(?::[^\[\]]{1,40})?|(?:iban|card|nir) …[^\[\]]{0,8}"
                    r"|a message giving a password, kept from agents)\]")
_ANY, _NO_LETTER = "any", "no letter"


def closed_by_hidden_subject(gate: Gate, masked_subject: str, owners: frozenset[str]) -> frozenset[str]:
    """The closed projects a subject route of which may take the real subject behind this masked one."""
    if "[" not in masked_subject:
        return frozenset()
    pattern = _pattern(masked_subject.casefold())
    if len(pattern) == len(masked_subject):  # no label: the masked subject is the real one
        return frozenset()
    return frozenset(project.id for project in gate.projects
                     if project.subjects and not project.ai and project.id not in owners
                     and any(may_take(route.casefold(), pattern) for route in project.subjects))


def _pattern(subject: str) -> list[str]:
    """The subject as a list of its characters, each label one element: `_ANY` or `_NO_LETTER`."""
    pattern: list[str] = []
    at = 0
    for label in _LABEL.finditer(subject):
        pattern += subject[at:label.start()]
        pattern.append(_NO_LETTER if label.group(1) == "code" else _ANY)
        at = label.end()
    return pattern + list(subject[at:])


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
