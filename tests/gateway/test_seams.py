"""The libraries' inner shapes the gateway leans on (gateway.wire.seams), checked so that an upgrade that changes one fails
here, loudly, rather than the gateway quietly; and the server uses the SDK through its public seams only."""

from __future__ import annotations

import inspect

from pydantic import Field

import gateway.wire.server
from gateway.wire.seams import explicit_field_attributes, h11_shape_problems


def test_pydantic_says_which_attributes_a_field_was_given() -> None:
    assert explicit_field_attributes(Field(ge=1, le=5, description="how many")) == {"description"}
    assert explicit_field_attributes(Field(default=3, alias="n")) >= {"alias"}
    assert explicit_field_attributes(Field()) == frozenset()


def test_uvicorn_h11_protocol_has_what_the_bounded_protocol_reads() -> None:
    assert h11_shape_problems() == []


def test_the_server_replaces_no_method_of_the_sdks_objects() -> None:
    source = inspect.getsource(gateway.wire.server)
    assert "method-assign" not in source and "__pydantic_serializer__" not in source
    assert "._" not in "".join(line.split("#")[0] for line in source.splitlines()
                               if "server." in line and "self._" not in line)
