"""How good the filter is: online in time order (TREC's protocol: classify each message, then train on it), and
k-fold as a second view; false positives, false negatives and unsure ham and spam as % of their class, unsure as %
of all, and (1−ROCA)%.

Works on already-tokenized messages (`Sample`), so that the job reads each file once and k-fold costs only counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import define, field

from gateway_spam.kept import tokens_of_text
from gateway_spam.model import Model


@define
class Sample:
    key: str  # what labels and dedupe know it by
    label: str  # "spam" | "ham"
    when: float
    # Its tokens, or their text as the facts store keeps it (split into the set when first asked: a training that
    # reuses an earlier evaluation whole never needs them).
    given: set[str] | str = field(alias="tokens")
    envelope: dict = field(factory=dict)  # masked: sender, subject, date, place (never the text)
    source: bytes | None = None  # the identity of its tokens as the facts store keeps them (`kept.identity`)

    @property
    def tokens(self) -> set[str]:
        if isinstance(self.given, str):
            self.given = tokens_of_text(self.given)
        return self.given

    @tokens.setter
    def tokens(self, tokens: set[str]) -> None:
        self.given = tokens


@define
class Outcome:
    sample: Sample
    probability: float
    strength: float


def roc_area(outcomes: Sequence[Outcome]) -> float:
    """The area under the ROC curve, spam as the positive class, ties counted half (Mann–Whitney)."""
    ranked = sorted(outcomes, key=lambda o: (o.probability, o.strength))
    spam_total = sum(1 for o in outcomes if o.sample.label == "spam")
    ham_total = len(outcomes) - spam_total
    if not spam_total or not ham_total:
        return 1.0
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        key = (ranked[i].probability, ranked[i].strength)
        while j < len(ranked) and (ranked[j].probability, ranked[j].strength) == key:
            j += 1
        average_rank = (i + 1 + j) / 2.0
        rank_sum += average_rank * sum(1 for o in ranked[i:j] if o.sample.label == "spam")
        i = j
    return (rank_sum - spam_total * (spam_total + 1) / 2.0) / (spam_total * ham_total)


def figures(outcomes: Sequence[Outcome], ham_cutoff: float, spam_cutoff: float) -> dict:
    spam = [o for o in outcomes if o.sample.label == "spam"]
    ham = [o for o in outcomes if o.sample.label == "ham"]
    false_positives = sum(1 for o in ham if o.probability > spam_cutoff)
    false_negatives = sum(1 for o in spam if o.probability < ham_cutoff)
    unsure_ham = sum(1 for o in ham if ham_cutoff <= o.probability <= spam_cutoff)
    unsure_spam = sum(1 for o in spam if ham_cutoff <= o.probability <= spam_cutoff)
    unsure = unsure_ham + unsure_spam

    def percent(count: int, total: int) -> float:
        return round(100.0 * count / total, 3) if total else 0.0

    return {
        "messages": len(outcomes), "spam": len(spam), "ham": len(ham),
        "false_positives": false_positives, "false_negatives": false_negatives, "unsure": unsure,
        "fp_percent": percent(false_positives, len(ham)), "fn_percent": percent(false_negatives, len(spam)),
        "unsure_percent": percent(unsure, len(outcomes)),
        # by class: an unsure ham is mail the person waits for, an unsure spam only one more to look at
        "unsure_ham": unsure_ham, "unsure_spam": unsure_spam,
        "unsure_ham_percent": percent(unsure_ham, len(ham)), "unsure_spam_percent": percent(unsure_spam, len(spam)),
        "one_minus_roca_percent": round(100.0 * (1.0 - roc_area(outcomes)), 4),
    }


def worst_outcomes(outcomes: Sequence[Outcome], ham_cutoff: float, spam_cutoff: float,
                   count: int = 5) -> list[Outcome]:
    """The worst errors: the hams scored most spammy, then the spams scored most hammy (up to `count` each)."""
    ham = sorted((o for o in outcomes if o.sample.label == "ham" and o.probability > spam_cutoff),
                 key=lambda o: -o.probability)[:count]
    spam = sorted((o for o in outcomes if o.sample.label == "spam" and o.probability < ham_cutoff),
                  key=lambda o: o.probability)[:count]
    return ham + spam


def worst(outcomes: Sequence[Outcome], ham_cutoff: float, spam_cutoff: float, count: int = 5) -> list[dict]:
    """The worst errors, envelopes only: the hams scored most spammy, the spams scored most hammy."""
    chosen = worst_outcomes(outcomes, ham_cutoff, spam_cutoff, count)
    ham = [o for o in chosen if o.sample.label == "ham"]
    spam = [o for o in chosen if o.sample.label == "spam"]
    return [{**o.sample.envelope, "label": o.sample.label, "error": kind, "score": round(o.probability, 4)}
            for kind, group in (("false positive", ham), ("false negative", spam)) for o in group]


def online(samples: Sequence[Sample], progress: Callable[[int], None] | None = None,
           model: Model | None = None, earlier: Sequence[tuple] = (),
           whole: Callable[[], Model | None] | None = None) -> list[Outcome]:
    """TREC's protocol: in time order, classify each message with what came before it, then train on it.

    `model` (empty, else a new one) ends trained on every sample, by key: the model training saves. `earlier` is an
    earlier run's evaluation, (key, label, tokens' identity, probability, strength) per message in its order: the
    longest run of messages at the start of this stream that are the same messages (key, label and the identity of
    their tokens, `Sample.source`) in the same order were scored by the same counts then, so their outcomes are
    taken from it, and they are counted all at once: taken from `whole()` (the model that earlier run ended with,
    or None when it is not known any more) when the run is all of `earlier`, else by `Model.learn_many`. The
    messages after it are scored one by one. The outcomes are those of scoring every message, to the last digit.
    """
    model = Model() if model is None else model
    ordered = sorted(samples, key=lambda s: s.when)
    same = 0
    if not (model.spam or model.ham or model.counts):  # only an empty model is where `earlier` started
        for sample, before in zip(ordered, earlier, strict=False):
            if sample.source is None or (sample.key, sample.label, sample.source) != tuple(before[:3]):
                break
            same += 1
    outcomes = [Outcome(sample, before[3], before[4]) for sample, before in zip(ordered[:same], earlier,
                                                                                   strict=False)]
    ended = whole() if same and same == len(earlier) and whole is not None else None
    if ended is not None and (ended.spam + ended.ham, len(ended.trained)) == (same, same):
        model.spam, model.ham, model.counts, model.trained = ended.spam, ended.ham, ended.counts, ended.trained
    else:
        model.learn_many(ordered[:same])
    if progress and same:
        progress(same)
    for number, sample in enumerate(ordered[same:], start=same + 1):
        # `Model.score` then `Model.learn`, their arithmetic unchanged, with one lookup per token
        probability, strength = model.score_then_learn(sample.tokens, sample.label, sample.key)
        outcomes.append(Outcome(sample, probability, strength))
        if progress and number % 200 == 0:
            progress(number)
    return outcomes


def k_fold(samples: Sequence[Sample], folds: int = 5) -> list[Outcome]:
    """Each message classified by a model trained on the other folds (the folds interleaved in time order)."""
    ordered = sorted(samples, key=lambda s: s.when)
    if len(ordered) < folds * 2:
        return []
    whole = Model()
    for sample in ordered:
        whole.learn(sample.tokens, sample.label)
    outcomes = []
    for fold in range(folds):
        held = ordered[fold::folds]
        for sample in held:  # take the fold out of the whole model rather than training k models afresh
            whole.learn(sample.tokens, sample.label, sign=-1)
        for sample in held:
            score = whole.score(sample.tokens)
            outcomes.append(Outcome(sample, score.probability, score.strength))
        for sample in held:
            whole.learn(sample.tokens, sample.label)
    return outcomes
