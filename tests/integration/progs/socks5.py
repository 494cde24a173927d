#!/usr/bin/env python3
"""A SOCKS5 proxy for the transparent TCP tests, on the host's loopback.

Usage: socks5.py DIR ALLOWED...  Listens on 127.0.0.1 (an ephemeral port) and
serves CONNECT (no authentication): a target whose name or address is in
ALLOWED is reached at the host's 127.0.0.1 on the requested port (the tests'
servers all listen there), any other is refused with reply 0x02 (not allowed
by ruleset).  Each request is logged to DIR/requests as "NAME PORT ok" or
"NAME PORT refused" (an address as its text).  Writes its port to DIR/socks
once listening.  Also a banner server on every address of the host (sbx's
own proxy reaches it at the host's address): DIR/banner holds its port; each
connection gets "banner from the host" and then an echo of what it sends.
"""
import ipaddress, os, socket, struct, sys, threading

d, allowed = sys.argv[1], set(sys.argv[2:])
log_lock = threading.Lock()


def log(line):
    with log_lock, open(os.path.join(d, "requests"), "a") as f:
        f.write(line + "\n")


def exactly(c, n):
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(c):
    try:
        ver, n = exactly(c, 2)
        exactly(c, n)
        c.sendall(b"\x05\x00")
        ver, cmd, _, atyp = exactly(c, 4)
        if atyp == 3:
            name = exactly(c, exactly(c, 1)[0]).decode()
        elif atyp == 1:
            name = str(ipaddress.IPv4Address(exactly(c, 4)))
        else:
            name = str(ipaddress.IPv6Address(exactly(c, 16)))
        (port,) = struct.unpack("!H", exactly(c, 2))
        if cmd != 1 or name not in allowed:
            log(f"{name} {port} refused")
            c.sendall(b"\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00")
            c.close()
            return
        up = socket.create_connection(("127.0.0.1", port))
        log(f"{name} {port} ok")
        c.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + struct.pack("!H", up.getsockname()[1]))
        threading.Thread(target=pump, args=(up, c), daemon=True).start()
        pump(c, up)
    except (EOFError, OSError):
        c.close()


def banner(c):
    try:
        c.sendall(b"banner from the host\n")
        pump(c, c)
    except OSError:
        pass


def accept(listener, handler):
    while True:
        c = listener.accept()[0]
        threading.Thread(target=handler, args=(c,), daemon=True).start()


def listen(address="127.0.0.1"):
    s = socket.socket()
    s.bind((address, 0))
    s.listen(64)
    return s


socks, banner_listener = listen(), listen("0.0.0.0")
threading.Thread(target=accept, args=(banner_listener, banner), daemon=True).start()
for name, s in (("banner", banner_listener), ("socks", socks)):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
accept(socks, serve)
