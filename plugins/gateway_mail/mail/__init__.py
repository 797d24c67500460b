"""Mail and the Porch: the Maildir accounts, their masked index, search_mail, read_message, read_thread, porch
and draft_reply.

`tools.py` declares what hosts see; `answers.py` turns a call into its answer; `index.py`, `parse.py`,
`gating.py` and `store.py` read, mask, index and gate the message files; `drafts.py` writes replies;
`sample.py` makes invented mail for the tests, the demo and the benchmarks.
"""
