"""Each spam tool through the gateway's own call path (arguments checked, gate, masks, audit), and the jobs."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import gateway_mail
import gateway_spam
import pytest
from gateway_spam import sample

from gateway.api.context import home_environment
from gateway.engine.core import NotFound
from gateway.testing import folders_of, make_gateway
from tests.forkserver import gateway_command


def _gateway(home: Path, **spam):
    root = home / "Mail" / "personal"
    if not root.exists():
        sample.write_mailbox(root, messages=40)
    return make_gateway([gateway_mail, gateway_spam], home=home, config=sample.config(root, **spam),
                        projects=sample.PROJECTS)


def _follow(gateway, job_id: str, seen: list | None = None) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = gateway.call("spam_job", {"id": job_id})
        assert not answer.is_error, answer.text
        if seen is not None:
            seen.append(answer.data)
        if answer.data["state"] != "running":
            return dict(answer.data)
        time.sleep(0.2)
    raise AssertionError("the job did not end within 120 seconds")


def _state(home: Path) -> Path:
    return folders_of(home).state / "plugins" / "spam"


def _data(home: Path) -> Path:
    return folders_of(home).data / "plugins" / "spam"


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")
            if p.is_file()}


def test_the_tools_are_listed_with_the_issues_schemas(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    tools = {t.name: t for t in gateway.catalogue().tools}
    names = [n for n in gateway.list_tools() if n.startswith("spam_")]
    assert names == ["spam_status", "spam_eval", "spam_train", "spam_job", "spam_review", "spam_label", "spam_fetch"]
    assert gateway.list_tools()[-7:] == names  # after the other built-ins'
    schema = {n: tools[n].tool.input_schema for n in names}
    assert schema["spam_status"]["properties"] == {} and schema["spam_eval"]["properties"] == {}
    assert schema["spam_train"]["properties"]["dry_run"]["default"] is False
    assert schema["spam_job"]["properties"]["id"]["type"] == "string" and "required" not in schema["spam_job"]
    assert schema["spam_review"]["properties"]["limit"]["default"] == 20
    assert schema["spam_label"]["properties"]["label"]["enum"] == ["spam", "ham"]
    assert sorted(schema["spam_label"]["required"]) == ["address", "label"]
    assert schema["spam_fetch"]["properties"]["days"]["default"] == 30
    assert set(schema["spam_fetch"]["properties"]) == {"account", "days"}


def test_a_training_job_followed_from_start_to_end(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    assert "none yet" in gateway.call("spam_status").text
    started = gateway.call("spam_train", {})
    assert not started.is_error, started.text
    job_file = _state(gateway_home) / "jobs" / f"{started.data['id']}.json"
    assert stat.S_IMODE(job_file.stat().st_mode) == 0o600  # there from the start
    seen: list = []
    job = _follow(gateway, started.data["id"], seen)
    assert job["state"] == "done", job
    assert job_file.exists() and stat.S_IMODE(job_file.stat().st_mode) == 0o600  # and after the end
    assert job["result"]["corpus"]["messages"] == 40 + 3  # Notes' mixed message is in no list
    assert job["result"]["online"]["false_positives"] == 0
    model = _data(gateway_home) / "model.sqlite"
    assert stat.S_IMODE(model.stat().st_mode) == 0o600
    status = gateway.call("spam_status")
    assert "43 messages" in status.text and status.data["model"]["spam"] == 23
    evaluated = gateway.call("spam_eval")
    assert not evaluated.is_error and evaluated.text.startswith(sample.CANARY[:0] + "Subjects and names below")
    assert evaluated.data["online"]["messages"] == 43 and "one_minus_roca_percent" in evaluated.data["online"]
    latest = gateway.call("spam_job")
    assert latest.data["id"] == started.data["id"]


def test_a_dry_run_writes_nothing_file_by_file(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    _follow(gateway, gateway.call("spam_train", {}).data["id"])
    data_before = _files(_data(gateway_home))
    mail_before = _files(gateway_home / "Mail")
    time.sleep(0.05)
    job = _follow(gateway, gateway.call("spam_train", {"dry_run": True}).data["id"])
    assert job["state"] == "done" and job["result"]["dry_run"] is True and job["result"]["written"] == []
    assert _files(_data(gateway_home)) == data_before
    assert _files(gateway_home / "Mail") == mail_before


def test_one_job_of_each_kind_at_a_time(gateway_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GATEWAY_SPAM_TEST_SLOW", "0.5")
    gateway = _gateway(gateway_home)
    first = gateway.call("spam_train", {})
    second = gateway.call("spam_train", {"dry_run": True})
    assert second.is_error and f"a train job is already running: {first.data['id']}" in second.text
    assert len(list((_state(gateway_home) / "jobs").glob("*.json"))) == 1
    monkeypatch.delenv("GATEWAY_SPAM_TEST_SLOW")
    assert _follow(gateway, first.data["id"])["state"] == "done"


def test_a_job_runs_at_the_lowest_priority(gateway_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GATEWAY_SPAM_TEST_SLOW", "0.5")
    gateway = _gateway(gateway_home)
    started = gateway.call("spam_train", {"dry_run": True})
    job_file = _state(gateway_home) / "jobs" / f"{started.data['id']}.json"
    pid = json.loads(job_file.read_text())["pid"]
    # The job is started as `ionice -c 3 python ...`: ionice sets the class, then becomes the job. Wait for
    # that (the process no longer being ionice) before reading its class, or the read may come first.
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"ionice"):
        assert time.monotonic() < deadline, "the job's ionice did not start the job within 60 seconds"
        time.sleep(0.02)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    assert int(fields[16]) == 19  # nice
    ionice = subprocess.run(["ionice", "-p", str(pid)], capture_output=True, text=True)
    assert ionice.stdout.strip() == "idle"
    os.kill(pid, 9)
    job = _follow(gateway, started.data["id"])
    assert job["state"] == "failed" and "ended without finishing" in job["error"]


def test_wrong_arguments_are_refused_before_any_job_starts(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    refused = [
        gateway.call("spam_train", {"dry_run": "yes"}),
        gateway.call("spam_train", {"dryrun": True}),
        gateway.call("spam_fetch", {"days": 0}),
        gateway.call("spam_fetch", {"days": 30}),  # no IMAP server configured
        gateway.call("spam_review", {"limit": 500}),
        gateway.call("spam_label", {"address": "mid:x@example.org", "label": "maybe"}),
    ]
    assert all(a.is_error for a in refused)
    assert "no IMAP server is configured" in refused[3].text
    assert not (_state(gateway_home) / "jobs").exists() or not list((_state(gateway_home) / "jobs").glob("*.json"))
    imap = [{"account": "personal", "host": "127.0.0.1", "port": 1, "user": "pat", "password_command": "echo x"}]
    gateway = _gateway(gateway_home, imap=imap)
    other = gateway.call("spam_fetch", {"account": "work"})
    assert other.is_error and "configured: personal" in other.text
    assert not list((_state(gateway_home) / "jobs").glob("*.json"))


def test_a_job_that_fails_says_why(gateway_home: Path) -> None:
    imap = [{"account": "personal", "host": "127.0.0.1", "port": 9, "user": "pat", "password_command": "exit 3"}]
    gateway = _gateway(gateway_home, imap=imap)
    job = _follow(gateway, gateway.call("spam_fetch", {}).data["id"])
    assert job["state"] == "failed" and "password_command failed" in job["error"]
    assert "Failed: the password_command failed" in gateway.call("spam_job").text


def test_review_and_label_without_a_move(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    _follow(gateway, gateway.call("spam_train", {}).data["id"])
    mail_before = _files(gateway_home / "Mail")
    review = gateway.call("spam_review", {"limit": 50})
    assert not review.is_error, review.text
    assert review.text.splitlines()[0].startswith("Subjects and names below are their senders' words")
    unsure = [e["address"] for e in review.data["unsure"]]
    assert "mid:mixed@example.com" in unsure
    spam = [e["address"] for e in review.data["spam"]]
    assert "mid:code@example.org" in spam and "482913" not in review.text + json.dumps(review.data)
    assert "mid:closed@example.org" not in unsure + spam and "mid:blocked@example.org" not in unsure + spam
    assert review.data["left_out"] == 1 and review.data["blocked"] == 1
    assert sample.BODY_CANARY not in review.text + json.dumps(review.data)
    labelled = gateway.call("spam_label", {"address": "mid:mixed@example.com", "label": "ham"})
    assert not labelled.is_error and labelled.data["learned"] is True, labelled.text
    again = gateway.call("spam_label", {"address": "mid:mixed@example.com", "label": "spam"})
    assert again.data["before"] == "ham"
    labels = (_data(gateway_home) / "labels.jsonl").read_text().splitlines()
    assert len(labels) == 1 and json.loads(labels[0])["label"] == "spam"
    assert _files(gateway_home / "Mail") == mail_before  # nothing moved, no flag changed


def test_closed_and_blocked_mail_is_never_labelled(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    closed = gateway.call("spam_label", {"address": "mid:closed@example.org", "label": "ham"})
    assert closed.is_error and "closed to AI agents" in closed.text and sample.CANARY not in closed.text
    blocked = gateway.call("spam_label", {"address": "mid:blocked@example.org", "label": "ham"})
    assert blocked.is_error and "blocked" in blocked.text
    outside = gateway.call("spam_label", {"address": "/etc/passwd", "label": "ham"})
    assert outside.is_error and "outside the accounts' mail folders" in outside.text
    assert not (_data(gateway_home) / "labels.jsonl").exists()


def test_classify_prints_the_verdict_and_exits_for_a_mail_pipeline(gateway_home: Path) -> None:
    gateway = _gateway(gateway_home)
    _follow(gateway, gateway.call("spam_train", {}).data["id"])
    env = {**os.environ, **home_environment(gateway_home)}
    spam = sample.message("Prize <prize@winner.example.net>", "Lottery jackpot winner", "casino bonus prize "
                          "jackpot lottery unclaimed", 2e9, "new@winner.example.net")
    ham = sample.message("Ada <ada@example.org>", "Garden tuesday", "plumtree harvest compost orchard", 2e9, "h@e")

    def classify(raw: bytes) -> subprocess.CompletedProcess:
        return subprocess.run(gateway_command("spam", "classify", "-"), input=raw, env=env,
                              capture_output=True, timeout=60)

    verdict = classify(spam)
    assert verdict.returncode == 0 and verdict.stdout.decode().startswith("spam "), verdict.stderr
    verdict = classify(ham)
    assert verdict.returncode == 1 and verdict.stdout.decode().startswith("ham ")
    why = subprocess.run(gateway_command("spam", "why", str(gateway_home / "nothing")), env=env,
                         capture_output=True, timeout=60)
    assert why.returncode != 0


@pytest.mark.parametrize("cutoffs", [{"ham_cutoff": 0.9, "spam_cutoff": 0.2}])
def test_thresholds_that_cross_are_refused(gateway_home: Path, cutoffs: dict) -> None:
    gateway = _gateway(gateway_home, **cutoffs)
    answer = gateway.call("spam_train", {})
    assert answer.is_error and "must be below spam_cutoff" in answer.text


def test_off_when_left_out_of_the_plugins(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=4)
    config = sample.config(root)
    config["gateway"]["plugins"] = ["mail"]
    gateway = make_gateway([gateway_mail, gateway_spam], home=gateway_home, config=config, projects=sample.PROJECTS)
    assert not [n for n in gateway.list_tools() if n.startswith("spam_")]
    with pytest.raises(NotFound):  # an unknown tool: a JSON-RPC error, not a tool's answer
        gateway.call("spam_status")
