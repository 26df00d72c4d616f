#!/usr/bin/python3
"""Row 7: start-up.

launch -> control socket accepting: from just before fork/exec to the first time
a client connects and reads the `OK MPD` greeting (polled every 0.5 ms).
  queueplayerd --music-directory MUSIC --output alsa:devnull --socket S   (nothing queued;
                         its state directory kept, with the song database built beforehand)
  mpd --no-daemon CONF  (the same music directory, its database already built,
                         no saved state, ALSA output devnull)

launch -> first audio frame written: from just before fork/exec to the first bytes
that come out of alsa-lib's file plugin into a FIFO that this process reads
(the plugin hands data on in blocks, so this includes its buffering, alike for
both players).
  queueplayerd --output alsa:fifo FILE
  mpd (ALSA output fifo): launched, and as soon as it accepts a client sends
      `add FILE` and `play` (mpd cannot be told on its command line to play)
  mpg123 -o alsa -a fifo FILE  (for reference: no daemon, no socket)
  queueplayerd-floor S fifo FILE  (BENCH_QP_FLOOR, bench/floor: a program linked as queueplayerd
                         is that plays FILE with libmpg123 and alsa-lib called directly, as
                         mpg123 does: what the binary costs before any of the daemon's work)

The runs alternate between the players; medians over the runs.
"""

import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

FIFO = os.path.join(B.WORK, "fifo")


def accepting_qp(i):
    sock = os.path.join(B.WORK, "run", f"startup-{i}.sock")
    t0 = time.monotonic()
    # The database built beforehand, as mpd's is: with --no-state the daemon would scan MUSIC
    # afresh at each launch, on the other core, while it is measured.
    c = B.Child([B.QP, "--music-directory", B.MUSIC, "--output", "alsa:devnull", "--socket", sock],
                env=B.qp_env({"XDG_STATE_HOME": B.QP_STATE}))
    t1 = B.wait_accepting(sock, child=c)
    c.stop()
    return t1 - t0


def accepting_mpd(i):
    conf, sock = B.mpd_config("startup", "devnull")
    if os.path.exists(sock):
        os.unlink(sock)
    t0 = time.monotonic()
    c = B.Child(["mpd", "--no-daemon", conf], env=B.mpd_env())
    t1 = B.wait_accepting(sock, child=c)
    c.stop()
    return t1 - t0


def launch_mpd_and_play():
    conf, sock = B.mpd_config("first", "fifo")
    if os.path.exists(sock):
        os.unlink(sock)
    c = B.Child(["mpd", "--no-daemon", conf], env=B.mpd_env())
    B.wait_accepting(sock, child=c)
    cl = B.Client(sock)
    cl.command(f'add "{B.LONG44}"')
    cl.command("play")
    cl.close()
    return c


def first_frame(launch):
    """Seconds from launch() being called to the first audio bytes in the FIFO."""
    if os.path.exists(FIFO):
        os.unlink(FIFO)
    os.mkfifo(FIFO)
    fd = os.open(FIFO, os.O_RDONLY | os.O_NONBLOCK)
    try:
        t0 = time.monotonic()
        c = launch()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = t0 + 20
        t1 = None
        while time.monotonic() < deadline:
            if poller.poll(50):
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if data:
                    t1 = time.monotonic()
                    break
            if not c.alive():
                break
        c.stop(signal.SIGKILL)
        if t1 is None:
            raise RuntimeError(f"{c.argv[0]}: no audio within 20 s (exit {c.popen.returncode})")
        return t1 - t0
    finally:
        os.close(fd)


def main():
    B.require_env()
    B.prepare_mpd_database()
    B.prepare_qp_state()
    reps = 3 if B.QUICK else 15
    song = B.music(B.LONG44)
    runs = {"queueplayerd_accepting": [], "mpd_accepting": [],
            "queueplayerd_first_frame": [], "mpd_first_frame": [], "mpg123_first_frame": []}
    if B.QP_FLOOR:
        runs["floor_first_frame"] = []
    for i in range(reps):
        runs["queueplayerd_accepting"].append(accepting_qp(i))
        runs["mpd_accepting"].append(accepting_mpd(i))
        runs["queueplayerd_first_frame"].append(first_frame(lambda: B.Child(
            [B.QP, "--output", "alsa:fifo", "--no-state", "--socket", os.path.join(B.WORK, "run", "first.sock"), song],
            env=B.qp_env())))
        runs["mpd_first_frame"].append(first_frame(launch_mpd_and_play))
        runs["mpg123_first_frame"].append(first_frame(
            lambda: B.Child(["mpg123", "-q", "-o", "alsa", "-a", "fifo", song])))
        if B.QP_FLOOR:
            runs["floor_first_frame"].append(first_frame(lambda: B.Child(
                [B.QP_FLOOR, os.path.join(B.WORK, "run", "floor-first.sock"), "fifo", song], env=B.qp_env())))
        B.log("startup run %d: %s" % (i + 1, ", ".join(f"{k} {v[-1] * 1000:.1f} ms" for k, v in runs.items())))
    B.write_fragment("startup", {k: B.summary(v) for k, v in runs.items()})


if __name__ == "__main__":
    main()
