"""tstp-reader.py READY OUT: stops on SIGTSTP again (as vim or less do, even
when started with it ignored), creates READY, then copies stdin to OUT."""
import signal
import sys

signal.signal(signal.SIGTSTP, signal.SIG_DFL)
open(sys.argv[1], "w").close()
with open(sys.argv[2], "w") as out:
    out.write(sys.stdin.read())
