"""Notes, contacts, links and find: the person's Markdown notes and vCards, indexed masked, and one search over all.

`tools.py` declares what hosts see; `answers.py` turns a call into its answer; `notes.py` and
`contacts.py` read and index the files; `finding.py` is find; `sample.py` makes invented notes and cards.
"""
