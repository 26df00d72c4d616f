"""Shared helpers for queueplayerd's benchmark scripts (stdlib only).

Every figure comes from outside the measured process: /proc/PID accounting,
wait4() rusage, timestamps taken by this process. The environment comes from
bench/run (see bench/README.md):

  BENCH_WORK   scratch directory (music/, asoundrc, results/, ...)
  BENCH_QP     the queueplayerd binary (a release build)
  BENCH_QUICK  "1": short durations and few repetitions, for development
  ALSA_CONFIG_PATH  alsa.conf plus the asoundrc that defines devnull, capture,
                    fifo and pulsenull
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

WORK = os.environ.get("BENCH_WORK", "")
QP = os.environ.get("BENCH_QP", "")
QP_FLOOR = os.environ.get("BENCH_QP_FLOOR", "")  # row 3's floor (bench/floor); optional
QUICK = os.environ.get("BENCH_QUICK") == "1"
MUSIC = os.path.join(WORK, "music")
FRAGMENTS = os.path.join(WORK, "results")
CLK_TCK = os.sysconf("SC_CLK_TCK")

LONG44 = "long-44k-stereo.mp3"
LONG22 = "long-22k-mono.mp3"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def require_env():
    if not WORK or not QP:
        sys.exit("run this through bench/run (BENCH_WORK and BENCH_QP are not set)")
    os.makedirs(FRAGMENTS, exist_ok=True)


def write_fragment(name, data):
    """Saves one family's results as $BENCH_WORK/results/NAME.json for report.py."""
    path = os.path.join(FRAGMENTS, name + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
    log(f"wrote {path}")


# ---------------------------------------------------------------- statistics

def percentile(values, p):
    """Linear-interpolated percentile (p in 0..100) of a non-empty sequence."""
    xs = sorted(values)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values):
    return percentile(values, 50)


def summary(values):
    """Median, min, max and relative spread ((max - min) / median) of repeated runs."""
    xs = [v for v in values if v is not None]
    if not xs:
        return {"median": None, "min": None, "max": None, "n": 0, "spread": None, "runs": []}
    m = median(xs)
    return {"median": m, "min": min(xs), "max": max(xs), "n": len(xs),
            "spread": (max(xs) - min(xs)) / m if m else None, "runs": xs}


# ---------------------------------------------------------------- /proc

def proc_cpu_seconds(pid):
    """utime + stime of the whole process (all threads, live and exited), in seconds.

    The kernel scales these so that their sum is the precise runtime, in clock ticks.
    """
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def proc_context_switches(pid):
    """Context switches (voluntary + non-voluntary) per live thread, {tid: count}, from
    /proc/PID/task/*/status. The process's own status counts its main thread only."""
    return {tid: switches for tid, (_, _, switches) in proc_threads(pid).items()}


def proc_threads(pid):
    """Each live thread's name, CPU seconds (utime + stime) and context switches (voluntary +
    non-voluntary), {tid: (name, cpu_s, switches)}, from /proc/PID/task/*/{stat,status}."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                name, rest = f.read().split("(", 1)[1].rsplit(")", 1)
            fields = rest.split()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                switches = sum(int(line.split()[1]) for line in f
                               if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")))
        except FileNotFoundError:  # the thread ended while it was read
            continue
        threads[tid] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK, switches)
    return threads


def threads_between(before, after, seconds):
    """What the threads alive at the second proc_threads sample did since the first, summed by
    thread name: {name: {"cpu_s_per_60s": ..., "ctxt_per_s": ..., "threads": n}}."""
    by_name = {}
    for tid, (name, cpu, switches) in after.items():
        _, cpu0, switches0 = before.get(tid, (name, 0.0, 0))
        entry = by_name.setdefault(name, {"cpu_s_per_60s": 0.0, "ctxt_per_s": 0.0, "threads": 0})
        entry["cpu_s_per_60s"] += (cpu - cpu0) / seconds * 60
        entry["ctxt_per_s"] += (switches - switches0) / seconds
        entry["threads"] += 1
    return by_name


def context_switches_between(before, after):
    """Switches made between two proc_context_switches samples by the threads alive at the
    second (a thread started in between counts from its start; one that ended is missed)."""
    return sum(count - before.get(tid, 0) for tid, count in after.items())


def proc_status_kib(pid, field):
    """A field of /proc/PID/status in KiB, e.g. VmHWM (peak RSS) or VmRSS."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


# ---------------------------------------------------------------- processes

