"""Hostile messages for the tokenizer's tests, made identically in every run: broken MIME, wrong and unknown
charsets, broken transfer encodings, huge and broken HTML, nested multiparts and enclosed messages, 8-bit and
badly encoded headers, random bytes. Invented people on reserved domains only."""

from __future__ import annotations

import random

HEAD = (b"From: Ann Example <ann@example.com>\nTo: bob@example.org\nSubject: =?utf-8?b?SGVsbG8gV29ybGQh?= test\n"
        b"Message-ID: <a1@example.com>\nMIME-Version: 1.0\n")


def _huge_html() -> bytes:
    rows = b"".join(
        b'<div class="c%d"><a href="http://x%d.example.net/p?q=%d">link %d</a><img src="http://img.example.com/%d.gif">'
        b"<font color=red>word%d &amp; &#x41; &nbsp;</font></div>\n" % (i, i % 50, i, i, i, i % 300)
        for i in range(4000))
    return b"<html><body>" + rows + b"<script>var a='<b>';</script><style>p{}</style></body></html>"


def messages() -> dict[str, bytes]:
    """name -> the message's bytes."""
    nested = b"".join(b'--b%d\nContent-Type: multipart/mixed; boundary="b%d"\n\n' % (i, i + 1) for i in range(20))
    found = {
        "broken boundary": HEAD + b'Content-Type: multipart/mixed; boundary="xx"\n\n--xx\nContent-Type: text/plain\n\n'
                                  b"hello there friend\n--yy\nnothing closes\n",
        "no boundary": HEAD + b"Content-Type: multipart/alternative\n\nbody without any boundary param\n",
        "unknown charset": HEAD + b'Content-Type: text/plain; charset="x-nonsense-42"\n\n\xe9t\xe9 caf\xe9 na\xefve\n',
        "latin-1 as utf-8": HEAD + b"Content-Type: text/html; charset=utf-8\n\n<p>caf\xe9 \xff\xfe broken</p>\n",
        "bad base64": HEAD + b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
                             b"!!!notbase64@@@ aGVsbG8gd29y\n",
        "bad quoted-printable": HEAD + b"Content-Type: text/html; charset=iso-8859-1\nContent-Transfer-Encoding: "
                                       b"quoted-printable\n\n<b>=E9t=E9 =ZZ soft=\nbreak</b>=\n",
        "huge html": HEAD + b"Content-Type: text/html; charset=utf-8\n\n" + _huge_html(),
        "broken html": HEAD + b"Content-Type: text/html\n\n<a href='x <b>unclosed <!-- comment <![CDATA[ x ]]> "
                              b'<script>never closed <p attr="a\nb">text &bogus; &#99999999; </scr',
        "nested multiparts": HEAD + b'Content-Type: multipart/mixed; boundary="b0"\n\n' + nested
        + b"--b20\nContent-Type: text/html\n\n<p>deep inside</p>\n--b20--\n",
        "enclosed message": HEAD + b"Content-Type: message/rfc822\n\n" + HEAD
        + b"Content-Type: text/plain\n\nenclosed message words\n",
        "rfc 2231 parameters": HEAD + b"Content-Type: text/plain; charset*=us-ascii'en'utf-8\nContent-Disposition: "
                                      b"attachment; filename*=utf-8''na%C3%AFve.PDF\n\nattached words\n",
        "headers only": b"From: x@example.com\nSubject: only headers",
        "crlf": HEAD.replace(b"\n", b"\r\n") + b"Content-Type: text/html\r\n\r\n<p>crlf body words</p>\r\n",
        "nul bytes": HEAD + b"Content-Type: text/plain\n\nnul\x00in\x00text and more\x00\n",
        "repeated headers": HEAD + b"Subject: second subject\nFrom: Other <other@example.net>\nContent-Type: "
                                   b"text/plain\nContent-Type: text/html\n\n<p>dup</p>\n",
        "8-bit headers": b"From: \xc3\xa9lise <e@example.com>\nSubject: caf\xe9 \xff\nTo: \xe2\x98\x83 <s@example.org>"
                         b"\n\nbody\n",
        "bad encoded words": b"From: =?bogus-cs?q?x?= <a@example.com>\nSubject: =?utf-8?q?=FF=FE?= =?utf-8?b?!!!?=\n"
                             b"X-Mailer: =?utf-8?B?TWFpbA==?=\n\nbody\n",
        "empty": b"",
        "shouting": b"From: a@example.com\nSubject: BUY NOW!!! $$$ 100% FREE?\n\nCLICK HERE!!! ok!! a-b-c-d "
                    b"it's fine... http://Example.COM/Buy-Now/index.html?id=42&x=y\n",
    }
    rng = random.Random(7)
    for number in range(4):
        found[f"random bytes {number}"] = HEAD + bytes(rng.randrange(256) for _ in range(3000))
    return found
