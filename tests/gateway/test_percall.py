"""What a call no longer does twice, and that nothing it used to guarantee went with it: a plugin's settings checked
once per configuration read, the audit line chained without reading the log back, the masks' net reading an
answer's strings as one text without letting two of them hide a secret."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gateway_hello
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.engine.audit import AuditLog
from gateway.engine.registry import Plugin
from gateway.privacy.masks import mask_secrets
from gateway.privacy.net import masked_answer, needs_masking
from gateway.testing import make_gateway, write_config
from tests.gateway.test_masks import CHUNKS

# --- settings -------------------------------------------------------------------------------------------------


def test_settings_are_checked_once_per_configuration_and_again_when_it_changes(
    gateway_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = make_gateway([gateway_hello], config={"gateway": {"plugins": ["hello"]}}, home=gateway_home)
    assert gateway.call("hello", {"name": "Ada"}).data["greeting"] == "Hello"
    checked: list[str] = []
    settings_for = Plugin.settings_for

    def counted(self: Plugin, table: object) -> dict:
        checked.append(self.name)
        return settings_for(self, table)

    monkeypatch.setattr(Plugin, "settings_for", counted)
    for _ in range(3):
        assert gateway.call("hello", {"name": "Ada"}).data["greeting"] == "Hello"
    assert checked == []
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}, "plugins": {"hello": {"greeting": "Bonjour"}}})
    assert gateway.call("hello", {"name": "Ada"}).data["greeting"] == "Bonjour"
    assert gateway.call("hello", {"name": "Ada"}).data["greeting"] == "Bonjour"
    assert checked.count("hello") == 1


def test_a_plugin_changing_its_settings_does_not_change_the_next_calls(gateway_home: Path) -> None:
    gateway = make_gateway([gateway_hello], config={"gateway": {"plugins": ["hello"]}}, home=gateway_home)
    snapshot = gateway.snapshot()
    plugin = gateway.registry.get("hello")
    first = gateway.settings_of(plugin, snapshot.config)
    first["greeting"] = "Changed by a careless plugin"
    assert gateway.settings_of(plugin, snapshot.config)["greeting"] == "Hello"
    assert gateway.call("hello", {"name": "Ada"}).data["greeting"] == "Hello"


# --- the audit line -------------------------------------------------------------------------------------------

ENTRY = {"client": "claude-code", "transport": "stdio", "plugin": "mail", "tool": "search_mail",
         "arguments": {"query": "café ünïcode “quoted”", "limit": 20}, "outcome": "ok",
         "given": ["mid:m1@example.org"], "length": 4200, "left_out": 3, "ms": 2.4, "path": Path("/tmp/x")}


def _lines(folder: Path) -> list[bytes]:
    return b"".join(path.read_bytes() for path in sorted(folder.glob("*.jsonl"))).splitlines()


def test_audit_lines_are_the_bytes_json_dumps_gives(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    log.write(ENTRY)
    log.write(ENTRY)
    first, second = _lines(tmp_path / "audit")
    for raw, prev in ((first, ""), (second, hashlib.sha256(first).hexdigest())):
        record = json.loads(raw)
        assert record["prev"] == prev
        assert raw == json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode()
    assert log.verify() == []


def test_the_chain_holds_when_two_logs_take_turns_on_one_file(tmp_path: Path) -> None:
    """Two writers (two gateway processes' logs) alternate: each line chains to the other's, not to its own last."""
    ours, theirs = AuditLog(tmp_path / "audit"), AuditLog(tmp_path / "audit")
    for number in range(6):
        (ours if number % 3 else theirs).write({**ENTRY, "number": number})
    lines = _lines(tmp_path / "audit")
    assert len(lines) == 6
    for before, line in zip(lines, lines[1:], strict=False):
        assert json.loads(line)["prev"] == hashlib.sha256(before).hexdigest()
    assert ours.verify() == []


def test_a_line_written_by_hand_after_ours_is_chained_to_not_skipped(tmp_path: Path) -> None:
    """A line appended behind the log's back changes where the file ends: the next line chains to it as it is."""
    log = AuditLog(tmp_path / "audit")
    log.write(ENTRY)
    path = next((tmp_path / "audit").glob("*.jsonl"))
    foreign = b'{"written":"by hand","prev":"x"}'
    with path.open("ab") as handle:
        handle.write(foreign + b"\n")
    log.write(ENTRY)
    assert json.loads(_lines(tmp_path / "audit")[-1])["prev"] == hashlib.sha256(foreign).hexdigest()
    assert log.verify()  # the hand-written line breaks the chain, and verify says where


def test_a_log_replaced_under_the_writer_starts_a_file_that_verify_reads(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    log.write(ENTRY)
    path = next((tmp_path / "audit").glob("*.jsonl"))
    path.unlink()
    log.write(ENTRY)
    log.write(ENTRY)
    lines = _lines(tmp_path / "audit")
    assert len(lines) == 2 and json.loads(lines[0])["prev"] == ""
    assert json.loads(lines[1])["prev"] == hashlib.sha256(lines[0]).hexdigest()


# --- the masks' net -------------------------------------------------------------------------------------------

fields = st.lists(st.one_of(st.sampled_from(CHUNKS), st.text(max_size=6), st.integers(0, 10**20)), max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(fields.map(lambda parts: "".join(map(str, parts))), min_size=1, max_size=6), st.integers(0, 10**20))
def test_the_net_sees_every_field_that_alone_needs_masking(values: list[str], number: int) -> None:
    """The strings are read as one text; whatever one of them would be masked for alone, the net still sees, so
    the answer's strings are each masked: never a field that leaves as it came when alone it would not."""
    data = {"fields": values, "number": number}
    alone = any(mask_secrets(value) != value for value in values) or mask_secrets(str(number)) != str(number)
    if alone:
        assert needs_masking(data)
    from gateway import Answer

    masked = masked_answer(Answer(text="", data=data)).data
    assert masked["fields"] == [mask_secrets(value) for value in values]


def test_a_setting_line_in_one_field_is_masked_whatever_its_neighbours() -> None:
    """`password: x` is a setting only as a whole line: beside other fields it still is one."""
    setting = "password: Hunter2-correct-horse"
    assert mask_secrets(setting) != setting
    assert needs_masking(["Subject: the plan", setting, "7"])
    assert needs_masking(["Subject: the plan", 2026, setting])


# --- the computer's zone ------------------------------------------------------------------------------------------


def test_the_computers_zone_is_found_again_when_tz_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway import computer_zone

    monkeypatch.setenv("TZ", "Europe/Paris")
    assert str(computer_zone()) == "Europe/Paris"
    assert computer_zone() is computer_zone()
    monkeypatch.setenv("TZ", "America/Montreal")
    assert str(computer_zone()) == "America/Montreal"


# --- the wire -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    {"text": "two hits", "data": {"hits": [{"n": 1, "subject": "café"}], "more": False}},
    {"text": "the tool failed", "data": {"hits": []}, "is_error": True},
    {"text": "plain words"},
])
def test_a_call_result_is_what_the_sdks_model_dumps_to(answer: dict) -> None:
    """The result handed to the SDK as a mapping is the one its CallToolResult would have dumped to."""
    import mcp_types as types

    from gateway import Answer
    from gateway.wire.server import _call_result

    given = Answer(**answer)
    model = types.CallToolResult(
        content=[types.TextContent(type="text", text=given.text)],
        structured_content=dict(given.data) if given.data is not None and not given.is_error else None,
        is_error=given.is_error)
    assert _call_result(given) == model.model_dump(by_alias=True, mode="json", exclude_none=True)
