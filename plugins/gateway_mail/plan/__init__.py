"""The plan: tasks and the agenda on the person's vdir folders (todoman's and khal's), projects' pages, now and
reminders.

`tools.py` declares what hosts see; `answers.py` turns a call into its answer; `vdir.py` reads the
collections, `tasks.py` and `events.py` rank and expand them, `lineoftime.py` makes a project's line of
time, `alarms.py` and `remind.py` find the reminders, `steps.py` bounds dateutil's walk; `sample.py` makes
invented tasks and events.
"""
