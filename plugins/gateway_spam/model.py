"""The filter: per-token spam probabilities with Robinson's smoothing, combined by Fisher's chi-square (SpamBayes).

f(w) = (s·x + n·p(w)) / (s + n), with p(w) from the token's share of spam and ham messages; tokens with
|f − 0.5| below a minimum say nothing and are dropped; the strongest are combined into S and H, two chi-square
tests, and the score is (S − H + 1) / 2: ham below `ham_cutoff`, spam above `spam_cutoff`, unsure between.
The arithmetic and its constants are `spamfilter.score`'s, the file `spamfilter.store`'s (SQLite: counts per token,
and which messages were trained as what), shared with the lean `spamfilter.classify` so that both score alike.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from attrs import define, field
from spamfilter import score as scoring
from spamfilter import store
from spamfilter.score import MAX_CLUES, MIN_DISTANCE, MIN_EACH, SQUASH, S, X, chi2q

__all__ = ["MAX_CLUES", "MIN_DISTANCE", "MIN_EACH", "SQUASH", "S", "X", "Model", "Score", "chi2q"]
LEGACY = "model.json.gz"  # the format before the SQLite file: read when no SQLite model exists yet


@define
class Score:
    probability: float  # 0 = ham ... 1 = spam
    strength: float  # Σ ln(f/(1−f)) of the clues: orders two messages of the same probability (ROC)
    clues: list[tuple[str, float]] = field(factory=list)

    def verdict(self, ham_cutoff: float, spam_cutoff: float) -> str:
        return scoring.verdict(self.probability, ham_cutoff, spam_cutoff)


@define
class Model:
    spam: int = 0  # messages trained as spam
    ham: int = 0
    counts: dict[str, list[int]] = field(factory=dict)  # token -> [spam messages, ham messages]
    trained: dict[str, str] = field(factory=dict)  # message key -> "spam" | "ham"
    trained_at: float = 0.0
    cutoffs: tuple[float, float] | None = None  # (ham, spam) of the config that last wrote it, for `classify`

    def learn(self, tokens: Iterable[str], label: str, key: str | None = None, sign: int = 1) -> None:
        column = 0 if label == "spam" else 1
        counts = self.counts
        if sign > 0:  # the common case, training: a count only grows, a new token starts at one
            get = counts.get
            for token in tokens:
                pair = get(token)
                if pair is None:
                    counts[token] = [sign, 0] if column == 0 else [0, sign]
                else:
                    pair[column] += sign
        else:
            for token in tokens:
                pair = counts.get(token)
                if pair is None:
                    continue
                pair[column] = max(0, pair[column] + sign)
                if pair == [0, 0]:
                    del counts[token]
        if label == "spam":
            self.spam = max(0, self.spam + sign)
        else:
            self.ham = max(0, self.ham + sign)
        if key is not None:
            if sign > 0:
                self.trained[key] = label
            else:
                self.trained.pop(key, None)

    def score_then_learn(self, tokens: Iterable[str], label: str, key: str | None = None) -> tuple[float, float]:
        """(probability, strength) of a message as `score` gives them, then the message learnt as `learn` would:
        the online evaluation's step, with one lookup per token (`spamfilter.score.combine_then_count`)."""
        found = scoring.combine_then_count(tokens, self.counts, 0 if label == "spam" else 1, self.spam, self.ham)
        if label == "spam":
            self.spam += 1
        else:
            self.ham += 1
        if key is not None:
            self.trained[key] = label
        return found

    def learn_many(self, samples: Iterable[Any]) -> None:
        """Learn each of `samples` (each with `tokens`, `label` and `key`) as `learn` would, one class at a time: the
        tokens counted by `collections.Counter` (a loop in C), then added to the counts once per distinct token."""
        listed = list(samples)
        self.trained.update((sample.key, sample.label) for sample in listed if sample.key is not None)
        counts = self.counts
        get = counts.get
        for column in (0, 1):  # spam, then ham (any label but spam is ham, as in `learn`)
            chosen = [sample for sample in listed if (sample.label == "spam") == (column == 0)]
            if not chosen:
                continue
            counted = Counter(chain.from_iterable(sample.tokens for sample in chosen))
            for token, count in counted.items():
                pair = get(token)
                if pair is None:
                    counts[token] = [count, 0] if column == 0 else [0, count]
                else:
                    pair[column] += count
            if column == 0:
                self.spam += len(chosen)
            else:
                self.ham += len(chosen)

    def relearn(self, tokens: set[str], label: str, key: str) -> bool:
        """Train `key` as `label`, first taking back what it was trained as; False when it already was."""
        before = self.trained.get(key)
        if before == label:
            return False
        if before is not None:
            self.learn(tokens, before, key, sign=-1)
        self.learn(tokens, label, key)
        return True

    def probability(self, token: str) -> float | None:
        pair = self.counts.get(token)
        return None if pair is None else scoring.probability(pair[0], pair[1], self.spam, self.ham)

    def score(self, tokens: Iterable[str], keep_clues: bool = False) -> Score:
        known = [(token, *pair) for token in tokens if (pair := self.counts.get(token)) is not None]
        probability, strength, clues = scoring.combine(known, self.spam, self.ham, keep_clues)
        return Score(probability, strength, clues)

    # -- the file ---------------------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Written whole under a temporary name (0600), fsynced, then renamed over the old model (`spamfilter.store`)."""
        self.trained_at = store.write(path, self.spam, self.ham, self.counts, self.trained, self.cutoffs)

    @classmethod
    def load(cls, path: Path) -> Model:
        """The saved model (every token: for training and labels; `classify` looks tokens up instead), or an empty
        one when there is none yet. With no SQLite model, one of the earlier format beside it is read."""
        if not path.exists():
            return cls._legacy(path.with_name(LEGACY))
        table = store.Table(path)
        try:
            counts, trained = table.everything()
        finally:
            table.close()
        return cls(table.spam, table.ham, counts, trained, table.trained_at, table.cutoffs)

    @classmethod
    def _legacy(cls, path: Path) -> Model:
        try:
            data = json.loads(gzip.decompress(path.read_bytes()))
        except FileNotFoundError:
            return cls()
        if data.get("format") != 1:
            return cls()
        return cls(data["spam"], data["ham"], data["counts"], data["trained"], data.get("trained_at", 0.0))
