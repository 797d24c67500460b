"""The tokenizer made quicker gives the same tokens as before: each hostile message's tokens (`tokens_hostile`) have
the digest the tokenizer gave them before (recorded below; the one HTML message lxml's parser reads otherwise than
html.parser did recorded anew with the tokenizer's version 2), the word step, checked against the earlier code
written out here, agrees on any text, and the HTML step gives what lxml's own tree of the same markup holds. (The
SpamAssassin corpus's 6,046 files, each raw and with its leaking headers stripped, were compared once by hand; the
training corpus's scores, which depend on every token, are pinned by `test_spam_training`.)"""

from __future__ import annotations

import hashlib
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from spamfilter import tokens as tokenizer

from tests.plugins.spam import tokens_hostile

# sha256 of each message's sorted tokens joined by newlines (first 16 hex digits), by the tokenizer before the change.
RECORDED = {
    "broken boundary": "95f4668fde19ae76",
    "no boundary": "139f5eb000ccc6d1",
    "unknown charset": "0426c6fef8624a3c",
    "latin-1 as utf-8": "d9cf761b7fa57383",
    "bad base64": "bf0f464640903e47",
    "bad quoted-printable": "e8421cf9ac90ca01",
    "huge html": "ca1b2e1ae47159e6",
    "broken html": "c658679065e04b68",  # version 2: its attribute's quote, never closed, runs to the end
    "nested multiparts": "07b4b922b34ff3f2",
    "enclosed message": "5dcd1842b896d740",
    "rfc 2231 parameters": "1be1aa021bbff05a",
    "headers only": "bcdfe7fc339a9882",
    "crlf": "fb627c2f86a7e970",
    "nul bytes": "8105343cc252f47a",
    "repeated headers": "734a93b659fe75a5",
    "8-bit headers": "a6e36b776433566b",
    "bad encoded words": "dedf43e085710b77",
    "empty": "4bafe9a8d1929876",
    "shouting": "cfc6eb0b5f3f66f9",
    "random bytes 0": "4577df7ed589b083",
    "random bytes 1": "badd10c686b24525",
    "random bytes 2": "c69767a2356fd418",
    "random bytes 3": "813295407f521eb6",
}

WORD_BEFORE = re.compile(r"[^\W_][\w'$.!\-]*[\w$!]|[^\W_]", re.UNICODE)


def _words_before(text: str, prefix: str = "") -> list[str]:
    """`tokenizer.words` as it was: every match, stripped, then kept by its length."""
    out = []
    for match in set(WORD_BEFORE.findall(text.lower())):
        word = match.strip(".!-'")
        length = len(word)
        if length < 3:
            continue
        if length > 12:
            out.append(f"{prefix}skip:{word[0]} {length // 10 * 10}")
        else:
            out.append(prefix + word)
    return out


