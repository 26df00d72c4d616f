#!/usr/bin/python3
"""The receiving end of the websocket family (bench/websocket.py): a separate process, so that
its work never runs inside the measuring script, and one asyncio event loop for every mode, so
that the reference below is read by the same machinery as the daemon's ticks.

  wsclients.py OUT ws URL CONNECTIONS SUBSCRIPTIONS INTERVAL
      opens CONNECTIONS WebSockets to URL and spreads SUBSCRIPTIONS time subscriptions of
      INTERVAL seconds over them (as evenly as it can); prints `ready` once every subscription
      is answered `ok`. Each tick is timestamped with time.monotonic() (CLOCK_MONOTONIC, the
      same clock as the parent's) when recv() returns it.
  wsclients.py OUT lines
      reads `Background: t` lines from stdin (bench/tick-floor.c --print through a pipe),
      each timestamped the same way when the event loop reads it; prints `ready` at once.

It runs until SIGTERM, then writes OUT (JSON) and exits 0:
  {"ticks": [[t, elapsed, songid], ...]     every tick (mode lines: songid null), or
   "times": [t, ...]                        (ws with more than one subscription: receive times only),
   "count": n, "other_messages": n, "closed": ["why", ...], "errors": [...]}
A connection the daemon closes, or a subscription answered with an error, is in `closed` or
`errors`; the parent treats either as a measurement not taken.
"""

import asyncio
import json
import os
import signal
import sys
import time

import websockets


class Results:
    def __init__(self, record):
        self.record = record      # True: [t, elapsed, songid] per tick; False: t only
        self.ticks = []
        self.times = []
        self.count = 0
        self.other = 0
        self.closed = []
        self.errors = []

    def dump(self, path):
        doc = {"count": self.count, "other_messages": self.other, "closed": self.closed, "errors": self.errors}
        if self.record:
            doc["ticks"] = self.ticks
        else:
            doc["times"] = [round(t, 6) for t in self.times]
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)


async def connection(url, intervals, results, first_id, ready):
    """One WebSocket: subscribes INTERVALS, then counts (or records) its ticks until cancelled."""
    try:
        async with websockets.connect(url, max_size=2 ** 20, ping_interval=None, compression=None) as ws:
            waiting = {}
            for k, interval in enumerate(intervals):
                ident = first_id + k
                waiting[ident] = interval
                await ws.send(json.dumps({"id": ident, "subscribe": "time", "interval": interval}))
            record = results.record
            while True:
                text = await ws.recv()
                t = time.monotonic()
                if '"event":"time"' in text:
                    results.count += 1
                    if record:
                        tick = json.loads(text)
                        results.ticks.append([t, tick["elapsed"], tick.get("songid")])
                    else:
                        results.times.append(t)
                    continue
                message = json.loads(text)
                if message.get("id") in waiting:
                    if "ok" not in message:
                        results.errors.append(message)
                    del waiting[message["id"]]
                    if not waiting:
                        ready()
                else:
                    results.other += 1
    except asyncio.CancelledError:
        raise
    except Exception as error:  # a close by the daemon (1013, a dropped slow client), a refused upgrade
        results.closed.append(f"{type(error).__name__}: {error}")
        ready(failed=True)


async def websocket_mode(out, url, connections, subscriptions, interval):
    results = Results(record=(subscriptions == 1))
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    pending = [connections]
    broken = [False]

    def ready(failed=False):
        if failed:
            if not broken[0]:
                broken[0] = True
                print("failed", flush=True)
            return
        pending[0] -= 1
        if pending[0] == 0 and not broken[0]:
            print("ready", flush=True)

    per = [subscriptions // connections + (1 if c < subscriptions % connections else 0) for c in range(connections)]
    tasks, next_id = [], 1
    for n in per:
        tasks.append(asyncio.create_task(connection(url, [interval] * n, results, next_id, ready)))
        next_id += n
        await asyncio.sleep(0.002)   # not all 32 upgrades in one burst
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    results.dump(out)


class LineProtocol(asyncio.Protocol):
    def __init__(self, results, done):
        self.results = results
        self.partial = b""
        self.done = done

    def data_received(self, data):
        t = time.monotonic()
        self.partial += data
        *complete, self.partial = self.partial.split(b"\n")
        for line in complete:
            if line.startswith(b"Background: "):
                self.results.count += 1
                self.results.ticks.append([t, float(line[12:]), None])

    def connection_lost(self, exc):
        self.done.set()


async def lines_mode(out):
    results = Results(record=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    eof = asyncio.Event()
    transport, _ = await loop.connect_read_pipe(lambda: LineProtocol(results, eof), sys.stdin.buffer)
    print("ready", flush=True)
    await stop.wait()
    transport.close()
    results.dump(out)


def main():
    out, mode = sys.argv[1], sys.argv[2]
    if mode == "ws":
        url, connections, subscriptions, interval = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        asyncio.run(websocket_mode(out, url, connections, subscriptions, interval))
    elif mode == "lines":
        asyncio.run(lines_mode(out))
    else:
        sys.exit(f"wsclients.py: unknown mode {mode!r}")


if __name__ == "__main__":
    main()
