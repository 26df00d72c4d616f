#!/usr/bin/python3
"""Rows 2, 3 and 4: real-time playback through a private PulseAudio null sink
(ALSA device pulsenull, ALSA's pulse plugin), 60 s measured per run.

Row 2, CPU: utime + stime of the whole process from /proc/PID/stat, sampled at the
start and the end of a 60 s window that opens 2 s after playback started, scaled
to CPU seconds per 60 s. Variants, alternating in a rotating order:
  queueplayerd-fg   queueplayerd --output alsa:pulsenull FILE (stdout a pipe: its
                    10 ms observer runs and prints nothing)
  queueplayerd-bg   the same after SIGUSR1: it prints `Background: t` every 10 ms
  mpg123            mpg123 -q -o alsa -a pulsenull FILE
  mpd               mpd decoding with libmpg123 (its libmad plugin, first for MP3, switched
                    off), ALSA output pulsenull, `add FILE`, `play`
  tick-floor        bench/tick-floor.c: a bare 10 ms absolute-deadline sleep loop, no
                    audio, no output; the floor of any 10 ms observer on this machine
  tick-floor-bg     the same loop printing `Background: t` after every wake-up (--print)
  queue-floor       bench/floor --tick (BENCH_QP_FLOOR): the same loop in a program linked as
                    queueplayerd is, entering a serial dispatch queue with `sync` at each
                    wake-up to call a block that reads the clock: the floor of a 10 ms
                    observer delivered on a queue in this binary (its `floor.tick` thread
                    is counted per tick, as queueplayerd's `qp.clock` is)
  The loops are references, not peers with targets; their windows are 30 s
  (FLOOR_DURATION), scaled to 60 s like the others, to keep the run under 30 minutes.
  While a loop is measured, `mpg123 -o alsa` plays the same file to the same sink
  in another process (its CPU is not counted): the loop's wake-ups then compete
  with the same audio work (PulseAudio, a decoder, the pulse plugin's thread) as
  queueplayerd's do, so its jitter in row 4 is a like-for-like reference.
  Also context switches per second, all threads: voluntary + non-voluntary from
  /proc/PID/task/*/status over the same window (a thread that ends inside the window
  is missed; the tick-floor loops beside mpg123 count the loop's process only), and
  both figures by thread name (/proc/PID/task/*/stat), reported under the table: where
  queueplayerd's CPU and wake-ups go (its clock thread, its render thread, libpulse's).
Row 3, peak RSS: VmHWM from /proc/PID/status at the end of the window (and
ru_maxrss from wait4 after SIGTERM, kept in the JSON).
  The floor under it (BENCH_QP_FLOOR, bench/floor): a program linked exactly as queueplayerd
  is that only listens on its socket, VmHWM after FLOOR_WINDOW s idle, once per repetition: what
  linking the daemon's code costs before it does anything. And the same program playing
  LONG44 to pulsenull itself (libmpg123 and alsa-lib called directly) for as long as the
  daemon's warm-up and window, once per repetition: the floor with the libraries that output
  loads (not a target, which issue 32 takes from the idle floor).
Row 4, the 10 ms observer, from queueplayerd-bg's `Background:` lines, each
timestamped by this process (time.monotonic) as it reads it from the pipe:
  interval error = |time between consecutive lines - 10 ms|: p50, p99, max;
  drift = how far the printed time moved from the wall clock over the window:
  median over the last second of (printed - wall) minus the same over the first
  second. The null sink consumes at the wall clock's rate, so audible frames /
  rate advance with wall time; this is the observer's drift against them (it
  cannot see a constant offset from the first audible frame).
  Idle: the queueplayerd-bg runs of row 2. Loaded: extra queueplayerd-bg runs
  while `stress-ng --cpu 1 --taskset 1` saturates the other core. tick-floor-bg's
  lines are read and measured the same way, idle and loaded: the jitter of a bare
  timer loop on this machine in the same run, beside ours.
"""

import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

VARIANTS = ["queueplayerd-fg", "queueplayerd-bg", "mpg123", "mpd", "tick-floor", "tick-floor-bg"]
# The references measured in FLOOR_DURATION windows, each beside mpg123.
LOOPS = ("tick-floor", "tick-floor-bg", "queue-floor")
FLOOR_DURATION = 30


