"""The quickest start of `gateway-spam-classify`, for a delivery rule: `python -I -S .../spamfilter/deliver.py`.

A file Python runs by name is compiled each time (only imported modules keep their compiled form), so this one is
a few lines that put the library's folder on the path and import the command, whose compiled form is kept.
`-I -S` spare the start the site-packages scan; `gateway-spam-classify --command` prints this command line.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spamfilter.classify import main  # noqa: E402 - the path above first

sys.exit(main())