class Child:
    """A process we start and reap ourselves with wait4(), to get its rusage."""

    def __init__(self, argv, env=None, stdout=None, stderr=None, stdin=subprocess.DEVNULL):
        self.argv = argv
        self.rusage = None
        self.status = None
        self.launched = time.monotonic()
        self.popen = subprocess.Popen(argv, env=env, stdin=stdin,
                                      stdout=stdout if stdout is not None else subprocess.DEVNULL,
                                      stderr=stderr if stderr is not None else subprocess.DEVNULL)
        self.pid = self.popen.pid

    def alive(self):
        return self.status is None and self._reap(os.WNOHANG) is None

    def _reap(self, flags):
        if self.status is not None:
            return self.status
        pid, status, rusage = os.wait4(self.pid, flags)
        if pid == 0:
            return None
        self.status, self.rusage = status, rusage
        self.popen.returncode = os.waitstatus_to_exitcode(status)  # so Popen never reaps it again
        return status

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._reap(os.WNOHANG) is not None:
                return self.popen.returncode
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.005)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Signals the process and reaps it (SIGKILL after timeout); returns the exit code."""
        if self.status is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
            if self.wait(timeout) is None:
                log(f"{self.argv[0]} ignored signal {sig} for {timeout} s: killing it")
                os.kill(self.pid, signal.SIGKILL)
                self.wait()
        return self.popen.returncode

    def maxrss_kib(self):
        return self.rusage.ru_maxrss if self.rusage else None


_launch_count = [0]


def qp_env(extra=None):
    """Environment for queueplayerd: scratch runtime dir and a fresh state dir per launch."""
    _launch_count[0] += 1
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = os.path.join(WORK, "run")
    env["XDG_STATE_HOME"] = os.path.join(WORK, "state", f"{os.getpid()}-{_launch_count[0]}")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    if extra:
        env.update(extra)
    return env


def music(*parts):
    return os.path.join(MUSIC, *parts)


# ---------------------------------------------------------------- MPD protocol

class Client:
    """A minimal MPD protocol client over a Unix socket (the same script for both daemons)."""

    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.pos = 0   # where the next line starts in buf
        self.greeting = self.readline()
        if not self.greeting.startswith("OK MPD"):
            raise RuntimeError(f"unexpected greeting {self.greeting!r}")

    def readline(self):
        # Linear in the reply: each line is found from where the last ended. (Splitting the
        # rest of the buffer off per line copied up to 64 KiB per line, so a reply's parse
        # cost grew with the size of the pieces the daemon wrote it in: a daemon that wrote a
        # 300 KB search reply at once paid several times more client time than one that
        # wrote it in small pieces, and the round trip measured the client.)
        while True:
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                line = self.buf[self.pos:end]
                self.pos = end + 1
                return line.decode("utf-8", "replace")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf = self.buf[self.pos:] + chunk
            self.pos = 0

    def send(self, line):
        self.sock.sendall(line.encode() + b"\n")

    def reply(self):
        """Lines up to OK (returned without it); raises on ACK."""
        lines = []
        while True:
            line = self.readline()
            if line == "OK":
                return lines
            if line.startswith("ACK"):
                raise RuntimeError(line)
            lines.append(line)

    def command(self, line):
        self.send(line)
        return self.reply()

    def status(self):
        return dict(l.split(": ", 1) for l in self.command("status") if ": " in l)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def try_greeting(path):
    """True when a client connects and reads the greeting."""
    try:
        c = Client(path, timeout=5)
    except (FileNotFoundError, ConnectionRefusedError, ConnectionError, socket.timeout, OSError):
        return False
    c.close()
    return True


def wait_accepting(path, timeout=20, child=None, poll=0.0005):
    """Polls until the socket answers with a greeting; returns time.monotonic() then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if try_greeting(path):
            return time.monotonic()
        if child is not None and not child.alive():
            raise RuntimeError(f"{child.argv[0]} exited ({child.popen.returncode}) before accepting")
        time.sleep(poll)
    raise TimeoutError(f"{path} did not accept within {timeout} s")


# ---------------------------------------------------------------- mpd

MPD_DIR = os.path.join(WORK, "mpd")


