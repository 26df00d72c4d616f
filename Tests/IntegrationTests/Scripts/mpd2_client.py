"""python-mpd2 (Debian's python3-mpd, sync MPDClient) against queueplayerd's control socket.

Usage: /usr/bin/python3 mpd2_client.py SOCKET

The daemon must have been started with --music-directory Media/ and an empty queue.
Prints one JSON object per line, {"step": NAME, "ok": VALUE} or {"step": NAME, "error": "Type: message"};
ControlSocketPythonTests.swift checks them. Dicts are printed as lists of [key, value] pairs so that
the key order the daemon sent is kept; a repeated key (a list value) is printed as its JSON text.
"""
import json
import sys
import threading
import time

import mpd

import steps
from steps import emit

SOCKET = sys.argv[1]


def pairs(value):
    if isinstance(value, dict):
        return [[k, v if isinstance(v, str) else json.dumps(v)] for k, v in value.items()]
    if isinstance(value, list):
        return [pairs(v) for v in value]
    return value


def run(step, function):
    return steps.run(step, function, shape=pairs)


def connect():
    client = mpd.MPDClient()
    client.timeout = 5        # every socket operation
    client.idletimeout = 5    # idle(): no event within 5 s raises instead of blocking forever
    client.connect(SOCKET)
    return client


c = connect()
emit("mpd_version", ok=c.mpd_version)

run("status_empty", c.status)
run("currentsong_empty", c.currentsong)
run("add_all", lambda: c.add(""))
run("playlistinfo", c.playlistinfo)
run("currentsong_stopped", c.currentsong)
run("play", c.play)
time.sleep(0.5)
run("status_playing", c.status)
run("currentsong_playing", c.currentsong)
run("pause", lambda: c.pause(1))
run("status_paused", c.status)
run("next", c.next)


def command_list():
    c.command_list_ok_begin()
    c.status()
    c.currentsong()
    return c.command_list_end()


run("command_list", command_list)
run("play_99", lambda: c.play(99))


def timed_idle():
    start = time.monotonic()
    changed = c.idle()
    return {"changed": json.dumps(changed), "seconds": "%.3f" % (time.monotonic() - start)}


# The events this client's own commands caused are pending: idle() returns at once.
run("idle_own_events", timed_idle)

# A second client sends next() while this one waits in idle().
sent_at = {}


def other_client():
    time.sleep(0.5)
    try:
        other = connect()
        sent_at["t"] = time.monotonic()
        other.next()
        other.close()
        other.disconnect()
        emit("other_next", ok=None)
    except Exception as error:
        emit("other_next", error="%s: %s" % (type(error).__name__, error))


thread = threading.Thread(target=other_client)
thread.start()


def idle_for_other():
    changed = c.idle()
    replied_at = time.monotonic()
    delay = replied_at - sent_at["t"] if "t" in sent_at else -1
    return {"changed": json.dumps(changed), "delay": "%.3f" % delay}


run("idle_other_next", idle_for_other)
thread.join()

run("status_after_other_next", c.status)
run("currentsong_after_other_next", c.currentsong)
run("close", c.close)
c.disconnect()
emit("done", ok=None)
