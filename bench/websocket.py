#!/usr/bin/python3
"""Row 9: the WebSocket API's pushed time ticks (issue 31), during real-time playback through
the private PulseAudio null sink of rows 2-4 (ALSA device pulsenull), 60 s measured per run.

queueplayerd --output alsa:pulsenull --http 127.0.0.1:PORT FILE plays the 180 s file; the
receiving end is bench/lib/wsclients.py, a separate process with one asyncio event loop.
Variants, alternating in a rotating order:
  none         playback with the WebSocket server listening and no client
  ws-1x10ms    one connection with one subscription {"subscribe":"time","interval":0.01}
  ws-100x100ms 100 subscriptions at 0.1 s spread over 32 connections (4 hold 4, 28 hold 3):
               the daemon takes at most 32 WebSockets (the 33rd is closed with code 1013) and
               32 subscriptions per client, so 100 subscribers cannot be 100 connections
  tick-floor-bg  the reference: bench/tick-floor.c --print, a bare C loop sleeping to 10 ms
               deadlines and writing `Background: t` after each, into a pipe read by the same
               asyncio code (wsclients.py lines), while `mpg123 -o alsa` plays the same file to
               the same sink in another process (not counted), as in rows 2 and 4; 30 s windows
               (FLOOR_DURATION) scaled to 60 s
CPU: utime + stime of the daemon (of the loop, for the reference) from /proc/PID/stat over a
window opening 2 s after every subscription was answered, scaled to 60 s. The client's own CPU is
kept in the JSON, not counted.
Ticks (ws-1x10ms; and the reference's lines, the same way), those received inside the window:
  interval error = |time between consecutive receipts - 10 ms|: p50, p99, max;
  elapsed against the audible position: the null sink consumes at the wall clock's rate, so the
  audible position is (receive time + a constant) to within the delivery's jitter; the constant
  (where the first audible frame fell) cannot be seen from outside without a capture path, so it
  is taken as the median of (elapsed - receive time) over the window, and the error of a tick is
  |elapsed - receive time - that median|: p50, p99, max. It includes the tick's delivery
  jitter (clock thread -> NIO -> loopback TCP -> asyncio), which is what a client holding the
  tick sees. `status` is not the reference: it reads the same audible clock inside the daemon,
  so it would check the JSON path, not the position.
  drift = median over the last second of (elapsed - receive time) minus the same over the first:
  how far the pushed time moved against the wall clock (and so the null sink) over the window;
  elapsed steps that do not round to one interval are counted (`elapsed` is the audible time when
  the clock thread delivered the tick, so a tick more than 5 ms late reads as a step of 2 then 0).
  The daemon's CPU and context switches are also kept by thread name (/proc/PID/task/*), as in
  row 2: where the ticks' cost goes.
"""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = os.path.join(HERE, "lib", "wsclients.py")
VARIANTS = ["none", "ws-1x10ms", "ws-100x100ms", "tick-floor-bg"]
SETUPS = {"ws-1x10ms": (1, 1, 0.01), "ws-100x100ms": (32, 100, 0.1)}   # connections, subscriptions, interval
FLOOR_DURATION = 30


