#!/usr/bin/env python3
"""forks.py N: forks up to N children that wait (until the sandbox ends),
stops at the first fork that fails, and prints how many it started."""
import os
import signal
import sys

started = 0
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    started += 1
print(started)
