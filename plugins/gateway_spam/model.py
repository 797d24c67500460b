"""The filter: per-token spam probabilities with Robinson's smoothing, combined by Fisher's chi-square (SpamBayes).

f(w) = (s·x + n·p(w)) / (s + n), with p(w) from the token's share of spam and ham messages; tokens with
|f − 0.5| below a minimum say nothing and are dropped; the strongest are combined into S and H, two chi-square
tests, and the score is (S − H + 1) / 2: ham below `ham_cutoff`, spam above `spam_cutoff`, unsure between.
The constants below say which values and why. The model is one file (counts per token, and which messages were trained as what), 0600, written whole
to a temporary name and renamed, so a reader sees the old model or the new one, never half of one.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import time
from collections.abc import Iterable
from pathlib import Path

from attrs import define, field

# Robinson's strength s, the prior x, the least |f - 0.5| a clue must have, the most clues combined. SpamBayes uses
# 0.45 / 0.5 / 0.1 / 150; bogofilter's defaults (0.0178, min_dev 0.375) scored better on the same online stream
# (bench/bench_spam.py: fewer false positives and negatives, a better ROC area), and more clues ranked better still.
S = 0.0178
X = 0.5
MIN_DISTANCE = 0.375
MAX_CLUES = 400
# Until it has seen this many messages of each class the filter is unsure of everything: with no ham yet, every
# token looks like spam (the SpamAssassin stream starts with ~200 spams), as rspamd waits for enough of each. Its
# score is then squeezed into 0.45-0.55 (inside any sensible unsure band) rather than flattened to 0.5, so that
# what it saw still orders the messages (the ROC area).
MIN_EACH = 3
SQUASH = 0.1
FORMAT = 1


def chi2q(x2: float, freedom: int) -> float:
    """P(chi² with `freedom` (even) degrees of freedom ≥ x2), by the series SpamBayes uses, summed in logarithms.

    (The plain series underflows once x2/2 passes ~745, which with hundreds of clues happens where the answer is
    near 1, not 0.)
    """
    m = x2 / 2.0
    if m <= 0:
        return 1.0
    log_m = math.log(m)
    log_term = log_total = -m
    for i in range(1, freedom // 2):
        log_term += log_m - math.log(i)
        high, low = (log_total, log_term) if log_total >= log_term else (log_term, log_total)
        log_total = high + math.log1p(math.exp(low - high))
        if log_term < log_total - 40 and i > m:  # the terms only shrink from here: the rest is negligible
            break
    return min(math.exp(log_total), 1.0)


@define
class Score:
    probability: float  # 0 = ham ... 1 = spam
    strength: float  # Σ ln(f/(1−f)) of the clues: orders two messages of the same probability (ROC)
    clues: list[tuple[str, float]] = field(factory=list)

    def verdict(self, ham_cutoff: float, spam_cutoff: float) -> str:
        if self.probability < ham_cutoff:
            return "ham"
        return "spam" if self.probability > spam_cutoff else "unsure"


@define
class Model:
    spam: int = 0  # messages trained as spam
    ham: int = 0
    counts: dict[str, list[int]] = field(factory=dict)  # token -> [spam messages, ham messages]
    trained: dict[str, str] = field(factory=dict)  # message key -> "spam" | "ham"
    trained_at: float = 0.0

    def learn(self, tokens: Iterable[str], label: str, key: str | None = None, sign: int = 1) -> None:
        column = 0 if label == "spam" else 1
        for token in tokens:
            pair = self.counts.get(token)
            if pair is None:
                if sign < 0:
                    continue
                pair = self.counts[token] = [0, 0]
            pair[column] = max(0, pair[column] + sign)
            if pair == [0, 0]:
                del self.counts[token]
        if label == "spam":
            self.spam = max(0, self.spam + sign)
        else:
            self.ham = max(0, self.ham + sign)
        if key is not None:
            if sign > 0:
                self.trained[key] = label
            else:
                self.trained.pop(key, None)

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
        if pair is None:
            return None
        spam_count, ham_count = pair
        spam_ratio = spam_count / self.spam if self.spam else 0.0
        ham_ratio = ham_count / self.ham if self.ham else 0.0
        if spam_ratio + ham_ratio == 0:
            return None
        p = spam_ratio / (spam_ratio + ham_ratio)
        n = spam_count + ham_count
        return (S * X + n * p) / (S + n)

    def score(self, tokens: Iterable[str], keep_clues: bool = False) -> Score:
        clues = []
        for token in tokens:
            f = self.probability(token)
            if f is not None and abs(f - 0.5) >= MIN_DISTANCE:
                clues.append((abs(f - 0.5), token, f))
        clues.sort(reverse=True)  # strongest first, ties by token: the same answer whatever the set's order
        del clues[MAX_CLUES:]
        if not clues:
            return Score(0.5, 0.0, [])
        ln_h = ln_s = 0.0
        strength = 0.0
        for _distance, _token, f in clues:
            f = min(max(f, 1e-6), 1 - 1e-6)
            ln_h += math.log(f)
            ln_s += math.log(1.0 - f)
            strength += math.log(f / (1.0 - f))
        n = len(clues)
        spamminess = 1.0 - chi2q(-2.0 * ln_s, 2 * n)
        hamminess = 1.0 - chi2q(-2.0 * ln_h, 2 * n)
        probability = (spamminess - hamminess + 1.0) / 2.0
        if min(self.spam, self.ham) < MIN_EACH:  # unsure, but still ordered by what it saw
            probability = 0.5 + (probability - 0.5) * SQUASH
        shown = [(token, f) for _d, token, f in sorted(clues, reverse=True)] if keep_clues else []
        return Score(probability, strength, shown)

    # -- the file ---------------------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Written whole under a temporary name (0600), flushed, then renamed over the old model."""
        self.trained_at = time.time()
        data = {"format": FORMAT, "spam": self.spam, "ham": self.ham, "trained_at": self.trained_at,
                "counts": self.counts, "trained": self.trained}
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), compresslevel=5))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> Model:
        """The saved model, or an empty one when there is none yet."""
        try:
            data = json.loads(gzip.decompress(path.read_bytes()))
        except FileNotFoundError:
            return cls()
        if data.get("format") != FORMAT:
            return cls()
        return cls(data["spam"], data["ham"], data["counts"], data["trained"], data.get("trained_at", 0.0))
