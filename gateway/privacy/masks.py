"""Masks for codes, sign-in links, account and card numbers, and secrets (being written: see issue 2)."""


def mask(text: str) -> str:
    return text


def mask_secrets(text: str) -> str:
    return text
