"""Where the gateway leans on a library's inner shape, in one place, each checked by `tests/gateway/test_seams.py`
so that an upgrade that changes it fails a test loudly instead of the gateway quietly.

- pydantic: which attributes a `Field(...)` was given explicitly (a tool parameter's `Field` with only a
  description and bounds is published as a plain schema; anything else is refused). pydantic keeps this in
  `FieldInfo._attributes_set`; it has no public name.
- uvicorn: the HTTP protocol class the gateway bounds (`gateway.wire.http.bounded_protocol`) subclasses uvicorn's h11
  protocol, which uvicorn lets a server choose (`Config(http=...)`), and reads its connection set, its current
  request cycle and its transport and loop, as `H11_ATTRIBUTES` lists.
"""

from __future__ import annotations

from typing import Any

# What bounded_protocol reads or overrides of uvicorn's H11Protocol.
H11_ATTRIBUTES = ("connections", "cycle", "transport", "loop")
H11_METHODS = ("connection_made", "data_received", "on_response_complete", "connection_lost")


def explicit_field_attributes(info: Any) -> frozenset[str]:
    """The attributes a pydantic `FieldInfo` was given explicitly (`description`, `default`, `alias`...), its bounds
    aside (they are in `info.metadata`)."""
    return frozenset(info._attributes_set)  # noqa: SLF001 - the one place pydantic's inner shape is read


def h11_shape_problems() -> list[str]:
    """What the gateway needs of uvicorn's h11 protocol and it no longer has ([] when all is there)."""
    import inspect

    from uvicorn.protocols.http.h11_impl import H11Protocol

    source = inspect.getsource(H11Protocol)
    problems = [f"H11Protocol has no method {name}" for name in H11_METHODS if not callable(getattr(H11Protocol, name,
                                                                                                      None))]
    problems += [f"H11Protocol no longer sets self.{name}" for name in H11_ATTRIBUTES if f"self.{name} =" not in source
                 and f"self.{name}:" not in source]
    return problems
