"""python-mpd2 (Debian's python3-mpd) over TCP against a queueplayerd with passwords: each
permission refused, then granted by a password.

Usage: /usr/bin/python3 mpd2_permissions.py HOST PORT [open]

The daemon runs with --music-directory Media/, --password reader@read,
--password full@read,add,player,control,admin and no default permissions; with `open`, it
has no password and HOST is loopback: every permission is granted without one.
Prints one JSON step per line (steps.py); ControlSocketTCPTests.swift checks them.
"""
import sys

import mpd

import steps

HOST, PORT = sys.argv[1], int(sys.argv[2])
OPEN = sys.argv[3:] == ["open"]

client = mpd.MPDClient()
client.timeout = 5
client.connect(HOST, PORT)

# One command per permission, as mpd's table has them.
PROBES = [
    ("read", lambda: client.status()),
    ("add", lambda: client.add("01-morning-sine.mp3")),
    ("player", lambda: client.setvol(40)),
    ("control", lambda: client.save("permissions-probe")),
    ("admin", lambda: client.enableoutput(0)),
]


def probe(stage):
    for name, call in PROBES:
        steps.run("%s.%s" % (stage, name), lambda: call() is not None or True)


if OPEN:
    probe("open")
    steps.run("open.notcommands", lambda: client.notcommands())
    steps.run("cleanup", lambda: client.rm("permissions-probe"))
    client.close()
    sys.exit(0)

steps.run("none.commands", lambda: client.commands())
probe("none")
steps.run("wrong.password", lambda: client.password("guess"))
steps.run("reader.password", lambda: client.password("reader"))
probe("reader")
steps.run("reader.notcommands", lambda: client.notcommands())
steps.run("full.password", lambda: client.password("full"))
probe("full")
steps.run("full.notcommands", lambda: client.notcommands())
steps.run("cleanup", lambda: client.rm("permissions-probe"))
client.close()
