#!/usr/bin/python3
"""Row 6: control latency over the MPD protocol, with 100 other clients idling.

Both daemons play a 64-item queue (the 180 s file) through the private PulseAudio
null sink (ALSA device pulsenull) while 100 other clients idle on the socket
(bench/lib/idlers.py, a separate process that re-idles each client as soon as an
idle returns). The same client script then measures, with this process's clock:

  status round trip: send `status`, read up to `OK`; one request every 2 ms.
  next -> `changed: player`: a watching client idles (armed only when nothing
      stale is pending), another sends `next`; the time from sending `next` to the
      watcher reading `changed: player`. One every 250 ms.

queueplayerd --media MUSIC/queue --output alsa:pulsenull   vs   mpd (ALSA output
pulsenull, `add queue`, `play`). Repetitions alternate the daemons; medians over
repetitions of each repetition's p50 and p99.
"""

import os
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

IDLERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "idlers.py")
OTHER_CLIENTS = 100


def start(kind):
    if kind == "queueplayerd":
        sock = os.path.join(B.WORK, "run", "control.sock")
        # --max-clients as mpd's max_connections here (benchlib.mpd_config): 100 idlers and the
        # measuring client are past both daemons' default of 100.
        child = B.Child([B.QP, "--media", B.music("queue"), "--output", "alsa:pulsenull", "--no-state", "--socket", sock,
                         "--max-clients", "200"],
                        env=B.qp_env())
        B.wait_accepting(sock, child=child)
    else:
        child, sock = B.start_mpd("control", "pulsenull")
        c = B.Client(sock)
        c.command("clear")
        c.command('add "queue"')
        c.command("play")
        c.close()
    c = B.Client(sock)
    deadline = time.monotonic() + 10
    while c.status().get("state") != "play":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{kind} is not playing")
        time.sleep(0.02)
    c.close()
    return child, sock


def status_round_trips(c, n):
    rtts = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.send("status")
        c.reply()
        rtts.append(time.perf_counter() - t0)
        time.sleep(0.002)
    return rtts


def drain_stale(w):
    """After `idle` was sent: True when nothing came back within 50 ms (armed)."""
    if len(w.buf) > w.pos:
        return False
    r, _, _ = select.select([w.sock], [], [], 0.05)
    return not r


def next_latencies(c, w, n):
    lat = []
    for _ in range(n):
        time.sleep(0.25)
        while True:
            w.send("idle")
            if drain_stale(w):
                break
            w.reply()  # a stale event: take it and arm again
        t0 = time.perf_counter()
        c.send("next")
        t1 = None
        while True:
            line = w.readline()
            if line == "changed: player" and t1 is None:
                t1 = time.perf_counter()
            if line == "OK":
                break
            if line.startswith("ACK"):
                raise RuntimeError(line)
        c.reply()
        if t1 is None:
            raise RuntimeError("idle returned without `changed: player` after next")
        lat.append(t1 - t0)
    return lat


def measure(kind, n_status, n_next):
    child, sock = start(kind)
    idlers = subprocess.Popen([sys.executable, IDLERS, sock, str(OTHER_CLIENTS)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if idlers.stdout.readline().strip() != "ready":
            raise RuntimeError("the idling clients did not start")
        time.sleep(0.5)
        c = B.Client(sock)
        w = B.Client(sock)
        rtts = status_round_trips(c, n_status)
        nexts = next_latencies(c, w, n_next)
        alive = child.alive()
        c.close()
        w.close()
    finally:
        idlers.stdin.close()
        wakeups = idlers.stdout.readline().strip()
        idlers.wait(10)
        child.stop()
    if not alive:
        raise RuntimeError(f"{kind} died during the measurement")
    r = {"status_p50": B.percentile(rtts, 50), "status_p99": B.percentile(rtts, 99),
         "status_max": max(rtts), "status_n": len(rtts),
         "next_p50": B.percentile(nexts, 50), "next_p99": B.percentile(nexts, 99),
         "next_max": max(nexts), "next_n": len(nexts), "idlers": wakeups}
    B.log(f"control {kind}: status p50 {r['status_p50'] * 1e6:.0f} us p99 {r['status_p99'] * 1e6:.0f} us; "
          f"next->changed p50 {r['next_p50'] * 1e3:.2f} ms p99 {r['next_p99'] * 1e3:.2f} ms ({wakeups})")
    return r


def main():
    B.require_env()
    B.prepare_mpd_database()
    reps, n_status, n_next = (1, 200, 10) if B.QUICK else (3, 2000, 40)
    runs = {"queueplayerd": [], "mpd": []}
    for rep in range(reps):
        order = ["queueplayerd", "mpd"] if rep % 2 == 0 else ["mpd", "queueplayerd"]
        for kind in order:
            runs[kind].append(measure(kind, n_status, n_next))
    out = {"other_clients": OTHER_CLIENTS, "status_requests": n_status, "next_requests": n_next}
    for kind, rs in runs.items():
        out[kind] = {key: B.summary([r[key] for r in rs])
                     for key in ("status_p50", "status_p99", "status_max", "next_p50", "next_p99", "next_max")}
        out[kind]["repetitions"] = rs
    B.write_fragment("control", out)


if __name__ == "__main__":
    main()
