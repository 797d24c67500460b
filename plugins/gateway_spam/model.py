"""The filter: per-token spam probabilities with Robinson's smoothing, combined by Fisher's chi-square (SpamBayes).

f(w) = (s·x + n·p(w)) / (s + n), with p(w) from the token's share of spam and ham messages; tokens with
|f − 0.5| below a minimum say nothing and are dropped; the strongest are combined into S and H, two chi-square
tests, and the score is (S − H + 1) / 2: ham below `ham_cutoff`, spam above `spam_cutoff`, unsure between.
The arithmetic and its constants are `spamfilter.score`'s, the file `spamfilter.store`'s (SQLite: counts per token,
and which messages were trained as what), shared with the lean `spamfilter.classify` so that both score alike.

The model also records what it was counted with, so that a label is taken back exactly and a model of an older
tokenizer is known as such: the tokenizer's version (`tokens_version`, `spamfilter.tokens.VERSION` when it was
counted; None for a file written before it was recorded) and, per trained message, the identity of the tokens its
counts hold (`sources`: `kept.identity_of`, the same identity the facts store gives a message's stored tokens).
A model whose version is not today's is stale (`stale`): it still scores, and the next training counts it anew.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from attrs import define, field
from spamfilter import score as scoring
from spamfilter import store
from spamfilter import tokens as tokenizer
from spamfilter.score import MAX_CLUES, MIN_DISTANCE, MIN_EACH, SQUASH, S, X, chi2q

from gateway_spam.kept import Kept, identity_of

__all__ = ["MAX_CLUES", "MIN_DISTANCE", "MIN_EACH", "SQUASH", "S", "X", "Model", "Score", "chi2q",
           "is_stale"]
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
    # The tokenizer's version the counts were made with: today's for a model counted in memory, the file's record
    # for a loaded one (None: not recorded, a file written before it was).
    tokens_version: int | None = field(factory=lambda: tokenizer.VERSION)
    sources: dict[str, str] = field(factory=dict)  # message key -> identity (hex) of the tokens counted for it

    @property
    def stale(self) -> bool:
        """Whether the counts were made by another version of the tokenizer than today's (or an unrecorded one)."""
        return is_stale(self.tokens_version)

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
                self.sources.pop(key, None)

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

    def relearn(self, tokens: set[str], label: str, key: str, counted: set[str] | None = None) -> bool:
        """Train `key` as `label` on `tokens`, first taking back what it was trained as: `counted`, the tokens its
        counts hold (`counted_tokens` finds them; `tokens` when not given, for a caller that knows they are the
        same). Records the identity of `tokens` as what `key` now counts. False when it already was `label`."""
        before = self.trained.get(key)
        if before == label:
            return False
        if before is not None:
            self.learn(tokens if counted is None else counted, before, key, sign=-1)
        self.learn(tokens, label, key)
        self.sources[key] = identity_of(tokens).hex()
        return True

    def counted_tokens(self, key: str, tokens: set[str], kept: Kept | None = None) -> set[str] | None:
        """The tokens the counts hold for a trained message, when they are known exactly: `tokens` (the message as
        read now) when their identity is the one recorded, else those the facts store (`kept`) holds
        for the message under that identity; None when neither is (no identity recorded, or the message's bytes
        changed and its earlier tokens are no longer kept). Never for a stale model: the store holds today's."""
        recorded = self.sources.get(key)
        if recorded is None or self.stale:
            return None
        if identity_of(tokens).hex() == recorded:
            return tokens
        return kept.tokens_counted(key, bytes.fromhex(recorded)) if kept is not None else None

    def snapshot(self, tokens: Iterable[str]) -> Callable[[], None]:
        """A function that puts back the message counts, the trained and sources maps and the counts of `tokens`
        as they are now: a change confined to these tokens is undone exactly (no clamping at zero left behind)."""
        pairs = {token: (list(pair) if (pair := self.counts.get(token)) is not None else None) for token in tokens}
        totals, trained, sources = (self.spam, self.ham), dict(self.trained), dict(self.sources)

        def restore() -> None:
            for token, pair in pairs.items():
                if pair is None:
                    self.counts.pop(token, None)
                else:
                    self.counts[token] = pair
            self.spam, self.ham = totals
            self.trained, self.sources = trained, sources

        return restore

    def probability(self, token: str) -> float | None:
        pair = self.counts.get(token)
        return None if pair is None else scoring.probability(pair[0], pair[1], self.spam, self.ham)

    def score(self, tokens: Iterable[str], keep_clues: bool = False) -> Score:
        known = [(token, *pair) for token in tokens if (pair := self.counts.get(token)) is not None]
        probability, strength, clues = scoring.combine(known, self.spam, self.ham, keep_clues)
        return Score(probability, strength, clues)

    # -- the file ---------------------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Written whole under a temporary name (0600), fsynced, then renamed over the old model (`spamfilter.store`),
        with the tokenizer's version it was counted with and each message's identity of tokens, where known."""
        self.trained_at = store.write(path, self.spam, self.ham, self.counts, self.trained, self.cutoffs,
                                      tokens_version=self.tokens_version,
                                      sources={key: (found, True) for key, found in self.sources.items()
                                               if key in self.trained})

    @classmethod
    def load(cls, path: Path) -> Model:
        """The saved model (every token: for training and labels; `classify` looks tokens up instead), or an empty
        one when there is none yet. With no SQLite model, one of the earlier format beside it is read."""
        if not path.exists():
            return cls._legacy(path.with_name(LEGACY))
        table = store.Table(path)
        try:
            counts, trained = table.everything()
            sources = {key: found for key, (found, counted) in table.sources().items() if counted}
        finally:
            table.close()
        return cls(table.spam, table.ham, counts, trained, table.trained_at, table.cutoffs,
                   version_of(table.tokens_version), sources)

    @classmethod
    def _legacy(cls, path: Path) -> Model:
        try:
            data = json.loads(gzip.decompress(path.read_bytes()))
        except FileNotFoundError:
            return cls()
        if data.get("format") != 1:
            return cls()
        return cls(data["spam"], data["ham"], data["counts"], data["trained"], data.get("trained_at", 0.0),
                   tokens_version=None)


def version_of(recorded: object) -> int | None:
    """The tokenizer's version as the model file records it (None when it does not, or not as a number)."""
    try:
        return None if recorded is None else int(recorded)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def is_stale(version: object) -> bool:
    """Whether a model counted with tokenizer `version` (as recorded: None when not) is not today's."""
    return version_of(version) != tokenizer.VERSION
