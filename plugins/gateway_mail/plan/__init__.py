"""The plan: tasks and the agenda on the person's vdir folders (todoman's and khal's), projects' pages and now.

`tools.py` declares what hosts see; `answers.py` turns a call into its answer; `vdir.py` reads the
collections, `tasks.py` and `events.py` rank and expand them, `lineoftime.py` makes a project's line of
time; `sample.py` makes invented tasks and events.
"""
