#!/usr/bin/python3
"""N MPD clients that idle on SOCKET until stdin closes (row 6's background crowd).

Each connects, reads the greeting and sends `idle`; whenever an idle returns
(`changed: ...` then `OK`), it idles again at once, as an MPD client library does.
Prints `ready` when all are idling. A separate process, so that its work never
delays the measuring client's timestamps.
"""

import selectors
import socket
import sys


def main():
    path, count = sys.argv[1], int(sys.argv[2])
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        f = s.makefile("rb")
        greeting = f.readline()
        if not greeting.startswith(b"OK MPD"):
            sys.exit(f"idlers: unexpected greeting {greeting!r}")
        s.sendall(b"idle\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, [b""])
        conns.append(s)
    sel.register(sys.stdin, selectors.EVENT_READ, None)
    print("ready", flush=True)
    wakeups = 0
    while True:
        for key, _ in sel.select():
            if key.data is None:          # stdin: closed by the parent, or a line
                if not sys.stdin.readline():
                    print(f"wakeups {wakeups}", flush=True)
                    return
                continue
            s, pending = key.fileobj, key.data
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            if not chunk:
                sys.exit("idlers: the server closed a connection")
            pending[0] += chunk
            while b"OK\n" in pending[0] or b"ACK" in pending[0]:
                if b"ACK" in pending[0]:
                    sys.exit(f"idlers: {pending[0]!r}")
                _, pending[0] = pending[0].split(b"OK\n", 1)
                wakeups += 1
                s.sendall(b"idle\n")


if __name__ == "__main__":
    main()
