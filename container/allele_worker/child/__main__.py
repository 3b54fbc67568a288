"""``python -I -m allele_worker.child``: the entry of a run's sandboxed child started as a fresh
interpreter (``entry.main``); a child forked from the warm fork server enters at ``entry.run``."""

import os
import sys

from .entry import main

# os._exit skips interpreter teardown, where user objects' __del__ could still run.
code = main(sys.argv)
try:
    sys.stdout.flush()
    sys.stderr.flush()
finally:
    os._exit(code)
