"""`gateway token add/list/revoke` and the store the HTTP server reads: each token a file of its own, readable by the
person alone, holding a hash and never the secret; found in constant time; revoked by removing its file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.engine import tokens
from gateway.engine.audit import AuditLog
from gateway.engine.tokens import TokenError, TokenStore
from gateway.testing import folders_of, write_config
from gateway.wire.http import RequireToken


@pytest.fixture
def home(gateway_home: Path) -> Path:
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]},
                                "profiles": {"chatgpt": {"projects": ["garden"]}, "laptop": {}}})
    return gateway_home


def run(*arguments: str):
    return CliRunner().invoke(main, list(arguments))


def folder(home: Path) -> Path:
    return folders_of(home).state / "tokens"


def test_add_prints_the_secret_once_and_keeps_only_its_hash(home: Path) -> None:
    made = run("token", "add", "chatgpt", "--profile", "chatgpt")
    assert made.exit_code == 0, made.output
    secret = made.stdout.splitlines()[0]
    assert len(secret) >= 40
    assert "shown this once" in made.stderr and "Authorization: Bearer" in made.stderr
    kept = folder(home) / "chatgpt.json"
    body = json.loads(kept.read_text())
    assert body["profile"] == "chatgpt" and body["name"] == "chatgpt" and body["created"]
    assert body["sha256"] == tokens.digest(secret)
    assert secret not in kept.read_text()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder(home).stat().st_mode) == 0o700
    assert [p.name for p in folder(home).iterdir()] == ["chatgpt.json"], "no temporary file is left behind"
    listed = run("token", "list")
    assert listed.exit_code == 0
    assert "chatgpt  profile=chatgpt" in listed.output and "last used=never" in listed.output
    assert secret not in listed.output and body["sha256"] not in listed.output


def test_add_refuses_a_taken_name_a_bad_name_the_reserved_name_and_an_undefined_profile(home: Path) -> None:
    assert run("token", "add", "laptop", "--profile", "laptop").exit_code == 0
    again = run("token", "add", "laptop", "--profile", "chatgpt")
    assert again.exit_code == 1 and "exists already" in again.output and "revoke" in again.output
    assert run("token", "add", "../x", "--profile", "laptop").exit_code == 1
    assert "names the token" in run("token", "add", "default", "--profile", "laptop").output
    undefined = run("token", "add", "phone", "--profile", "nosuch")
    assert undefined.exit_code == 1 and "[profiles.nosuch]" in undefined.output
    no_profile = run("token", "add", "phone")
    assert no_profile.exit_code == 2 and "--profile" in no_profile.output
    assert sorted(p.name for p in folder(home).iterdir()) == ["laptop.json"]


def test_revoke_removes_the_token_and_the_store_sees_it_at_once(home: Path) -> None:
    store = TokenStore(folder(home))
    secret = run("token", "add", "laptop", "--profile", "laptop").stdout.splitlines()[0]
    assert store.find(secret).profile == "laptop"
    revoked = run("token", "revoke", "laptop")
    assert revoked.exit_code == 0 and "Revoked the token 'laptop'" in revoked.output
    assert store.find(secret) is None
    missing = run("token", "revoke", "laptop")
    assert missing.exit_code == 1 and "no token named 'laptop'" in missing.output


def test_a_token_replaced_under_the_same_name_is_read_again(home: Path) -> None:
    store = TokenStore(folder(home))
    first, first_secret = store.add("laptop", "laptop")
    assert store.find(first_secret) == first
    store.revoke("laptop")
    _second, second_secret = store.add("laptop", "chatgpt")
    assert store.find(first_secret) is None
    assert store.find(second_secret).profile == "chatgpt"


def test_a_file_without_a_profile_or_hash_gives_nothing(home: Path) -> None:
    store = TokenStore(folder(home))
    made, secret = store.add("laptop", "laptop")
    body = json.loads(made.path.read_text())
    for broken in ({k: v for k, v in body.items() if k != "profile"}, {**body, "profile": " "},
                   {**body, "sha256": "abc"}, {**body, "name": "other"}):
        made.path.write_text(json.dumps(broken))
        assert store.find(secret) is None
    made.path.write_text("not json")
    assert store.find(secret) is None
    listed = run("token", "list")
    assert "laptop.json is not a whole token" in listed.stderr and "laptop  profile" not in listed.stdout
    assert run("token", "revoke", "laptop").exit_code == 0 and not made.path.exists()


def test_every_token_is_compared_in_constant_time(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TokenStore(folder(home))
    store.add("a", "laptop")
    _made, secret = store.add("b", "chatgpt")
    store.add("c", "laptop")
    compared: list[tuple[bytes, bytes]] = []
    real = tokens.hmac.compare_digest

    def spy(left: bytes, right: bytes) -> bool:
        compared.append((left, right))
        return real(left, right)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    assert store.find(secret).name == "b"
    assert len(compared) == 3, "every token's hash is compared, the match found or not"
    assert store.find("wrong") is None and len(compared) == 6


def test_the_http_layer_accepts_the_served_token_and_named_ones_in_constant_time(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TokenStore(folder(home))
    _made, secret = store.add("laptop", "laptop")
    gate = RequireToken(None, "served-secret", Path("http-token"), store)
    calls: list[object] = []
    real = tokens.hmac.compare_digest
    monkeypatch.setattr("gateway.wire.http.hmac.compare_digest", lambda a, b: calls.append("http") or real(a, b))
    assert gate.accepted(b"served-secret") == ("default", None)
    assert gate.accepted(secret.encode()) == ("laptop", "laptop")
    assert gate.accepted(b"nothing") is None and gate.accepted(b"") is None
    # The served token each time (4), then the one named token for each secret that is not the served one and not
    # empty (2): hmac is one module, so both layers' comparisons are counted.
    assert calls.count("http") == 6


def test_list_says_when_each_token_was_last_used(home: Path) -> None:
    store = TokenStore(folder(home))
    store.add("laptop", "laptop")
    audit = AuditLog(folders_of(home).state / "audit")
    audit.write({"client": "x", "transport": "http", "token": "laptop", "profile": "laptop", "outcome": "ok"})
    listed = run("token", "list")
    line = next(line for line in listed.output.splitlines() if line.startswith("laptop"))
    assert "last used=never" not in line and "last used=20" in line


def test_store_errors_say_what_to_do(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens")
    with pytest.raises(TokenError, match="needs a profile"):
        store.add("laptop", "")
    with pytest.raises(TokenError, match=r"no token named 'x' \(the tokens: none\)"):
        store.revoke("x")


def test_a_list_changed_is_told_only_to_hosts_whose_profile_may_read_what_was_added() -> None:
    import anyio

    from gateway.api.refresh import Refreshed
    from gateway.engine.core import Caller
    from gateway.wire.notify import Notifier

    told: list[str] = []

    class Connection:
        def __init__(self, name: str) -> None:
            self.name = name

        async def send_resource_list_changed(self) -> None:
            told.append(self.name)

    def may_list_for(owners, caller) -> bool:
        opened = {"garden"} if caller.profile == "chatgpt" else {"garden", "dupont"}
        return any(each <= opened for each in owners)

    async def play() -> None:
        notifier = Notifier(may_tell=lambda uri, caller: None, gap=0, may_list=lambda owners: True,
                            may_list_for=may_list_for)
        default, chatgpt = Connection("default"), Connection("chatgpt")
        notifier.connected(default, Caller(profile=None))
        notifier.connected(chatgpt, Caller(profile="chatgpt", token="chatgpt"))
        await notifier._send(Refreshed(added=1, owners=(frozenset({"dupont"}),)))
        assert told == ["default"]
        await notifier._send(Refreshed(added=1, owners=(frozenset({"garden"}),)))
        assert sorted(told) == ["chatgpt", "default", "default"]

    anyio.run(play)


def test_a_host_whose_token_is_revoked_hears_nothing_more_on_a_stream_it_holds(gateway_home: Path) -> None:
    import anyio

    from gateway.engine.core import Caller
    from gateway.testing import make_gateway
    from gateway.wire.server import notifier_for

    gateway = make_gateway(home=gateway_home, config={"profiles": {"laptop": {}}}, projects=[])
    store = TokenStore.of_state(gateway.folders.state)
    store.add("laptop", "laptop")
    notifier = notifier_for(gateway)
    laptop, stdio = Caller(profile="laptop", token="laptop"), Caller()
    outside = (frozenset(),)  # something added in no project, open to every profile here
    assert notifier.may_list_for(outside, laptop) and notifier.may_list_for(outside, stdio)
    store.revoke("laptop")
    assert not notifier.may_list_for(outside, laptop) and notifier.may_list_for(outside, stdio)
    assert anyio.run(notifier.may_tell, "nothing://here", laptop) is False
    store.add("laptop", "other")  # the same name, another profile: not the token the stream came with
    assert not notifier.may_list_for(outside, laptop)