class NotTaken(RuntimeError):
    """A measurement that could not be taken (the family then exits non-zero)."""


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_tcp(port, child, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if not child.alive():
                raise NotTaken(f"queueplayerd exited ({child.popen.returncode}) before its HTTP port accepted")
            time.sleep(0.02)
    raise NotTaken(f"127.0.0.1:{port} did not accept within {timeout} s")


def wait_playing(sock, timeout=20):
    c = B.Client(sock)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if c.status().get("state") == "play":
                return
            time.sleep(0.02)
    finally:
        c.close()
    raise NotTaken("queueplayerd did not start playing")


def wait_ready(child, timeout=30):
    """Reads the helper's first line: `ready`, or `failed` (or nothing) when it could not subscribe."""
    fd = child.popen.stdout.fileno()
    ready, _, _ = select.select([fd], [], [], timeout)
    line = child.popen.stdout.readline().decode().strip() if ready else ""
    if line != "ready":
        raise NotTaken(f"wsclients.py did not get ready ({line or 'no answer in %d s' % timeout}): {log_tail()}")


def clients_log():
    """wsclients.py's stderr, appended to results/wsclients.log in the scratch directory."""
    return open(os.path.join(B.WORK, "results", "wsclients.log"), "ab")


def log_tail():
    try:
        with open(os.path.join(B.WORK, "results", "wsclients.log"), errors="replace") as f:
            return f.read()[-600:].strip()
    except OSError:
        return ""


def stop_clients(clients, out):
    """SIGTERM: the helper writes OUT and exits; returns what it wrote."""
    code = clients.stop(signal.SIGTERM)
    if code != 0 or not os.path.exists(out):
        raise NotTaken(f"wsclients.py ended with {code} and no results: {log_tail()}")
    with open(out) as f:
        doc = json.load(f)
    os.unlink(out)
    return doc


def tick_stats(ticks, t0, t1, interval):
    pts = [p for p in ticks if t0 <= p[0] <= t1]
    expected = round((t1 - t0) / interval)
    if len(pts) < 0.5 * expected or len(pts) < 50:
        return {"error": f"only {len(pts)} ticks of about {expected} in the window"}
    ms = interval * 1000
    gaps = [(b[0] - a[0]) * 1000 for a, b in zip(pts, pts[1:])]
    errors = [abs(g - ms) for g in gaps]
    offsets = [p[1] - p[0] for p in pts]
    mid = B.median(offsets)
    deviation = [abs(o - mid) * 1000 for o in offsets]
    steps = [round((b[1] - a[1]) / interval) for a, b in zip(pts, pts[1:])]
    per_second = round(1 / interval)
    drift = B.median(offsets[-per_second:]) - B.median(offsets[:per_second])
    return {"ticks": len(pts), "expected_ticks": expected, "window_s": pts[-1][0] - pts[0][0],
            "interval_error_p50_ms": B.percentile(errors, 50),
            "interval_error_p99_ms": B.percentile(errors, 99),
            "interval_error_max_ms": max(errors),
            "interval_mean_ms": sum(gaps) / len(gaps),
            "elapsed_error_p50_ms": B.percentile(deviation, 50),
            "elapsed_error_p99_ms": B.percentile(deviation, 99),
            "elapsed_error_max_ms": max(deviation),
            "drift_ms": drift * 1000,
            "elapsed_steps_not_one_interval": sum(1 for s in steps if s != 1),
            "elapsed_steps_other": {str(k): steps.count(k) for k in sorted(set(steps)) if k != 1},
            "songids": sorted({p[2] for p in pts if p[2] is not None})}


def run(variant, duration, warmup):
    out = os.path.join(B.WORK, "results", f"wsclients-{os.getpid()}.json")
    clients = beside = child = received = None
    sock = None
    try:
        if variant == "tick-floor-bg":
            beside = B.Child(["mpg123", "-q", "-o", "alsa", "-a", "pulsenull", B.music(B.LONG44)])
            child = B.Child([os.path.join(B.WORK, "tick-floor"), "--print"], stdout=subprocess.PIPE)
            with clients_log() as err:
                clients = B.Child(["/usr/bin/python3", CLIENTS, out, "lines"], stdin=child.popen.stdout,
                                  stdout=subprocess.PIPE, stderr=err)
            child.popen.stdout.close()   # the helper holds the read end now
            interval = 0.01
        else:
            port = free_port()
            sock = os.path.join(B.WORK, "run", "websocket.sock")
            child = B.Child([B.QP, "--output", "alsa:pulsenull", "--no-state", "--socket", sock,
                             "--http", f"127.0.0.1:{port}", B.music(B.LONG44)], env=B.qp_env())
            B.wait_accepting(sock, child=child)
            wait_tcp(port, child)
            wait_playing(sock)
            if variant in SETUPS:
                connections, subscriptions, interval = SETUPS[variant]
                with clients_log() as err:
                    clients = B.Child(["/usr/bin/python3", CLIENTS, out, "ws", f"ws://127.0.0.1:{port}/ws",
                                       str(connections), str(subscriptions), str(interval)],
                                      stdout=subprocess.PIPE, stderr=err)
        if clients:
            wait_ready(clients)
        time.sleep(warmup)
        cpu0, t0 = B.proc_cpu_seconds(child.pid), time.monotonic()
        threads0 = B.proc_threads(child.pid)
        ccpu0 = B.proc_cpu_seconds(clients.pid) if clients else None
        time.sleep(duration)
        cpu1, t1 = B.proc_cpu_seconds(child.pid), time.monotonic()
        threads1 = B.proc_threads(child.pid)
        ccpu1 = B.proc_cpu_seconds(clients.pid) if clients else None
        hwm = B.proc_status_kib(child.pid, "VmHWM")
        if not child.alive():
            raise NotTaken(f"{variant}: the measured process exited during the window")
        if sock:
            c = B.Client(sock)
            state = c.status().get("state")
            c.close()
            if state != "play":
                raise NotTaken(f"{variant}: queueplayerd was no longer playing at the end of the window ({state})")
        received = stop_clients(clients, out) if clients else None
        clients = None
    finally:
        for p in (clients, child, beside):
            if p:
                p.stop()
        if os.path.exists(out):
            os.unlink(out)
    window = t1 - t0
    r = {"variant": variant, "window_s": window, "cpu_s_per_60s": (cpu1 - cpu0) / window * 60, "vm_hwm_kib": hwm,
         "by_thread": B.threads_between(threads0, threads1, window)}
    if received is not None:
        r["client_cpu_s_per_60s"] = (ccpu1 - ccpu0) / window * 60
        if received["closed"] or received["errors"]:
            raise NotTaken(f"{variant}: connections closed {received['closed'][:3]}, errors {received['errors'][:3]}")
        r["other_messages"] = received["other_messages"]
        if "ticks" in received:
            r["ticks"] = tick_stats(received["ticks"], t0, t1, interval)
            if "error" in r["ticks"]:
                raise NotTaken(f"{variant}: {r['ticks']['error']}")
        else:
            inside = sum(1 for t in received["times"] if t0 <= t <= t1)
            r["ticks_in_window"] = inside
            r["expected_ticks"] = round(window / interval) * SETUPS[variant][1]
    tk = r.get("ticks", {})
    B.log(f"websocket {variant}: cpu {r['cpu_s_per_60s']:.3f} s/60 s"
          + (f", client {r['client_cpu_s_per_60s']:.3f} s/60 s" if "client_cpu_s_per_60s" in r else "")
          + (f", {tk['ticks']} of {tk['expected_ticks']} ticks, interval error p50 {tk['interval_error_p50_ms']:.3f} "
             f"p99 {tk['interval_error_p99_ms']:.3f} max {tk['interval_error_max_ms']:.3f} ms, elapsed error p50 "
             f"{tk['elapsed_error_p50_ms']:.3f} p99 {tk['elapsed_error_p99_ms']:.3f} max {tk['elapsed_error_max_ms']:.3f} ms, "
             f"drift {tk['drift_ms']:.2f} ms" if tk else "")
          + (f", {r['ticks_in_window']} of {r['expected_ticks']} ticks" if "ticks_in_window" in r else ""))
    return r


def main():
    B.require_env()
    if B.QUICK:
        duration, warmup, reps = 8, 1, 1
    else:
        duration, warmup, reps = 60, 2, 3
    floor_duration = min(duration, FLOOR_DURATION)
    runs = {v: [] for v in VARIANTS}
    failures = []
    for rep in range(reps):
        order = VARIANTS[rep % len(VARIANTS):] + VARIANTS[:rep % len(VARIANTS)]
        for v in order:
            try:
                runs[v].append(run(v, floor_duration if v.startswith("tick-floor") else duration, warmup))
            except (NotTaken, OSError, TimeoutError, RuntimeError) as error:
                B.log(f"websocket {v}: NOT TAKEN: {error}")
                failures.append(f"{v}: {error}")
    B.write_fragment("websocket", {"duration_s": duration, "warmup_s": warmup, "floor_duration_s": floor_duration,
                                   "setups": {k: {"connections": c, "subscriptions": s, "interval_s": i}
                                              for k, (c, s, i) in SETUPS.items()},
                                   "runs": runs, "not_taken": failures})
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
