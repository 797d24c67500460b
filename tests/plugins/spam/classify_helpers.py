"""What the tests of the lean classifier share: a model trained on a sample mailbox, saved where the plugin keeps
it, and the environment a delivery rule's process gets."""

from __future__ import annotations

import os
from pathlib import Path

from gateway_spam import sample
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens
from spamfilter import store

from gateway.api.context import Folders, home_environment

CUTOFFS = (0.20, 0.90)


def rule_environment(home: Path) -> dict[str, str]:
    """What a delivery rule's process is given: the PATH and the person's home, nothing else."""
    return {"PATH": os.environ.get("PATH", ""), **home_environment(home)}


def train_sample(home: Path) -> tuple[Path, list[Path], Model]:
    """A model trained on every third message of the sample mailbox under `home`, saved where the plugin keeps
    it: (its folder, every message file, the model as trained)."""
    root = home / "Mail"
    sample.write_mailbox(root, messages=60)
    files = sorted(p for folder in root.iterdir() for p in (folder / "cur").iterdir())
    model = Model(cutoffs=CUTOFFS)
    for number, path in enumerate(files):
        if number % 3 == 0:
            label = "spam" if path.parent.parent.name == "Junk" else "ham"
            model.learn(tokens(stripped(path.read_bytes())), label, f"file:{path.name}")
    data = Folders.from_environment().data / "plugins" / "spam"
    data.mkdir(parents=True, exist_ok=True)
    model.save(data / store.NAME)
    return data, files, model
