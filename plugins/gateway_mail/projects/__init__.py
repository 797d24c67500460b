"""Projects and ties: the manifest's projects as the plugin's things see them, and the tie store.

`projects.py` says which project a task, an event or a note belongs to; `ties.py` keeps the ties between
addresses; `belonging.py` reads what ties say of projects; `things.py` looks up any address the plugin gives.
"""
