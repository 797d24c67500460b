"""Subject routes read through the masks: which closed projects' routes may take the real subject behind a masked one.

The reading itself is the core's (`gateway.may_take`, `gateway.words_pattern`, the same the gate uses for every
source); this module keeps the names mail readers have imported. A closed project's route that may
match once a mask label (`[code]`, `[link]`...) is read as the text it could hide (a code: any run of digits and separators; anything else: any text) closes the
message; what is closed depends on the masked subject only, so counts tell an agent no digit behind a label.
"""

from __future__ import annotations

from gateway import MASK_LABELS as _LABEL
from gateway import Gate, closed_by_hidden_words, may_take, words_pattern

_pattern = words_pattern
__all__ = ["closed_by_hidden_subject", "may_take", "_pattern", "_LABEL"]


def closed_by_hidden_subject(gate: Gate, masked_subject: str, owners: frozenset[str]) -> frozenset[str]:
    """The closed projects a subject route of which may take the real subject behind this masked one."""
    return closed_by_hidden_words(gate, masked_subject, owners)
