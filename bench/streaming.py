#!/usr/bin/python3
"""Row 10: streaming (issue 29).

play -> first audio frame, a 128 kbit/s live stream over loopback. Each daemon runs with
nothing queued and its ALSA output into the file plugin's FIFO (`fifo`, as row 7); a client
sends `clear` and `add URL`, the FIFO is drained, then the clock starts as `play` is sent and
stops at the first audio bytes out of the FIFO. queueplayerd against mpd (its curl input); the
runs alternate, after one of each not counted; medians. Both daemons start idle, with the song
database of the music directory already built: mpd's by B.prepare_mpd_database(),
queueplayerd's by B.prepare_qp_state(), in a state directory every run reuses. (With
`--no-state` queueplayerd built the database afresh at each start, in the background, while
the stream started: on this 2-core machine the scan took CPU icecast2 needed, and the server's
share of the figure grew by about 30 ms.)

Two stations. The target is measured on PacedStation, the bench's own ICY server, which
answers at once and sends icecast2's burst: the figure is the players' own. The same is then
measured through icecast2 (fed by ffmpeg): there icecast2 2.4 answers a new listener from its
polling loops, 100-150 ms to the headers and about 180 ms more to the audio, in steps of a
frame or two, so about 95 % of the figure is the server's, and the two medians differ by chance
by more than the players' own share; reported beside, for what a listener waits in practice.

CPU per minute while streaming against the same file played locally: one 128 kbit/s file
(ffmpeg, libmp3lame CBR), served by nginx on 127.0.0.1 and given as a local path, played to
the PulseAudio null sink of row 2 (`pulsenull`, real time); utime+stime over a window opening
3 s after the start, scaled to 60 s. The two alternate.

Peak RSS growth over a live stream: queueplayerd plays the icecast stream to `pulsenull`
while the title changes every 10 s (icecast's admin metadata update); growth = VmHWM at the
end - VmRSS 10 s after the start. The issue asks for 30 minutes: BENCH_STREAM_RSS_SECONDS
sets the duration (default 1800; 60 with --quick). BENCH_STREAM_CPU_SECONDS sets the CPU
window (default 60; 15 with --quick).
"""

import base64
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

DIR = os.path.join(B.WORK, "streaming")
FIFO = os.path.join(B.WORK, "fifo")
RSS_SECONDS = float(os.environ.get("BENCH_STREAM_RSS_SECONDS", "60" if B.QUICK else "1800"))
CPU_SECONDS = float(os.environ.get("BENCH_STREAM_CPU_SECONDS", "15" if B.QUICK else "60"))
TITLE_EVERY = 10.0
KEEP_OPEN = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, auth=None, timeout=2):
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