def mpd_config(tag, device, music_directory=None, db_file=None, mp3_decoder="mad"):
    """Writes an mpd configuration with scratch paths and one ALSA output; returns (conf, socket).

    By default the music directory is MUSIC with its database in MPD_DIR/db. `mp3_decoder`:
    "mad" is mpd's default (its libmad plugin comes first, and is gapless); "mpg123" switches
    libmad off, so that mpd decodes with libmpg123 as queueplayerd and mpg123 do (the realtime
    family, where mpd's CPU is the peer: otherwise the row compares two decoders too).
    """
    if mp3_decoder not in ("mad", "mpg123"):
        raise ValueError(f"mp3_decoder: {mp3_decoder!r}")
    decoders = "" if mp3_decoder == "mad" else '''decoder {
    plugin      "mad"
    enabled     "no"
}
'''
    os.makedirs(os.path.join(MPD_DIR, "playlists"), exist_ok=True)
    os.makedirs(os.path.join(MPD_DIR, "home"), exist_ok=True)
    sock = os.path.join(MPD_DIR, f"{tag}.sock")
    conf = os.path.join(MPD_DIR, f"{tag}.conf")
    with open(conf, "w") as f:
        f.write(f"""# written by bench/lib/benchlib.py
music_directory    "{music_directory or MUSIC}"
db_file            "{db_file or os.path.join(MPD_DIR, 'db')}"
state_file         "{MPD_DIR}/{tag}.state"
log_file           "{MPD_DIR}/{tag}.log"
playlist_directory "{MPD_DIR}/playlists"
bind_to_address    "{sock}"
auto_update        "no"
zeroconf_enabled   "no"
max_connections    "200"
{decoders}audio_output {{
    type        "alsa"
    name        "{device}"
    device      "{device}"
    mixer_type  "none"
}}
""")
    return conf, sock


def mpd_env():
    env = dict(os.environ)
    env["HOME"] = os.path.join(MPD_DIR, "home")
    env["XDG_RUNTIME_DIR"] = os.path.join(WORK, "run")
    env["XDG_CONFIG_HOME"] = os.path.join(MPD_DIR, "home", ".config")
    env["XDG_CACHE_HOME"] = os.path.join(MPD_DIR, "home", ".cache")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    return env


def start_mpd(tag, device, music_directory=None, db_file=None, mp3_decoder="mad"):
    """Starts `mpd --no-daemon CONF` (no saved state) and waits until it accepts; returns (child, socket)."""
    conf, sock = mpd_config(tag, device, music_directory, db_file, mp3_decoder)
    for stale in (sock, os.path.join(MPD_DIR, f"{tag}.state")):
        if os.path.exists(stale):
            os.unlink(stale)
    child = Child(["mpd", "--no-daemon", conf], env=mpd_env())
    wait_accepting(sock, child=child)
    return child, sock


# queueplayerd's kept state directory (XDG_STATE_HOME) for launches that must not build the
# song database of MUSIC while they are measured: mpd's has its database built beforehand.
QP_STATE = os.path.join(WORK, "qp-state")


def prepare_qp_state():
    """Builds queueplayerd's song database of the music directory once, in QP_STATE (as
    prepare_mpd_database() does for mpd): later launches load it instead of scanning."""
    # Whatever queue an earlier, interrupted bench run left is not played.
    if os.path.exists(os.path.join(QP_STATE, "queueplayerd", "state.json")):
        os.unlink(os.path.join(QP_STATE, "queueplayerd", "state.json"))
    if os.path.exists(os.path.join(QP_STATE, "queueplayerd", "database.json")):
        return
    sock = os.path.join(WORK, "run", "qp-state.sock")
    child = Child([QP, "--music-directory", MUSIC, "--output", "alsa:fifo", "--socket", sock],
                  env=qp_env({"XDG_STATE_HOME": QP_STATE}))
    try:
        wait_accepting(sock, child=child)
        client = Client(sock)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stats = dict(l.split(": ", 1) for l in client.command("stats") if ": " in l)
            if int(stats.get("db_update", "0")) > 0:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("queueplayerd did not build its song database within 60 s")
        client.close()
    finally:
        child.stop()
    if not os.path.exists(os.path.join(QP_STATE, "queueplayerd", "database.json")):
        raise RuntimeError(f"queueplayerd kept no song database under {QP_STATE}")
    log("queueplayerd song database ready")


def prepare_mpd_database():
    """Builds mpd's database of the music directory once (later launches reuse it)."""
    if os.path.exists(os.path.join(MPD_DIR, "db")):
        return
    child, sock = start_mpd("update", "devnull")
    c = Client(sock)
    c.command("update")
    deadline = time.monotonic() + 60
    while "updating_db" in c.status() and time.monotonic() < deadline:
        time.sleep(0.05)
    c.close()
    child.stop()
    log("mpd database ready")


def wait_stopped(path, timeout):
    """Polls the player's status until state is stop (the queue has played); True if it did."""
    c = Client(path)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if c.status().get("state") == "stop":
                return True
            time.sleep(0.02)
        return False
    finally:
        c.close()
