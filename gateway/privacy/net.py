"""The core's safety net over every answer: secrets masked in its lines and data, whatever the plugin did.

Next to the masks it applies (`gateway.privacy.masks.mask_secrets`); the core runs it on each answer, listing
and listed item before they leave.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from gateway.api.items import Answer
from gateway.privacy.masks import mask_secrets

T = TypeVar("T")


def mask_data(value: Any) -> Any:
    if isinstance(value, str):
        return mask_secrets(value)
    if _is_number(value):
        # A card number can travel as a JSON number too: it becomes the masked string (a host checking the output
        # schema then refuses the answer, which is better than showing the number). Timestamps and counts pass.
        written = str(value)
        masked = mask_secrets(written)
        return value if masked == written else masked
    if isinstance(value, Mapping):
        return {k: mask_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_data(v) for v in value]
    return value


def _is_number(value: Any) -> bool:
    """A whole number (a float's digits, a score's, say, after its point, are no card: only ints are looked at)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: Any, found: list[str]) -> list[str]:
    """Every string of `value` (a whole number's digits too), depth first. The plain JSON types (dict, list, str,
    int) are told by their exact type, which is several times quicker than the ABC checks that an answer of a
    thousand strings would otherwise pay for each; anything else (a subclass, another Mapping, a tuple) takes
    `_strings_of_any`, the same walk by isinstance."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list:
        items = value
    else:
        return _strings_of_any(value, found)
    for item in items:
        kind = type(item)
        if kind is str:
            found.append(item)
        elif kind is dict or kind is list:
            _strings(item, found)
        elif kind is int:
            found.append(str(item))
        elif item is not None and kind is not float and kind is not bool:
            _strings_of_any(item, found)
    return found


def _strings_of_any(value: Any, found: list[str]) -> list[str]:
    if isinstance(value, str):
        found.append(value)
    elif _is_number(value):
        found.append(str(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, found)
    return found


# Between the strings that `needs_masking` reads as one text: each stays a line of its own (a `password: x` setting
# line is a whole line there as it is alone), and the unit separator between those lines ends every number (a
# card's groups may run on across a line break, not across it). Two fields side by side then read as they read
# alone, and their digits do not run together into a longer number that the glance would look at for nothing.
_SEPARATOR = "\n\x1f\n"


# The digests of texts `needs_masking` found nothing to mask in, never the texts themselves: a host asks again, a search
# kept by its index's generation answers again with the same text, and the masks' look costs several times the
# digest. Masking is a pure function of the text (its rules are code, versioned by MASKS_VERSION), so a text whose
# digest is here needs nothing masked, as it did when it was looked at. At most CLEAN_KEPT digests (then all are
# forgotten), each of a text of at most CLEAN_LENGTH characters (a longer one is looked at afresh every time).
CLEAN_KEPT = 4096
CLEAN_LENGTH = 1 << 20
_clean: set[bytes] = set()


def needs_masking(value: Any) -> bool:
    """Whether any string of `value` (a number's digits too) holds something `mask_secrets` masks: one pass over
    the distinct ones, joined, instead of one per string (none for a text found clean before: `_clean`)."""
    # Each distinct string once: a page of hits repeats its account, folder, flags and dates.
    joined = _SEPARATOR.join(dict.fromkeys(_strings(value, [])))
    if len(joined) > CLEAN_LENGTH:
        return mask_secrets(joined) != joined
    key = hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    if key in _clean:
        return False
    if mask_secrets(joined) != joined:
        return True
    if len(_clean) >= CLEAN_KEPT:
        _clean.clear()
    _clean.add(key)
    return False


def masked_item(item: T, fields: tuple[str, ...]) -> T:
    """A listed template or prompt with the safety net over its words (a plugin could put anything there)."""
    values = [getattr(item, name) or "" for name in fields]
    if not needs_masking(values):
        return item
    return attrs.evolve(item, **{name: mask_secrets(value) for name, value in zip(fields, values, strict=True)})


def _text_is_its_data(answer: Answer) -> bool:
    if answer.data is None or not answer.text.startswith("{"):
        return False
    try:
        return bool(json.loads(answer.text) == answer.data)
    except ValueError:
        return False


def masked_answer(answer: Answer) -> Answer:
    """The core's safety net: secrets masked in the lines and in the data, whatever the plugin did.

    One pass over all the answer's strings, joined by line breaks, tells whether anything at all needs
    masking (it almost never does): a thousand short strings then cost one call, not a thousand.
    """
    if not needs_masking([answer.text, answer.data] if answer.data is not None else answer.text):
        return answer
    if _text_is_its_data(answer):
        # Masking the serialised text could break its JSON (a mask inside a number): the masked data is serialised
        # again instead, so the text stays the JSON of what structuredContent holds.
        data = mask_data(answer.data)
        return attrs.evolve(answer, text=json.dumps(data, ensure_ascii=False, separators=(",", ":")), data=data)
    return attrs.evolve(
        answer,
        text=mask_secrets(answer.text),
        data=mask_data(answer.data) if answer.data is not None else None,
    )
