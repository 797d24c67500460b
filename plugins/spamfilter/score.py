"""Robinson's f(w) and Fisher's chi-square: a message's score from its tokens' counts (SpamBayes' method).

f(w) = (s·x + n·p(w)) / (s + n), with p(w) from the token's share of spam and ham messages; tokens with
|f − 0.5| below a minimum say nothing and are dropped; the strongest are combined into S and H, two chi-square
tests, and the score is (S − H + 1) / 2: ham below the ham cutoff, spam above the spam cutoff, unsure between.
The in-memory model (training, the server) and the model file's lookups (`classify`) both score with `combine`,
so their verdicts are the same to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

# The score's version: a change to what a message scores by given counts (the method, a constant) must raise it, for
# the outcomes of an earlier online evaluation are reused while it is the same (`STAMP`, the spam plugin's training).
VERSION = 1

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
# The default cutoffs (the config's ham_cutoff and spam_cutoff), chosen on the first half of the SpamAssassin stream
# in time order alone (bench/bench_spam.py); the README reports the second half's figures.
# The ham cutoff is where SpamBayes' own cost of a cutoff pair (10 per false positive, 1 per false negative, 0.2 per
# unsure message) is least on that half. Our score and bogofilter's trade unsure ham for false negatives along the
# same curve (the same Robinson-Fisher method, s and minimum deviation): bogofilter's smaller unsure band came from
# its default ham cutoff, 0.45, not from a better score, and the cost lands on that same value. The spam cutoff stays
# 0.80: the cost's own pick there, 0.995, took away two false positives, the stream's 60th and 61st hams (the
# model had then seen 670 spams), for 90 more unsure spams on that half.
HAM_CUTOFF = 0.45
SPAM_CUTOFF = 0.80
# What an earlier evaluation's scores were computed with: reused only under the same stamp.
STAMP = f"score {VERSION}, s {S!r}, x {X!r}, min {MIN_DISTANCE!r}, clues {MAX_CLUES}, each {MIN_EACH}, squash {SQUASH!r}"


_LOGS = [0.0] + [math.log(i) for i in range(1, MAX_CLUES + 1)]  # ln i, for chi2q's terms (the same values)


def chi2q(x2: float, freedom: int) -> float:
    """P(chi² with `freedom` (even) degrees of freedom ≥ x2), by the series SpamBayes uses, summed in logarithms.

    (The plain series underflows once x2/2 passes ~745, which with hundreds of clues happens where the answer is
    near 1, not 0.)
    """
    m = x2 / 2.0
    if m <= 0:
        return 1.0
    log1p, exp = math.log1p, math.exp  # bound once: this loop runs hundreds of times a message
    log_m = math.log(m)
    log_term = log_total = -m
    logs = _LOGS if freedom // 2 <= len(_LOGS) else [math.log(i) for i in range(freedom // 2)]
    for i in range(1, freedom // 2):
        log_term += log_m - logs[i]
        if log_total >= log_term:
            log_total = log_total + log1p(exp(log_term - log_total))
        else:
            log_total = log_term + log1p(exp(log_total - log_term))
        if log_term < log_total - 40 and i > m:  # the terms only shrink from here: the rest is negligible
            break
    return min(exp(log_total), 1.0)


def probability(spam_count: int, ham_count: int, spam_total: int, ham_total: int) -> float | None:
    """f(w) of a token seen in `spam_count` spams and `ham_count` hams, or None when it says nothing."""
    spam_ratio = spam_count / spam_total if spam_total else 0.0
    ham_ratio = ham_count / ham_total if ham_total else 0.0
    if spam_ratio + ham_ratio == 0:
        return None
    p = spam_ratio / (spam_ratio + ham_ratio)
    n = spam_count + ham_count
    return (S * X + n * p) / (S + n)


def combine(counts: Iterable[tuple[str, int, int]], spam_total: int, ham_total: int,
            keep_clues: bool = False) -> tuple[float, float, list[tuple[str, float]]]:
    """(score, strength, clues) of a message whose known tokens have these (token, spam, ham) counts.

    strength is Σ ln(f/(1−f)) of the clues: it orders two messages of the same score (the ROC area). Clues are
    sorted strongest first, ties by token, so the answer does not depend on the order the counts come in.
    """
    # `probability` written out in the loop (the same operations in the same order: the same score to the last
    # digit), for it runs for every known token of every message, a few hundred times a message.
    clues = []
    append = clues.append
    prior = S * X
    for token, spam_count, ham_count in counts:
        spam_ratio = spam_count / spam_total if spam_total else 0.0
        ham_ratio = ham_count / ham_total if ham_total else 0.0
        both = spam_ratio + ham_ratio
        if both == 0:
            continue
        n = spam_count + ham_count
        f = (prior + n * (spam_ratio / both)) / (S + n)
        distance = abs(f - 0.5)
        if distance >= MIN_DISTANCE:
            append((distance, token, f))
    return _combined(clues, spam_total, ham_total, keep_clues)


def combine_known(tokens: Iterable[str], counts: Mapping[str, Sequence[int]], spam_total: int, ham_total: int,
                  keep_clues: bool = False) -> tuple[float, float, list[tuple[str, float]]]:
    """`combine` of a message's tokens looked up in an in-memory model (token -> [spam, ham]): the same arithmetic
    in the same order, without first making a (token, spam, ham) tuple of each known token. Training's online
    evaluation runs it for every message, one after another."""
    clues = []
    append = clues.append
    prior = S * X
    get = counts.get
    if spam_total and ham_total:  # the usual case, the two tests of `combine` decided once
        for token in tokens:
            pair = get(token)
            if pair is None:
                continue
            spam_count, ham_count = pair
            spam_ratio = spam_count / spam_total
            both = spam_ratio + ham_count / ham_total
            if both == 0:
                continue
            n = spam_count + ham_count
            f = (prior + n * (spam_ratio / both)) / (S + n)
            distance = abs(f - 0.5)
            if distance >= MIN_DISTANCE:
                append((distance, token, f))
        return _combined(clues, spam_total, ham_total, keep_clues)
    return combine([(token, *pair) for token in tokens if (pair := get(token)) is not None], spam_total, ham_total,
                   keep_clues)


# f(w) of a token met in one class alone: with no ham, spam_ratio / both is exactly 1.0, and with no spam exactly
# 0.0, so f depends on the token's count alone, whatever the message totals: (distance, f) by count, kept as the
# online evaluation meets larger counts (`_one_class`). Every such f is a clue (|f - 0.5| > 0.49 from one message).
_SPAM_ONLY: list[tuple[float, float] | None] = [None]
_HAM_ONLY: list[tuple[float, float] | None] = [None]
# The three logarithms `_combined` takes of each of those f (clamped as it clamps): an f met again is looked up.
_LOGS_OF: dict[float, tuple[float, float, float]] = {}


def _one_class(up_to: int) -> None:
    """Extend the one-class tables to counts up to `up_to`, by the arithmetic of `combine_known` for such a token
    (the same operations in the same order: the same f to the last digit)."""
    prior = S * X
    for n in range(len(_SPAM_ONLY), up_to + 1):
        for table, share in ((_SPAM_ONLY, 1.0), (_HAM_ONLY, 0.0)):
            f = (prior + n * share) / (S + n)
            table.append((abs(f - 0.5), f))
            clamped = 1e-6 if f < 1e-6 else 1 - 1e-6 if f > 1 - 1e-6 else f
            _LOGS_OF[f] = (math.log(clamped), math.log(1.0 - clamped), math.log(clamped / (1.0 - clamped)))


def combine_then_count(tokens: Iterable[str], counts: dict[str, list[int]], column: int, spam_total: int,
                       ham_total: int) -> tuple[float, float]:
    """(score, strength) of a message by `counts` (token -> [spam, ham]) as they are, each token's count in
    `column` (0 spam, 1 ham) then raised by one, a new token counted from one: `combine_known`, then training on
    the message, in one lookup per token. Each token is met once (a set), so a count raised here is never one a
    later token of the same message reads: the score is `combine_known`'s to the last digit. The message totals
    are the caller's to raise. The online evaluation, training's one sequential part, runs this for every message.

    A token met in one class alone (most of them) takes its f, and `_combined` its logarithms, from tables by its
    count (`_one_class`): the same values the arithmetic gives, without doing it again for every message.
    """
    clues = []
    append = clues.append
    prior = S * X
    get = counts.get
    if not (spam_total and ham_total):
        found = combine_known(tokens, counts, spam_total, ham_total)[:2]
        for token in tokens:
            pair = get(token)
            if pair is None:
                counts[token] = [1, 0] if column == 0 else [0, 1]
            else:
                pair[column] += 1
        return found
    if len(_SPAM_ONLY) <= max(spam_total, ham_total):  # a token's count is at most its class's total
        _one_class(max(spam_total, ham_total) + 64)
    spam_only, ham_only = _SPAM_ONLY, _HAM_ONLY
    for token in tokens:
        pair = get(token)
        if pair is None:
            counts[token] = [1, 0] if column == 0 else [0, 1]
            continue
        spam_count, ham_count = pair
        pair[column] += 1
        if not ham_count and spam_count > 0:
            try:
                distance, f = spam_only[spam_count]
            except IndexError:  # a count above its class's total: a model file not made by training
                _one_class(spam_count + 64)
                distance, f = spam_only[spam_count]
            append((distance, token, f))
            continue
        if not spam_count and ham_count > 0:
            try:
                distance, f = ham_only[ham_count]
            except IndexError:
                _one_class(ham_count + 64)
                distance, f = ham_only[ham_count]
            append((distance, token, f))
            continue
        spam_ratio = spam_count / spam_total
        both = spam_ratio + ham_count / ham_total
        if both == 0:
            continue
        n = spam_count + ham_count
        f = (prior + n * (spam_ratio / both)) / (S + n)
        distance = abs(f - 0.5)
        if distance >= MIN_DISTANCE:
            append((distance, token, f))
    return _combined(clues, spam_total, ham_total, False)[:2]


def _combined(clues: list[tuple[float, str, float]], spam_total: int, ham_total: int,
              keep_clues: bool) -> tuple[float, float, list[tuple[str, float]]]:
    """The score of these clues (distance, token, f): the strongest MAX_CLUES combined by Fisher's method."""
    clues.sort(reverse=True)
    del clues[MAX_CLUES:]
    if not clues:
        return 0.5, 0.0, []
    ln_h = ln_s = 0.0
    strength = 0.0
    log = math.log
    known = _LOGS_OF.get
    for _distance, _token, f in clues:
        logs = known(f)
        if logs is not None:  # an f of the one-class tables: its logarithms as computed below
            ln_h += logs[0]
            ln_s += logs[1]
            strength += logs[2]
            continue
        if f < 1e-6:  # min(max(f, 1e-6), 1 - 1e-6), without two calls a clue
            f = 1e-6
        elif f > 1 - 1e-6:
            f = 1 - 1e-6
        ln_h += log(f)
        ln_s += log(1.0 - f)
        strength += log(f / (1.0 - f))
    n = len(clues)
    spamminess = 1.0 - chi2q(-2.0 * ln_s, 2 * n)
    hamminess = 1.0 - chi2q(-2.0 * ln_h, 2 * n)
    score = (spamminess - hamminess + 1.0) / 2.0
    if min(spam_total, ham_total) < MIN_EACH:  # unsure, but still ordered by what it saw
        score = 0.5 + (score - 0.5) * SQUASH
    shown = [(token, f) for _d, token, f in clues] if keep_clues else []
    return score, strength, shown


def verdict(score: float, ham_cutoff: float, spam_cutoff: float) -> str:
    if score < ham_cutoff:
        return "ham"
    return "spam" if score > spam_cutoff else "unsure"