class LineReader(threading.Thread):
    """Reads a pipe, timestamping each line with time.monotonic() when it is read."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd = fd
        self.lines = []

    def run(self):
        partial = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            t = time.monotonic()
            if not chunk:
                return
            partial += chunk
            *complete, partial = partial.split(b"\n")
            for line in complete:
                self.lines.append((t, line.decode("utf-8", "replace")))


def observer_stats(lines, t0, t1, keep_series):
    pts = []
    for t, text in lines:
        if text.startswith("Background: ") and t0 <= t <= t1:
            pts.append((t, float(text.split(": ", 1)[1])))
    if len(pts) < 200:
        return {"error": f"only {len(pts)} Background lines in the window"}
    intervals = [(b[0] - a[0]) * 1000 for a, b in zip(pts, pts[1:])]
    errors = [abs(x - 10.0) for x in intervals]
    steps = [round((b[1] - a[1]) * 100) for a, b in zip(pts, pts[1:])]
    resid = [v - t for t, v in pts]
    second = 100
    drift = B.median(resid[-second:]) - B.median(resid[:second])
    span = pts[-1][0] - pts[0][0]
    r = {"lines": len(pts), "expected_lines": round(span * 100) + 1, "window_s": span,
         "interval_error_p50_ms": B.percentile(errors, 50),
         "interval_error_p99_ms": B.percentile(errors, 99),
         "interval_error_max_ms": max(errors),
         "interval_mean_ms": sum(intervals) / len(intervals),
         "printed_steps_not_one_tick": sum(1 for s in steps if s != 1),
         "printed_steps_backwards": sum(1 for s in steps if s < 0),
         "drift_ms": drift * 1000}
    if keep_series:
        r["series"] = {"t": [round(p[0] - t0, 4) for p in pts[1:]],
                       "interval_ms": [round(x, 4) for x in intervals],
                       "residual_ms": [round((x - resid[0]) * 1000, 3) for x in resid[1:]]}
    return r


FLOOR_WINDOW = 5


def run_floor(playing_for=None):
    """Row 3's floor: the idle floor program's VmHWM once it accepts (and FLOOR_WINDOW s on);
    with `playing_for` (seconds), the floor playing LONG44 to pulsenull itself for that long."""
    sock = os.path.join(B.WORK, "run", "floor.sock")
    child = B.Child([B.QP_FLOOR, sock] + (["pulsenull", B.music(B.LONG44)] if playing_for else []), env=B.qp_env())
    try:
        B.wait_accepting(sock, child=child)
        time.sleep(playing_for or FLOOR_WINDOW)
        hwm = B.proc_status_kib(child.pid, "VmHWM")
        if not child.alive():
            raise RuntimeError("the floor program exited during its window")
    finally:
        child.stop()
    B.log(f"realtime floor{' playing' if playing_for else ''}: hwm {hwm} KiB")
    return {"variant": "floor-playing" if playing_for else "floor", "vm_hwm_kib": hwm}


def run(variant, duration, warmup, loaded=False, keep_series=False):
    stress = None
    if loaded:
        stress = B.Child(["stress-ng", "--cpu", "1", "--taskset", "1", "--quiet",
                          "--timeout", f"{int(duration + warmup + 30)}s"])
        time.sleep(1)
    reader = None
    beside = None
    mpd_sock = None
    try:
        if variant.startswith("queueplayerd"):
            sock = os.path.join(B.WORK, "run", "realtime.sock")
            child = B.Child([B.QP, "--output", "alsa:pulsenull", "--no-state", "--socket", sock, B.music(B.LONG44)],
                            env=B.qp_env(), stdout=subprocess.PIPE)
            reader = LineReader(child.popen.stdout.fileno())
            reader.start()
            B.wait_accepting(sock, child=child)  # its signal watchers are installed before it listens
            if variant.endswith("-bg"):
                os.kill(child.pid, signal.SIGUSR1)
        elif variant in LOOPS:
            beside = B.Child(["mpg123", "-q", "-o", "alsa", "-a", "pulsenull", B.music(B.LONG44)])
            if variant == "queue-floor":
                sock = os.path.join(B.WORK, "run", "queue-floor.sock")
                child = B.Child([B.QP_FLOOR, sock, "--tick"])
                B.wait_accepting(sock, child=child)
            else:
                printing = variant.endswith("-bg")
                child = B.Child([os.path.join(B.WORK, "tick-floor")] + (["--print"] if printing else []),
                                stdout=subprocess.PIPE if printing else None)
                if printing:
                    reader = LineReader(child.popen.stdout.fileno())
                    reader.start()
        elif variant == "mpg123":
            child = B.Child(["mpg123", "-q", "-o", "alsa", "-a", "pulsenull", B.music(B.LONG44)])
        else:
            child, mpd_sock = B.start_mpd("realtime", "pulsenull", mp3_decoder="mpg123")
            c = B.Client(mpd_sock)
            c.command("clear")
            c.command(f'add "{B.LONG44}"')
            c.command("play")
            c.close()
        time.sleep(warmup)
        pulse = int(os.environ.get("BENCH_PULSE_PID", "0"))
        cpu0, t0 = B.proc_cpu_seconds(child.pid), time.monotonic()
        ctxt0 = B.proc_context_switches(child.pid)
        threads0 = B.proc_threads(child.pid)
        pulse0 = B.proc_cpu_seconds(pulse) if pulse else None
        time.sleep(duration)
        cpu1, t1 = B.proc_cpu_seconds(child.pid), time.monotonic()
        ctxt1 = B.proc_context_switches(child.pid)
        threads1 = B.proc_threads(child.pid)
        pulse1 = B.proc_cpu_seconds(pulse) if pulse else None
        hwm = B.proc_status_kib(child.pid, "VmHWM")
        if mpd_sock:
            c = B.Client(mpd_sock)
            state = c.status().get("state")
            c.close()
            if state != "play":
                raise RuntimeError("mpd stopped playing during the window")
        if not child.alive():
            raise RuntimeError(f"{variant} exited during the window")
        child.stop()
    finally:
        if beside:
            beside.stop()
        if stress:
            stress.stop(signal.SIGINT)
    window = t1 - t0
    r = {"variant": variant, "loaded": loaded, "window_s": window,
         "cpu_s_per_60s": (cpu1 - cpu0) / window * 60, "vm_hwm_kib": hwm,
         "ctxt_per_s": B.context_switches_between(ctxt0, ctxt1) / window, "threads": len(ctxt1),
         "by_thread": B.threads_between(threads0, threads1, window),
         "ru_maxrss_kib": child.maxrss_kib(),
         "pulseaudio_cpu_s_per_60s": (pulse1 - pulse0) / window * 60 if pulse else None}
    if variant.endswith("-bg"):
        reader.join(2)
        r["observer"] = observer_stats(reader.lines, t0, t1, keep_series)
    obs = r.get("observer", {})
    B.log(f"realtime {variant}{' loaded' if loaded else ''}: cpu {r['cpu_s_per_60s']:.3f} s/60 s, "
          f"{r['ctxt_per_s']:.0f} context switches/s ({r['threads']} threads), hwm {hwm} KiB" + (f", interval error p50 {obs.get('interval_error_p50_ms', 0):.3f} "
                              f"p99 {obs.get('interval_error_p99_ms', 0):.3f} max "
                              f"{obs.get('interval_error_max_ms', 0):.3f} ms, drift {obs.get('drift_ms', 0):.2f} ms"
                              if obs else ""))
    return r


def main():
    B.require_env()
    B.prepare_mpd_database()
    if B.QUICK:
        duration, warmup, reps, loaded_reps = 8, 1, 1, 1
    else:
        duration, warmup, reps, loaded_reps = 60, 2, 3, 2
    floor_duration = min(duration, FLOOR_DURATION)
    variants = VARIANTS + (["queue-floor"] if B.QP_FLOOR else [])
    runs = {v: [] for v in variants}
    loaded, loaded_floor = [], []
    for rep in range(reps):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
        for v in order:
            runs[v].append(run(v, floor_duration if v in LOOPS else duration, warmup,
                               keep_series=(rep == 0)))
    floor = [run_floor() for _ in range(reps)] if B.QP_FLOOR else []
    # As long as the daemon's warm-up and window, so that both peaks cover as much playing.
    floor_playing = [run_floor(playing_for=warmup + duration) for _ in range(reps)] if B.QP_FLOOR else []
    for rep in range(loaded_reps):
        loaded.append(run("queueplayerd-bg", duration, warmup, loaded=True, keep_series=(rep == 0)))
    loaded_floor.append(run("tick-floor-bg", floor_duration, warmup, loaded=True))
    B.write_fragment("realtime", {"duration_s": duration, "warmup_s": warmup, "floor_duration_s": floor_duration,
                                  "runs": runs, "loaded": loaded, "loaded_floor": loaded_floor, "memory_floor": floor,
                                  "memory_floor_playing": floor_playing})


if __name__ == "__main__":
    main()
