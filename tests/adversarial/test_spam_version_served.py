"""A model counted with an older tokenizer, played through a real `gateway serve` and the SDK's client: spam_status
says it is stale, a label changed on it is recorded but leaves the model as it is (no guessed subtraction) and says
the next training counts it, `gateway doctor` warns, `gateway spam why` notes it, and `gateway spam train` counts it
anew with the label; no answer gives a message's text."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import anyio
import spamfilter.tokens
from gateway_spam import sample
from gateway_spam.model import Model
from spamfilter import store

from gateway.api.context import home_environment
from gateway.testing import folders_of, serve_client, write_config
from tests.forkserver import gateway_command

HAM = "mid:ham6@example.org"  # a ham message of the sample mailbox (INBOX), trained as ham


def _text(result) -> str:  # noqa: ANN001
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _command(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    return subprocess.run(gateway_command(*arguments), env=env, capture_output=True, text=True, timeout=300)


async def _follow(client, job_id: str) -> dict:  # noqa: ANN001
    for _ in range(900):
        followed = await client.call_tool("spam_job", {"id": job_id})
        if followed.structured_content["state"] != "running":
            return followed.structured_content
        await anyio.sleep(0.2)
    raise AssertionError("the job did not end")


def test_a_stale_model_is_said_and_a_label_on_it_waits_for_the_training(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=40, now=time.time())
    write_config(gateway_home, sample.config(root), projects=sample.PROJECTS)
    model_file = folders_of(gateway_home).data / "plugins" / "spam" / store.NAME
    sample_file = next((root / "Junk" / "cur").iterdir())

    def forge() -> None:  # the same counts, recorded as counted by version 1 of the tokenizer
        model = Model.load(model_file)
        store.write(model_file, model.spam, model.ham, model.counts, model.trained, model.cutoffs,
                    model.trained_at, tokens_version=1)

    async def play() -> dict:
        given = {}
        async with serve_client(gateway_home) as client:
            job = await _follow(client, (await client.call_tool("spam_train", {})).structured_content["id"])
            assert job["state"] == "done", job
            forge()
            written = model_file.read_bytes()
            given["status"] = await client.call_tool("spam_status", {})
            given["label"] = await client.call_tool("spam_label", {"address": HAM, "label": "spam"})
            given["unchanged"] = model_file.read_bytes() == written
            given["doctor"] = await anyio.to_thread.run_sync(_command, gateway_home, "doctor")
            given["why"] = await anyio.to_thread.run_sync(_command, gateway_home, "spam", "why", str(sample_file))
            given["train"] = await anyio.to_thread.run_sync(_command, gateway_home, "spam", "train")
            given["after"] = await client.call_tool("spam_status", {})
        return given

    given = anyio.run(play)
    status, label, after = given["status"], given["label"], given["after"]
    assert not status.is_error and status.structured_content["model"]["stale"] is True
    assert "The model is stale: it was counted with version 1 of the tokenizer" in _text(status)
    assert not label.is_error, _text(label)
    assert label.structured_content["learned"] is False and label.structured_content["waits_for_training"] is True
    assert "counted with an earlier version of the tokenizer: it is not changed now" in _text(label)
    assert given["unchanged"]  # the model was not touched by a guess
    assert "WARNING  spam: spam filter's model at " in given["doctor"].stdout
    assert "stale: counted with version 1 of the tokenizer" in given["doctor"].stdout
    why = given["why"]  # the person's terminal: the verdict as ever, and a note on standard error
    assert why.returncode == 0 and why.stdout.split()[0] in ("spam", "ham", "unsure"), why.stderr
    assert why.stderr.startswith("note: The model is stale: it was counted with version 1 of the tokenizer")
    train = given["train"]
    assert train.returncode == 0, train.stderr
    assert (f"The model was counted with version 1 of the tokenizer: counted anew with version "
            f"{spamfilter.tokens.VERSION}.") in train.stdout
    assert after.structured_content["model"]["stale"] is False and "The model is stale" not in _text(after)
    model = Model.load(model_file)
    assert model.tokens_version == spamfilter.tokens.VERSION and model.trained[HAM] == "spam"  # the label counted
    everything = "\n".join(_text(answer) for answer in (status, label, after))
    assert sample.BODY_CANARY not in everything and sample.BODY_CANARY not in given["doctor"].stdout