class Icecast:
    """icecast2 with one live MP3 mount fed by ffmpeg (what tests/IcecastServer.swift runs)."""

    def __init__(self):
        self.dir = os.path.join(DIR, "icecast")
        os.makedirs(os.path.join(self.dir, "log"), exist_ok=True)
        if os.getuid() == 0:  # icecast drops to nobody, who must reach its directory
            for path in (B.WORK, DIR, self.dir):
                os.chmod(path, os.stat(path).st_mode | 0o755)
            os.chmod(os.path.join(self.dir, "log"), 0o777)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/live.mp3"
        owner = ("<security><chroot>0</chroot><changeowner><user>nobody</user><group>nogroup</group>"
                 "</changeowner></security>") if os.getuid() == 0 else ""
        conf = os.path.join(self.dir, "icecast.xml")
        with open(conf, "w") as f:
            f.write(f"""<icecast><location>bench</location><admin>bench@localhost</admin>
<limits><clients>16</clients><sources>2</sources><burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
<authentication><source-password>benchsource</source-password><admin-user>admin</admin-user><admin-password>benchadmin</admin-password></authentication>
<hostname>127.0.0.1</hostname><listen-socket><port>{self.port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
<paths><basedir>{self.dir}</basedir><logdir>{self.dir}/log</logdir><webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
<logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>2</loglevel></logging>{owner}</icecast>
""")
        self.server = B.Child(["icecast2", "-c", conf])
        self._wait(lambda: self._status() is not None, "icecast2 answering")
        self.source = B.Child(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi",
                               "-i", "sine=frequency=440:sample_rate=44100", "-ac", "2", "-c:a", "libmp3lame",
                               "-b:a", "128k", "-content_type", "audio/mpeg", "-ice_name", "bench radio", "-f", "mp3",
                               f"icecast://source:benchsource@127.0.0.1:{self.port}/live.mp3"])
        self._wait(self._mounted, "the mount listed")

    def _status(self):
        try:
            return json.loads(http_get(f"http://127.0.0.1:{self.port}/status-json.xsl"))["icestats"]
        except (OSError, ValueError, KeyError):
            return None

    def _mounted(self):
        source = (self._status() or {}).get("source")
        sources = source if isinstance(source, list) else [source] if source else []
        return any(s.get("listenurl", "").endswith("/live.mp3") for s in sources)

    def _wait(self, condition, what, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.02)
        raise RuntimeError(f"icecast: no {what} within {timeout} s")

    def set_title(self, title):
        query = urllib.parse.urlencode({"mount": "/live.mp3", "mode": "updinfo", "song": title})
        http_get(f"http://127.0.0.1:{self.port}/admin/metadata?{query}", auth="admin:benchadmin")

    def stop(self):
        self.source.stop()
        self.server.stop()


