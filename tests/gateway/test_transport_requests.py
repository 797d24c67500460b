"""A request line is validated as the one model it must be (a request, or a notification when it has no id), where the
SDK's union of the four kinds of message was asked before: the same message, or the same refusal, for every line that
reaches that step (a method that is a string, params an object when given, "jsonrpc" "2.0", no result, no error)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import JSONRPCNotification, JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError

from gateway.wire.transport import _request_of

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)
IDS = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8), st.floats(allow_nan=False), st.booleans(), st.none(),
                st.lists(st.integers(), max_size=2), JSON_VALUES)
EXTRA = st.dictionaries(st.sampled_from(["extra", "_meta", "Id", "METHOD", "jsonrpc2"]), JSON_VALUES, max_size=2)


def _union_way(obj: dict, notification: bool):
    try:
        message = jsonrpc_message_adapter.validate_python(obj)
    except ValidationError:
        return None
    return message if type(message) is (JSONRPCNotification if notification else JSONRPCRequest) else None


@settings(max_examples=1500, deadline=None)
@given(method=st.text(max_size=12), has_id=st.booleans(), request_id=IDS,
       params=st.one_of(st.none(), st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3)),
       has_params=st.booleans(), extra=EXTRA)
def test_a_request_line_is_the_message_the_sdks_union_makes_of_it(method, has_id, request_id, params, has_params,
                                                                  extra) -> None:
    obj = {**extra, "jsonrpc": "2.0", "method": method}
    if has_id:
        obj["id"] = request_id
    if has_params:
        obj["params"] = params
    obj = json.loads(json.dumps(obj))  # as a line read off the wire gives it
    expected, found = _union_way(obj, not has_id), _request_of(obj, not has_id)
    assert (found is None) == (expected is None), obj
    if found is not None:
        assert type(found) is type(expected) and found == expected
        assert found.model_fields_set == expected.model_fields_set
        assert found.model_dump_json(by_alias=True, exclude_unset=True) == expected.model_dump_json(
            by_alias=True, exclude_unset=True)


def test_each_kind_of_id_as_the_union_takes_it() -> None:
    for request_id in (7, "7", 7.5, True, None, [7], {"a": 1}, 2**64, -1, ""):
        for params in ({}, {"name": "search_mail"}, None):
            obj = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            assert _request_of(obj, False) == _union_way(obj, False), obj
            assert _request_of({k: v for k, v in obj.items() if k != "id"}, True) == _union_way(
                {k: v for k, v in obj.items() if k != "id"}, True)
