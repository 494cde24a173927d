"""A host-side listener for the network enforcement tests.

    listener.py LOG READY SECONDS SPEC...

SPEC: tcp4, tcp6, udp4, udp6 (port chosen by the kernel), unix:PATH,
unixdgram:PATH, abstract:NAME.  Writes "SPEC PORT" lines (port 0 for UNIX
sockets) to READY once everything listens, then for SECONDS appends one line
"SPEC DATA" to LOG for every connection or datagram it gets, so a test can
tell exactly which attempts reached the host.
"""
import os
import select
import socket
import sys
import time


def main():
    log_path, ready_path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    listeners = {}
    ready = []
    for spec in sys.argv[4:]:
        kind, _, arg = spec.partition(":")
        if kind in ("tcp4", "tcp6", "udp4", "udp6"):
            family = socket.AF_INET if kind.endswith("4") else socket.AF_INET6
            stype = socket.SOCK_STREAM if kind.startswith("tcp") else socket.SOCK_DGRAM
            s = socket.socket(family, stype)
            s.bind(("127.0.0.1" if family == socket.AF_INET else "::1", 0))
            port = s.getsockname()[1]
        elif kind == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(arg)
            os.chmod(arg, 0o777)
            port = 0
        elif kind == "unixdgram":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(arg)
            os.chmod(arg, 0o777)
            port = 0
        elif kind == "abstract":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind("\0" + arg)
            port = 0
        else:
            sys.exit("unknown spec " + spec)
        if stype_is_stream(s):
            s.listen(16)
        listeners[s.fileno()] = (kind, s)
        ready.append(f"{kind} {port}")
    with open(ready_path + ".tmp", "w") as f:
        f.write("\n".join(ready) + "\n")
    os.rename(ready_path + ".tmp", ready_path)

    deadline = time.monotonic() + seconds
    with open(log_path, "a", buffering=1) as log:
        while time.monotonic() < deadline:
            readable, _, _ = select.select(list(listeners), [], [], 0.2)
            for fd in readable:
                kind, s = listeners[fd]
                if stype_is_stream(s):
                    conn, _ = s.accept()
                    conn.settimeout(1.0)
                    try:
                        data = conn.recv(200)
                    except OSError:
                        data = b""
                    conn.close()
                else:
                    data = s.recv(200)
                log.write(f"{kind} {data.decode(errors='replace')}\n")


def stype_is_stream(s):
    return s.type == socket.SOCK_STREAM


if __name__ == "__main__":
    main()
