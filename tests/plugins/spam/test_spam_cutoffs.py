"""The default cutoffs and the filter's cold start: a model that has not yet seen enough of each class is unsure of
every message under the defaults, however strong the evidence it has."""

from __future__ import annotations

from gateway_spam import evaluation
from gateway_spam.model import Model
from spamfilter import score


def test_the_squeezed_band_of_a_cold_model_is_unsure_under_the_default_cutoffs() -> None:
    lowest = 0.5 + (0.0 - 0.5) * score.SQUASH
    highest = 0.5 + (1.0 - 0.5) * score.SQUASH
    for value in (lowest, 0.5, highest):
        assert score.verdict(value, score.HAM_CUTOFF, score.SPAM_CUTOFF) == "unsure"
    assert lowest >= score.HAM_CUTOFF and highest <= score.SPAM_CUTOFF


def test_a_message_made_only_of_ham_words_is_unsure_until_each_class_has_enough_messages() -> None:
    model = Model()
    ham_words = {f"meeting{n}" for n in range(40)}
    for n in range(score.MIN_EACH):
        model.learn({f"offer{n}", "prize", "winner"}, "spam")
    for _ in range(score.MIN_EACH - 1):
        model.learn(ham_words, "ham")
    cold = model.score(ham_words)
    assert cold.probability >= score.HAM_CUTOFF
    assert cold.verdict(score.HAM_CUTOFF, score.SPAM_CUTOFF) == "unsure"
    model.learn(ham_words, "ham")
    assert model.score(ham_words).verdict(score.HAM_CUTOFF, score.SPAM_CUTOFF) == "ham"


def test_the_figures_count_unsure_ham_and_unsure_spam_each_against_its_own_class() -> None:
    def outcome(label: str, p: float) -> evaluation.Outcome:
        return evaluation.Outcome(evaluation.Sample("k", label, 0.0, set()), p, 0.0)

    outcomes = ([outcome("ham", 0.01)] * 6 + [outcome("ham", 0.5)] * 2 + [outcome("ham", 0.95)]
                + [outcome("spam", 0.99)] * 3 + [outcome("spam", 0.45)] + [outcome("spam", 0.1)])
    figures = evaluation.figures(outcomes, 0.45, 0.80)
    assert (figures["unsure_ham"], figures["unsure_spam"], figures["unsure"]) == (2, 1, 3)
    assert figures["unsure_ham_percent"] == round(100 * 2 / 9, 3) and figures["unsure_spam_percent"] == 20.0
    assert (figures["false_positives"], figures["false_negatives"]) == (1, 1)
