"""The safety net's verdicts kept by their text's digest: a text found clean is clean when asked again, a text holding
a secret is looked at every time and masked, and what is kept is digests only, never a text, within its bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import Answer
from gateway.privacy import net
from gateway.privacy.masks import mask_secrets
from tests.gateway.test_masks import CHUNKS

SECRETS = ["4111 1111 1111 1111", "FR76 3000 6000 0112 3456 7890 189", "ghp_" + "a1B2" * 9,
           "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", "password: hunter2",
           "https://ada:s3cretpass@example.com/x", "AKIAIOSFODNN7EXAMPLE"]
pieces = st.one_of(st.sampled_from(CHUNKS), st.sampled_from(SECRETS), st.text(max_size=8),
                   st.integers(0, 10**20).map(str), st.sampled_from(["\n", " ", "Date: ", "mid:", "2002-09-05 "]))
texts = st.lists(pieces, max_size=10).map("".join)
values = st.recursive(st.one_of(texts, st.integers(-10**20, 10**20), st.none(), st.booleans()),
                      lambda inner: st.one_of(st.lists(inner, max_size=4),
                                              st.dictionaries(st.sampled_from("abcd"), inner, max_size=4)),
                      max_leaves=12)


def long_way(value: object) -> bool:
    joined = net._SEPARATOR.join(dict.fromkeys(net._strings(value, [])))
    return mask_secrets(joined) != joined


@settings(max_examples=400, deadline=None)
@given(st.lists(values, min_size=1, max_size=3))
def test_a_kept_verdict_is_the_one_made_afresh(asked: list) -> None:
    for value in asked:
        expected = long_way(value)
        assert net.needs_masking(value) == expected  # looked at now, or kept already
        assert net.needs_masking(value) == expected  # from what was kept
    net._clean.clear()
    assert [net.needs_masking(value) for value in asked] == [long_way(value) for value in asked]


def test_a_text_with_a_secret_is_masked_every_time_and_never_kept() -> None:
    net._clean.clear()
    for secret in SECRETS:
        answer = Answer(f"Subject:\n{secret}\nend", {"hits": [{"subject": secret}]})
        for _ in range(3):
            masked = net.masked_answer(answer)
            assert masked.text == mask_secrets(answer.text) != answer.text, secret
            assert masked.data["hits"][0]["subject"] == mask_secrets(secret)
    assert not net._clean
    clean = Answer("Subject: plums", {"hits": [{"subject": "plums"}]})
    assert net.masked_answer(clean) is clean and len(net._clean) == 1
    # Found clean, then one character more: a card, looked at afresh.
    assert net.needs_masking(["4111 1111 1111 111"]) is False
    assert net.needs_masking(["4111 1111 1111 1111"]) is True


def test_what_is_kept_is_digests_only_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net, "_clean", set())
    monkeypatch.setattr(net, "CLEAN_KEPT", 10)
    for number in range(35):
        assert net.needs_masking([f"plums {number}", {"n": number}]) is False
        assert len(net._clean) <= 10
    assert all(type(key) is bytes and len(key) == 16 for key in net._clean)
    monkeypatch.setattr(net, "CLEAN_LENGTH", 100)
    net._clean.clear()
    assert net.needs_masking(["a" * 101]) is False and not net._clean  # past the length: looked at, not kept
    assert net.needs_masking(["a" * 101 + " 4111 1111 1111 1111"]) is True