class PacedStation:
    """A live MP3 stream served at once: the bench's own ICY server on 127.0.0.1.

    icecast2 (above) answers a new listener from polling loops (100-150 ms to the headers,
    about 180 ms more to the audio), so most of a first-frame figure through it is the server's,
    in steps of a frame or two, and two players' medians differ by chance by more than their
    own share. This one answers as soon as the request is read, the way icecast2 would with no
    wait: `HTTP/1.0 200 OK` with icy-name (and icy-metaint 16000 with a StreamTitle when asked
    for `Icy-MetaData: 1`), then a burst of the last 64 KiB up to the live edge (icecast2's
    burst-on-connect, the bench's burst-size), then the frames in real time. The audio is a
    CBR 128 kbit/s tone made once by ffmpeg, cut at frame boundaries and looped; the live edge
    is the frame due at the wall time since the server started. Each listener has a thread.
    """

    METAINT = 16000
    BURST = 65535

    def __init__(self):
        source = os.path.join(DIR, "paced-source.mp3")
        if not os.path.exists(source):
            subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
                            "-i", "sine=frequency=550:sample_rate=44100:duration=120", "-ac", "2",
                            "-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0",
                            source], check=True)
        with open(source, "rb") as f:
            data = f.read()
        self.frames = self.split_frames(data)
        self.frame_seconds = 1152 / 44100
        # On the air for 10 s already: the first listener gets a full burst too.
        self.started = time.monotonic() - 10
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/live.mp3"
        self.stopped = threading.Event()
        threading.Thread(target=self.accept_loop, daemon=True).start()

    @staticmethod
    def split_frames(data):
        """MPEG-1 layer III frames of `data` (no tags: ffmpeg wrote none), as byte strings."""
        bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        frames, at = [], 0
        while at + 4 <= len(data):
            header = int.from_bytes(data[at:at + 4], "big")
            if header >> 21 != 0x7FF or (header >> 19) & 3 != 3 or (header >> 17) & 3 != 1:
                raise RuntimeError(f"paced station: no MPEG-1 layer III frame at byte {at}")
            size = 144000 * bitrates[(header >> 12) & 15] // 44100 + ((header >> 9) & 1)
            frames.append(data[at:at + size])
            at += size
        return frames

    def frame_due(self):
        return int((time.monotonic() - self.started) / self.frame_seconds)

    def accept_loop(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            headers = []
            with conn.makefile("rb") as request:
                for line in iter(request.readline, b""):
                    if line.strip() == b"":
                        break
                    headers.append(line.strip().lower())
                else:
                    return  # the listener left before the end of its request
            metadata = b"icy-metadata: 1" in headers
            head = "HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nicy-name:bench paced radio\r\n"
            if metadata:
                head += f"icy-metaint:{self.METAINT}\r\n"
            conn.sendall((head + "\r\n").encode())
            # The burst: whole frames, the last 64 KiB of them up to the live edge.
            edge = self.frame_due()
            first, size = edge, 0
            while first > 0 and size + len(self.frames[(first - 1) % len(self.frames)]) <= self.BURST:
                first -= 1
                size += len(self.frames[first % len(self.frames)])
            title = b"StreamTitle='paced tone';"
            title_block = bytes([(len(title) + 15) // 16]) + title.ljust((len(title) + 15) // 16 * 16, b"\0")
            sent_titles = [False]
            until_meta = [self.METAINT]

            def send(audio):
                if not metadata:
                    conn.sendall(audio)
                    return
                out = bytearray()
                while audio:
                    take = min(len(audio), until_meta[0])
                    out += audio[:take]
                    audio = audio[take:]
                    until_meta[0] -= take
                    if until_meta[0] == 0:
                        out += title_block if not sent_titles[0] else b"\0"
                        sent_titles[0] = True
                        until_meta[0] = self.METAINT
                conn.sendall(bytes(out))

            next_frame = first
            while not self.stopped.is_set():
                due = self.frame_due()
                if next_frame <= due:
                    send(b"".join(self.frames[n % len(self.frames)] for n in range(next_frame, due + 1)))
                    next_frame = due + 1
                # The next frame's time, on the server's clock.
                wait = self.started + next_frame * self.frame_seconds - time.monotonic()
                if wait > 0:
                    self.stopped.wait(wait)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.stopped.set()
        self.listener.close()


class Nginx:
    """nginx serving DIR/www on 127.0.0.1 (ranges and all, its defaults)."""

    def __init__(self):
        self.dir = os.path.join(DIR, "nginx")
        for sub in ("www", "logs", "tmp"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        user = "user root;" if os.getuid() == 0 else ""
        with open(conf, "w") as f:
            f.write(f"""daemon off; master_process on; worker_processes 1; {user}
pid {self.dir}/nginx.pid; error_log {self.dir}/logs/error.log;
events {{ worker_connections 64; }}
http {{ access_log off; client_body_temp_path {self.dir}/tmp/body; proxy_temp_path {self.dir}/tmp/proxy;
  fastcgi_temp_path {self.dir}/tmp/fastcgi; uwsgi_temp_path {self.dir}/tmp/uwsgi; scgi_temp_path {self.dir}/tmp/scgi;
  types {{ audio/mpeg mp3; }}
  server {{ listen 127.0.0.1:{self.port}; root {self.dir}/www; }} }}
""")
        self.child = B.Child(["/usr/sbin/nginx", "-p", self.dir + "/", "-c", conf])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("nginx did not start")

    def serve(self, path):
        shutil.copy(path, os.path.join(self.dir, "www", os.path.basename(path)))
        return f"http://127.0.0.1:{self.port}/{os.path.basename(path)}"

    def stop(self):
        self.child.stop()


def drain(fd):
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except BlockingIOError:
            return


def open_fifo():
    """A fresh FIFO, opened for reading (non-blocking) before the player opens its output."""
    if os.path.exists(FIFO):
        os.unlink(FIFO)
    os.mkfifo(FIFO)
    fd = os.open(FIFO, os.O_RDONLY | os.O_NONBLOCK)
    # A write end of our own, never written: without it the FIFO reports a hang-up (and poll
    # returns at once) whenever the player has its output closed.
    KEEP_OPEN.append(os.open(FIFO, os.O_WRONLY | os.O_NONBLOCK))
    return fd


class Drainer:
    """Reads the FIFO in the background, so that no player blocks writing into it, until closed."""
    running = []

    def __init__(self, fd):
        self.fd = fd
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        Drainer.running.append(self)

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self.stopped.is_set():
            if poller.poll(50):
                try:
                    os.read(self.fd, 65536)
                except BlockingIOError:
                    pass

    @classmethod
    def stop_all(cls):
        while cls.running:
            drainer = cls.running.pop()
            drainer.stopped.set()
            drainer.thread.join()


def close_fifo(fd):
    Drainer.stop_all()
    os.close(fd)
    while KEEP_OPEN:
        os.close(KEEP_OPEN.pop())


def play_to_first_frame(fd, sock, url):
    """`add URL`, then seconds from sending `play` to the first bytes out of the FIFO."""
    client = B.Client(sock)
    client.command("clear")  # a kept state (queueplayerd's, prepare_qp_state) starts empty
    client.command(f'add "{url}"')
    drain(fd)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    t0 = time.monotonic()
    client.command("play")
    deadline = t0 + 20
    while time.monotonic() < deadline:
        if poller.poll(20):
            try:
                if os.read(fd, 65536):
                    t1 = time.monotonic()
                    # The player's output writes block on a full FIFO: read on until it is gone.
                    Drainer(fd)
                    client.command("stop")
                    client.command("clear")
                    client.close()
                    return t1 - t0
            except BlockingIOError:
                continue
    raise RuntimeError(f"no audio within 20 s of play ({url})")


def first_frame_qp(url, i):
    sock = os.path.join(B.WORK, "run", f"stream-first-{i}.sock")
    fd = open_fifo()
    child = B.Child([B.QP, "--music-directory", B.MUSIC, "--output", "alsa:fifo", "--socket", sock],
                    env=B.qp_env({"XDG_STATE_HOME": B.QP_STATE}))
    try:
        B.wait_accepting(sock, child=child)
        return play_to_first_frame(fd, sock, url)
    finally:
        child.stop()
        close_fifo(fd)


def first_frame_mpd(url):
    fd = open_fifo()
    child, sock = B.start_mpd("stream-first", "fifo")
    try:
        return play_to_first_frame(fd, sock, url)
    finally:
        child.stop()
        close_fifo(fd)


def cpu_per_minute(target):
    """queueplayerd playing `target` (a path or a URL) to pulsenull: CPU seconds per 60 s."""
    sock = os.path.join(B.WORK, "run", "stream-cpu.sock")
    child = B.Child([B.QP, "--output", "alsa:pulsenull", "--no-state", "--socket", sock, target], env=B.qp_env())
    try:
        B.wait_accepting(sock, child=child)
        time.sleep(3)  # the window opens once playback has settled
        c0, t0 = B.proc_cpu_seconds(child.pid), time.monotonic()
        time.sleep(CPU_SECONDS)
        c1, t1 = B.proc_cpu_seconds(child.pid), time.monotonic()
        state = B.Client(sock).status()
        if state.get("state") != "play":
            raise RuntimeError(f"{target}: not playing at the end of the window: {state}")
        return (c1 - c0) / (t1 - t0) * 60
    finally:
        child.stop()


def rss_growth(station):
    sock = os.path.join(B.WORK, "run", "stream-rss.sock")
    child = B.Child([B.QP, "--output", "alsa:pulsenull", "--no-state", "--socket", sock, station.url], env=B.qp_env())
    try:
        B.wait_accepting(sock, child=child)
        time.sleep(10)
        base = B.proc_status_kib(child.pid, "VmRSS")
        started = time.monotonic()
        titles = 0
        samples = []
        while time.monotonic() - started < RSS_SECONDS:
            titles += 1
            station.set_title(f"Bench title {titles}")
            time.sleep(TITLE_EVERY)
            samples.append(B.proc_status_kib(child.pid, "VmRSS"))
        client = B.Client(sock)
        status = client.status()
        song = dict(l.split(": ", 1) for l in client.command("currentsong") if ": " in l)
        client.close()
        if status.get("state") != "play" or "waiting" in status:
            raise RuntimeError(f"the stream did not play throughout: {status}")
        peak = B.proc_status_kib(child.pid, "VmHWM")
        return {"baseline_rss_kib": base, "peak_rss_kib": peak, "growth_kib": peak - base, "seconds": RSS_SECONDS,
                "titles": titles, "last_title": song.get("Title"), "rss_samples_kib": samples}
    finally:
        child.stop()


def main():
    B.require_env()
    os.makedirs(DIR, exist_ok=True)
    B.prepare_mpd_database()
    B.prepare_qp_state()
    reps = 3 if B.QUICK else 10
    station = Icecast()
    paced = PacedStation()
    nginx = Nginx()
    try:
        runs = {}
        for suffix, url, what in (("", paced.url, "paced station"), ("_icecast", station.url, "icecast2")):
            qp_runs, mpd_runs = runs.setdefault("queueplayerd_first_frame" + suffix, []), runs.setdefault("mpd_first_frame" + suffix, [])
            # One of each before the measured ones, not counted: icecast's first listener on a
            # mount waited about 2 s longer than every later one (whichever daemon it was).
            B.log("streaming first frame, %s, warm-up (not counted): queueplayerd %.1f ms, mpd %.1f ms"
                  % (what, first_frame_qp(url, 99) * 1e3, first_frame_mpd(url) * 1e3))
            for i in range(reps):
                qp_runs.append(first_frame_qp(url, i))
                mpd_runs.append(first_frame_mpd(url))
                B.log("streaming first frame, %s, %d: queueplayerd %.1f ms, mpd %.1f ms"
                      % (what, i + 1, qp_runs[-1] * 1e3, mpd_runs[-1] * 1e3))

        local = os.path.join(DIR, "cbr128.mp3")
        if not os.path.exists(local):
            seconds = int(CPU_SECONDS + 30)
            subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
                            "-i", f"sine=frequency=330:sample_rate=44100:duration={seconds}", "-ac", "2",
                            "-c:a", "libmp3lame", "-b:a", "128k", local], check=True)
        url = nginx.serve(local)
        cpu = {"streaming": [], "local": []}
        for i in range(2 if B.QUICK else 3):
            cpu["streaming"].append(cpu_per_minute(url))
            cpu["local"].append(cpu_per_minute(local))
            B.log("streaming CPU %d: over HTTP %.3f s/min, local %.3f s/min" % (i + 1, cpu["streaming"][-1], cpu["local"][-1]))

        B.log(f"streaming RSS: {RSS_SECONDS:.0f} s of a live stream, a new title every {TITLE_EVERY:.0f} s")
        rss = rss_growth(station)
        B.log("streaming RSS: %d KiB after 10 s, peak %d KiB (growth %d KiB)"
              % (rss["baseline_rss_kib"], rss["peak_rss_kib"], rss["growth_kib"]))
    finally:
        station.stop()
        paced.stop()
        nginx.stop()
    B.write_fragment("streaming", {
        "queueplayerd_first_frame": B.summary(runs["queueplayerd_first_frame"]),
        "mpd_first_frame": B.summary(runs["mpd_first_frame"]),
        "queueplayerd_first_frame_icecast": B.summary(runs["queueplayerd_first_frame_icecast"]),
        "mpd_first_frame_icecast": B.summary(runs["mpd_first_frame_icecast"]),
        "cpu_streaming_s_per_min": B.summary(cpu["streaming"]),
        "cpu_local_s_per_min": B.summary(cpu["local"]),
        "cpu_window_s": CPU_SECONDS,
        "rss": rss,
    })


if __name__ == "__main__":
    main()
