"""What a tool, resource or prompt gives back (`Answer`): a leaf module, so that the schemas read from annotations
(`Answer[Shape]`) and the items that hold tools need not import each other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import attrs
from attrs import field, frozen

DataT = TypeVar("DataT")


def _plain_data(value: Any) -> Mapping[str, Any] | None:
    """An answer's data as a JSON object: a mapping as given; a dataclass, attrs or pydantic instance dumped."""
    if value is None or isinstance(value, Mapping):
        return value
    if attrs.has(type(value)):
        return attrs.asdict(value)
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"an answer's data is a {type(value).__name__}; give a dict, a dataclass, an attrs class or a "
                    "pydantic model")


@frozen
class Answer(Generic[DataT]):
    """What a tool, resource or prompt gives back: lines for the model, the same as data, and what the audit keeps.

    A tool says the shape of its data in its return annotation, ``-> Answer[Shape]`` (``Shape`` a TypedDict,
    dataclass, attrs class or pydantic model): the core publishes it as the tool's output schema and checks
    `data` against it after each call. `data` may be a dict or an instance of the shape (dumped to a dict).

    `given` names the items given by their addresses (``rousseau://sessions/abc``), `left_out` counts what the
    gate kept back; both go to the audit log, never the text.
    """

    text: str
    data: Mapping[str, Any] | None = field(default=None, converter=_plain_data)
    given: tuple[str, ...] = field(default=(), converter=tuple)
    left_out: int = 0
    is_error: bool = False
    # The owners of a Refused, for an in-process caller (`gateway access why`); never sent, never audited.
    refused_by: frozenset[str] | None = field(default=None, repr=False, eq=False)

    @classmethod
    def of(cls, value: Any) -> Answer:
        """Turn what a plugin function returned into an Answer (str, dict, Answer or None)."""
        if isinstance(value, Answer):
            return value
        if value is None:
            return cls(text="")
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, Mapping):
            import json

            return cls(text=json.dumps(value, ensure_ascii=False, indent=1, default=str), data=dict(value))
        raise TypeError(f"a plugin function returned {type(value).__name__}; return str, dict or Answer")
