#!/usr/bin/python3
"""Row 12: the playback rate.

CPU per minute of paced playback of the 180 s 44.1 kHz stereo file (`long-44k-stereo.mp3`) to a
null output at 1.5x and 2.0x, the pitch kept (queueplayerd's `timeDomain`, libsonic), against
mpv playing the same file with `--speed` at the same rates (its default `scaletempo2` keeps the
pitch) to its own null output (`--ao=null --no-video`), in the same run. Both null outputs
consume in real time. Each player is also run at 1.0x, the reference for queueplayerd's peak
RSS (target: at most 2 MiB above playback at 1.0x) and, for mpv, what its stretching adds.

queueplayerd: `--output null --no-state --rate R FILE` (the setting, as a user gives it);
`status` must say `rate: R` and `state: play` at the end of the window. mpv: `--no-config
--really-quiet --ao=null --no-video --speed=R FILE`. CPU: utime+stime from /proc/PID/stat over
a window opening 2 s after the start, scaled to 60 s; peak RSS: VmHWM at the end of the window.
The variants run in a rotating order, BENCH_RATE_REPEATS times (default 3; 1 with --quick),
BENCH_RATE_SECONDS each (default 20; 5 with --quick).
"""

import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

SECONDS = float(os.environ.get("BENCH_RATE_SECONDS", "5" if B.QUICK else "20"))
REPEATS = int(os.environ.get("BENCH_RATE_REPEATS", "1" if B.QUICK else "3"))
RATES = (1.0, 1.5, 2.0)
SETTLE = 2.0
MPV = shutil.which("mpv") or "/usr/bin/mpv"


def window(child, check=None):
    """CPU seconds per 60 s over a window opening SETTLE s after the start, and VmHWM (KiB) at its end."""
    time.sleep(SETTLE)
    c0, t0 = B.proc_cpu_seconds(child.pid), time.monotonic()
    time.sleep(SECONDS)
    c1, t1 = B.proc_cpu_seconds(child.pid), time.monotonic()
    peak = B.proc_status_kib(child.pid, "VmHWM")
    if check:
        check()
    if not child.alive():
        raise RuntimeError(f"{child.argv[0]} ended during the window")
    return (c1 - c0) / (t1 - t0) * 60, peak


def queueplayerd(rate):
    sock = os.path.join(B.WORK, "run", "rate.sock")
    child = B.Child([B.QP, "--output", "null", "--no-state", "--no-zeroconf", "--socket", sock, "--rate", str(rate),
                     B.music(B.LONG44)], env=B.qp_env())
    try:
        B.wait_accepting(sock, child=child)

        def check():
            status = B.Client(sock).status()
            if status.get("state") != "play" or float(status.get("rate", "0")) != rate:
                raise RuntimeError(f"queueplayerd at {rate}: not playing at that rate: {status}")
        return window(child, check)
    finally:
        child.stop()


def mpv(rate):
    child = B.Child([MPV, "--no-config", "--really-quiet", "--ao=null", "--no-video", f"--speed={rate}",
                     B.music(B.LONG44)])
    try:
        return window(child)
    finally:
        child.stop()


def main():
    B.require_env()
    if not os.path.exists(MPV):
        sys.exit("mpv is not installed (scripts/bootstrap --bench)")
    variants = [(name, rate) for rate in RATES for name in ("queueplayerd", "mpv")]
    runs = {f"{name} {rate}": {"cpu": [], "hwm_kib": []} for name, rate in variants}
    for repeat in range(REPEATS):
        shift = repeat % len(variants)
        for name, rate in variants[shift:] + variants[:shift]:
            B.log(f"rate: {name} at {rate}x, repetition {repeat + 1} of {REPEATS}")
            cpu, peak = (queueplayerd if name == "queueplayerd" else mpv)(rate)
            runs[f"{name} {rate}"]["cpu"].append(cpu)
            runs[f"{name} {rate}"]["hwm_kib"].append(peak)
    B.write_fragment("rate", {
        "window_s": SECONDS, "repeats": REPEATS, "file": B.LONG44,
        "mpv": os.popen(f"{MPV} --version").read().splitlines()[0],
        "variants": {key: {"cpu_s_per_min": B.summary(value["cpu"]), "hwm_kib": B.summary(value["hwm_kib"])}
                     for key, value in runs.items()},
    })


if __name__ == "__main__":
    main()
