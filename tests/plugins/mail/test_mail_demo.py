"""`gateway demo` shows the mail plugin: the Porch, a search, a masked code, a refusal, a draft, tasks, the agenda,
contacts, notes, find and a project's page; never the closed project's words."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from gateway_mail.demo import CLOSED_WORD, add_account

from tests.forkserver import gateway_command


def test_the_demo_tours_the_porch_and_search_and_keeps_the_closed_project(gateway_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "demo"
    result = subprocess.run(gateway_command("demo", str(target)), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout[result.stdout.index("tools/call porch"):]  # the mail plugin's part of the tour
    for call in ("tools/call porch", "tools/call search_mail", "tools/call read_message", "tools/call draft_reply"):
        assert call in out
    assert "The Porch" in out and "Compost rota for Saturday" in out
    assert "1 code arrived" in out and "613508" not in out and "abcdef0123456789" not in out
    assert CLOSED_WORD not in out and "our client's position" not in out
    assert "left out" in out and "only the person" in out  # counted, and refused by address naming nothing
    drafts = list((target / "Mail" / "demo" / "Drafts" / "cur").iterdir())
    assert len(drafts) == 1 and drafts[0].name.endswith(":2,D")
    # The organizer, the contacts and the notes too, each answering with its own things and none of the closed one.
    for call, shown in (("list_tasks", "Turn the compost"), ("agenda", "Garden work day"),
                        ("search_contacts", "Bo Gardener"), ("search_notes", "Compost plan"),
                        ("find", "sioul:note/garden/Compost%20plan.md"), ("read_project", "Project: Community garden"),
                        ("spam_status", "Thresholds:")):
        part = out[out.index(f"tools/call {call} "):]
        assert shown in part.split("→ tools/call")[0], call
    # No answer is shown cut: a long line is wrapped, a JSON answer laid out, never ended with "…".
    assert not [line for line in result.stdout.splitlines() if line.rstrip().endswith("…")]


def test_the_demo_account_is_added_without_replacing_a_config(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[gateway]\nread_only = true\n\n[plugins.spam]\nthreshold = 0.9\n')
    add_account(config, tmp_path / "Mail" / "demo")
    written = tomllib.loads(config.read_text())
    assert written["gateway"] == {"read_only": True} and written["plugins"]["spam"] == {"threshold": 0.9}
    assert [a["name"] for a in written["plugins"]["mail"]["accounts"]] == ["demo"]
    mine = [{"name": "own", "maildir": "~/Mail"}]
    config.write_text(tomllib_dumps({"plugins": {"mail": {"accounts": mine}}}))
    add_account(config, tmp_path / "Mail" / "demo")
    assert tomllib.loads(config.read_text())["plugins"]["mail"]["accounts"] == mine


def tomllib_dumps(data: dict) -> str:
    import tomli_w

    return tomli_w.dumps(data)
