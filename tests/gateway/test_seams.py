"""The libraries' inner shapes the gateway leans on (gateway.wire.seams), checked so that an upgrade that changes one fails
here, loudly, rather than the gateway quietly; and the server uses the SDK through its public seams only."""

from __future__ import annotations

import inspect

from pydantic import Field

import gateway.wire.server
from gateway.wire.seams import (
    explicit_field_attributes,
    h11_shape_problems,
    opens_modern_era,
    problems_serving_without_relay,
    selector_loop_problems,
    signal_handler,
    signal_handler_problems,
)


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


def test_the_sdk_still_serves_the_handshake_era_as_the_gateway_does_without_its_relay() -> None:
    # `gateway serve` reaches the SDK's handshake-era loop directly (no relay task per message); this fails when the
    # SDK's own choice of era, or the loop it runs for the handshake, changes shape.
    assert problems_serving_without_relay() == []


def test_the_era_is_chosen_by_the_first_requests_envelope() -> None:
    from mcp.shared.inbound import PROTOCOL_VERSION_META_KEY
    from mcp.types import JSONRPCRequest

    def request(method: str, params: dict | None) -> JSONRPCRequest:
        return JSONRPCRequest(jsonrpc="2.0", id=1, method=method, params=params)

    enveloped = {"_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28"}}
    assert opens_modern_era(request("tools/list", enveloped))
    assert not opens_modern_era(request("initialize", enveloped))
    assert not opens_modern_era(request("initialize", {"protocolVersion": "2025-06-18"}))
    assert not opens_modern_era(request("tools/list", {"_meta": {"progressToken": 1}}))
    assert not opens_modern_era(request("ping", None))


def test_asyncio_loops_still_ask_their_selector_before_each_turn() -> None:
    # The stdio transport writes a lone answer as the loop goes to sleep by wrapping this selector's select.
    assert selector_loop_problems() == []


def test_the_signal_handler_read_is_the_one_signal_getsignal_gives() -> None:
    # A quick tool's run on the loop reads its timer's handler through the signal module's C half.
    import signal

    assert signal_handler_problems() == []

    def handler(signum, frame):  # pragma: no cover (never signalled)
        pass

    before = signal.signal(signal.SIGALRM, handler)
    try:
        assert signal_handler(signal.SIGALRM) is signal.getsignal(signal.SIGALRM) is handler
    finally:
        signal.signal(signal.SIGALRM, before)