def _digest(raw: bytes) -> str:
    try:
        found = sorted(tokenizer.tokens(raw))
    except tokenizer.Unreadable:
        return "unreadable"
    return hashlib.sha256("\n".join(found).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def test_every_hostile_message_has_the_tokens_it_had() -> None:
    made = tokens_hostile.messages()
    assert made.keys() == RECORDED.keys()
    assert {name: _digest(raw) for name, raw in made.items()} == RECORDED


# Text made of what the word pattern cares about: letters (some not ASCII), digits, and the marks a word may hold,
# start or end with, or not.
_PIECES = st.sampled_from(list("abcXYZé9_'$.!-") + [" ", "\n", "ß", "İ", "٣", "…", "ab", "abc", "x!", "it's"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join), st.sampled_from(["", "subject:", "from:name:"]))
def test_words_are_those_of_the_earlier_code(text: str, prefix: str) -> None:
    assert set(tokenizer.words(text, prefix)) == set(_words_before(text, prefix))


_SOUP = st.lists(st.sampled_from(["<a href='x'>", "<img src=y>", "<a href=1 href=2>", "<img src=a src=b/>",
                                  "<font color=red>", "<script>", "</script>", "<style>", "</style>", "<form>", "<td>",
                                  "<table>", "<p>", "</p>", "word ", "wo", "rd", "&amp;", "<!-- c -->", "<br/>",
                                  "<iframe src=z>", "</iframe>", "<a name=n>", "<A HREF=u>", "<", "<?pi x?>",
                                  "<!DOCTYPE html>", "\n", "é"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(_SOUP)
@example("te<b>xt</b> <script>hidden()</script>tail<!-- note -->after <IMG SRC=x>")
def test_html_text_and_marks_are_what_lxmls_own_tree_holds(html: str) -> None:
    """The streaming reader (no tree) gives, for any tag soup, the text pieces and marks of the tree lxml's HTML
    parser builds from the same events, walked in document order: each text node a piece (a word is never cut
    where libxml2 handed a run over in two calls), script and style contents left out. (Compared word by word:
    the tree keeps no text of a document without an element, which is blank then.)"""
    text, marks = tokenizer.html_text(html)
    tree_text, tree_marks = _from_the_tree(html)
    assert (text.split(), sorted(marks)) == (tree_text.split(), tree_marks)


def _from_the_tree(html: str) -> tuple[str, list[str]]:
    from lxml import etree

    pieces: list[str] = []
    marks: list[str] = []
    root = etree.fromstring(html, etree.HTMLParser(no_network=True)) if html.strip() else None

    def walk(node) -> None:  # noqa: ANN001
        if isinstance(node.tag, str):
            if node.tag in ("script", "style"):
                marks.append(f"html:{node.tag}")
            else:
                if node.tag in ("img", "font", "table", "form", "iframe", "a"):
                    marks.append(f"html:{node.tag}")
                marks.extend(f"html:{node.tag}:{key}" for key in ("src", "href") if key in node.attrib)
                if node.text:
                    pieces.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                pieces.append(child.tail)

    if root is not None:
        walk(root)
    return " ".join(pieces), sorted(marks)


def test_a_huge_or_deeply_nested_html_part_costs_a_bounded_time_and_memory() -> None:
    """A stranger's HTML: 100,000 nested elements, or a part of 12 million characters of tags, is read in bounded
    memory (no tree is kept, at most MAX_HTML characters parsed) and gives text for what it read."""
    import tracemalloc

    nested = "<div>" * 100_000 + "deep words" + "</div>" * 100_000
    flood = "<a href=x>y " * 1_000_000
    tracemalloc.start()
    try:
        found = [tokenizer.html_text(html) for html in (nested, flood)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, peak
    assert "html:a:href" in found[1][1] and found[1][0].count("y") == tokenizer.MAX_HTML // len("<a href=x>y ")
    assert tokenizer.html_text("a\ud800b <b>lone surrogate</b>") == ("a\ud800b <b>lone surrogate</b>", [])


# Text made of what the URL and boundary patterns care about: their starts in any case (and a letter that folds to
# one of theirs), their `://` and `=` glued or apart, quotes, spaces and line ends that end them.
_URL_PIECES = st.sampled_from(["https://", "HTTP://", "ftp://", "httpſ://", "xhttp://", "http", "HTTPS", "ftp", "s",
                               "ſ", "://", ":/", "//", ":", "/", "a.b", "example.com", "x", "?q=1", "#", " ", "\n",
                               '"', "'", "<", ">", "@", "é"])
_BOUNDARY_PIECES = st.sampled_from([b"boundary", b"BOUNDARY", b"Boundary", b"=", b" ", b"\n", b"\r\n", b'"', b";",
                                    b"abc", b"--", b"x" * 150, b"message/rfc822", b"MESSAGE/RFC822", b"\xff"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_URL_PIECES, max_size=40).map("".join))
@example("see https://example.com/a and ftp://example.org, HTTPS:///x http://a https://b")
def test_urls_are_found_where_the_pattern_scanning_everywhere_finds_them(text: str) -> None:
    found = tokenizer._urls(text)
    assert [(m.span(), m.groups()) for m in found] == [(m.span(), m.groups()) for m in tokenizer.URL.finditer(text)]
    assert tokenizer._outside(text, found) == tokenizer.URL.sub(" ", text)


@settings(max_examples=400, deadline=None)
@given(st.lists(_BOUNDARY_PIECES, max_size=40).map(b"".join))
def test_boundaries_are_found_where_the_pattern_scanning_everywhere_finds_them(raw: bytes) -> None:
    found = tokenizer._matches_at(tokenizer._BOUNDARY, raw, raw.lower(), b"boundary", (0,))
    assert [(m.span(), m.groups()) for m in found] == [(m.span(), m.groups()) for m in
                                                        tokenizer._BOUNDARY.finditer(raw)]
    assert raw.lower().count(b"message/rfc822") == len(tokenizer._ENCLOSED.findall(raw))


def test_a_message_file_is_read_whole_up_to_the_bound_and_no_further(tmp_path) -> None:
    from spamfilter import MAX_MESSAGE, read_message

    small = tmp_path / "small"
    small.write_bytes(b"Subject: hi\n\nbody\n")
    assert read_message(small) == b"Subject: hi\n\nbody\n"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert read_message(empty) == b""
    large = tmp_path / "large"
    large.write_bytes(b"x" * (MAX_MESSAGE + 10))
    assert read_message(large) == b"x" * MAX_MESSAGE
    try:
        read_message(tmp_path)
    except OSError:
        pass
    else:
        raise AssertionError("a folder was read as a message")


def test_a_message_that_grows_while_it_is_read_is_read_on_to_its_end(tmp_path, monkeypatch) -> None:
    """The file's size is taken first; bytes written after that are read too (up to the bound), as before."""
    import os

    import spamfilter

    path = tmp_path / "growing"
    path.write_bytes(b"Subject: a\n\n")
    real_fstat = os.fstat

    def grown(descriptor: int) -> os.stat_result:
        found = real_fstat(descriptor)
        with open(path, "ab") as more:
            more.write(b"y" * 200_000)
        return found

    monkeypatch.setattr(spamfilter.os, "fstat", grown)
    assert spamfilter.read_message(path) == b"Subject: a\n\n" + b"y" * 200_000


def test_a_parts_parameters_kept_once_parsed_are_the_standard_librarys_and_follow_a_changed_header() -> None:
    import email

    made = tokens_hostile.messages()
    made["many parameters"] = (b"From: a@example.org\nSubject: p\nMIME-Version: 1.0\nContent-Type: text/plain; "
                               + b"; ".join(b"p%d=%d" % (n, n) for n in range(3000))
                               + b"; charset=ISO-8859-1; name*=utf-8''%C3%A9t%C3%A9.txt\n\nbody\n")
    for name, raw in made.items():
        try:
            kept = tokenizer.parse(raw)
        except tokenizer.Unreadable:
            continue
        plain = email.message_from_bytes(raw)
        for ours, theirs in zip(kept.walk(), plain.walk(), strict=True):
            for _ in range(2):  # the second time from what was kept
                assert ours.get_params() == theirs.get_params(), name
                assert ours.get_params(unquote=False) == theirs.get_params(unquote=False), name
                assert ours.get_param("charset") == theirs.get_param("charset"), name
                assert ours.get_content_charset() == theirs.get_content_charset(), name
                assert ours.get_filename() == theirs.get_filename(), name
                assert ours.get_params(header="content-disposition") == \
                    theirs.get_params(header="content-disposition"), name
            given = ours.get_params(unquote=False)
            if given is not None:
                given.clear()  # a caller's list is its own
            assert ours.get_params() == theirs.get_params(), name
    message = tokenizer.parse(b"Content-Type: text/plain; charset=us-ascii\n\nx\n")
    assert message.get_content_charset() == "us-ascii"
    message.set_param("charset", "utf-8")
    assert message.get_content_charset() == "utf-8"
    del message["content-type"]
    assert message.get_content_charset() is None and message.get_params() is None
