#!/usr/bin/python3
"""Row 8: the music library: 10,000 tagged MP3 files, queueplayerd against mpd.

The library (made once, kept in $BENCH_WORK/library/tree; see make_library): 500 albums
of 20 tracks in AlbumArtist/Year - Album/NN - Title.mp3, copies of five short lame
encodes with ID3v2.3 tags written per file (Artist, AlbumArtist, Album, Title, Track,
Year, Genre; some Latin-1 and some UTF-16 text). Every 10th album is a compilation whose
tracks have other artists.

Per repetition, for each daemon in turn (the order alternates):

  update from empty: the daemon starts with an empty database of this very directory
      (each daemon's own, made once by letting it build one of an empty directory at
      the same path), a client sends `update` and polls `status` every 10 ms until
      `updating_db` is gone. Wall time from sending `update`, and the daemon's CPU
      seconds (utime + stime of all threads, /proc/PID/stat) over that time.
  idle RSS: the daemon is restarted and loads the database it saved; VmRSS 1 s after it
      accepts, and again 1 s after the queries and the command floods below.
  round trips, one client, one request at a time: `search any X` (X from a fixed list of
      title words, artists' names and album words, in turn) and
      `list album group albumartist`; p50 and p99 of each repetition, and the daemon's CPU
      per request.
  command floods, one client, as fast as it can, for a fixed time: `status`,
      `currentsong`, `ping` in turn (the queue empty), (a) pipelined: a writer thread
      sends without waiting while the reader counts the `OK`s (the socket's buffers
      bound how far ahead it gets), (b) one at a time: each request sent when the last
      reply is read; (c) pipelined again with one song added, played and paused (the
      status then comes from the player: mpd asks its player thread), the queue emptied
      after. Commands per second, and the daemon's CPU seconds per 1,000 commands.

queueplayerd --music-directory TREE --output null --socket S (its state in a scratch
XDG_STATE_HOME)   vs   mpd --no-daemon CONF (music_directory TREE, its own db_file,
ALSA output devnull, auto_update no). Medians over the repetitions.
"""

import os
import random
import select
import shutil
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

LIB = os.path.join(B.WORK, "library")
TREE = os.path.join(LIB, "tree")
EMPTY = os.path.join(LIB, "empty")      # each daemon's database of an empty TREE
GENERATION = "library-v1"               # bump when make_library changes: the tree is made again
ALBUMS, TRACKS = 500, 20

# ---------------------------------------------------------------- the library

FIRST = ["Ada", "Bruno", "Clara", "Dario", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Karin", "Lars",
         "Mira", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tilda", "Ugo", "Vera", "Wim", "Yara", "Zoë",
         "Renée", "Björn", "Agnès"]
LAST = ["Ambrose", "Brandt", "Castell", "Dorn", "Eklund", "Falk", "Grau", "Holm", "Ivers", "Jansen", "Kowalski",
        "Lind", "Moreau", "Nyström", "Ortega", "Petit", "Quast", "Rinaldi", "Sauer", "Thorn", "Ulrich", "Varga",
        "Weiss", "Yilmaz", "Zeller", "Åberg", "Müller", "Øster"]
BANDS = ["Harbors", "Lanterns", "Orchids", "Signals", "Rivers", "Engines", "Comets", "Foxes", "Mirrors", "Tides",
         "Pilots", "Ghosts", "Wolves", "Satellites", "Gardens", "Machines"]
ADJ = ["Velvet", "Silent", "Electric", "Golden", "Hollow", "Crimson", "Northern", "Paper", "Glass", "Wild",
       "Distant", "Burning", "Quiet", "Broken", "Neon", "Lunar", "Iron", "Secret", "Frozen", "Little"]
NOUN = ["Heart", "Road", "Night", "Summer", "Window", "Ocean", "Fire", "Dream", "Garden", "City", "Shadow", "Rain",
        "Morning", "Station", "Letter", "Mountain", "Island", "Bridge", "Mirror", "Horizon", "Winter", "Promise",
        "Echo", "Harbor", "Stranger", "Feather", "Thunder", "Lantern", "Valley", "Circle"]
VERB = ["Falling", "Running", "Waiting", "Dancing", "Dreaming", "Leaving", "Calling", "Burning", "Drifting",
        "Holding", "Turning", "Breaking"]
GENRES = ["Rock", "Pop", "Jazz", "Blues", "Electronic", "Folk", "Classical", "Hip-Hop", "Soul", "Reggae",
          "Country", "Metal", "Ambient", "Funk", "Punk", "Indie", "Latin", "World", "Soundtrack", "Chanson"]
UTF16 = ["東京 Nights", "Москва", "Ελλάδα", "서울 Lights"]   # written as UTF-16 frames

# What `search any X` looks for, in turn: title and album words, artists' names, a word nobody has.
SEARCH_TERMS = ["harbor", "Velvet", "echo", "Lind", "winter", "Dancing", "greta", "mirror", "thunder",
                "Moreau", "glass", "Nyström", "promise", "wolves", "station", "zzqx"]


def id3v23(frames, padding=512):
    """An ID3v2.3 tag of text frames (ISO-8859-1 where possible, else UTF-16 with BOM)."""
    body = b""
    for fid, text in frames:
        try:
            data = b"\x00" + text.encode("latin-1")
        except UnicodeEncodeError:
            data = b"\x01" + text.encode("utf-16")
        body += fid.encode("ascii") + struct.pack(">I", len(data)) + b"\x00\x00" + data
    body += b"\x00" * padding
    n = len(body)
    return b"ID3\x03\x00\x00" + bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F]) + body


def audio_only(data):
    """An MP3 file's bytes without an ID3v2 tag in front and an ID3v1 tag at the end."""
    if data[:3] == b"ID3":
        size = (data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]
        data = data[10 + size + (10 if data[5] & 0x10 else 0):]
    if len(data) > 128 and data[-128:-125] == b"TAG":
        data = data[:-128]
    return data


def encodes(tmp):
    """Five short lame encodes (1-2.5 s; VBR and CBR; 44.1/48/22.05 kHz; stereo and mono)."""
    specs = [("a", ["-r", "44100", "-c", "2"], "2.5", ["sine", "220-880"], ["-V", "5"]),
             ("b", ["-r", "44100", "-c", "2"], "2", ["square", "330"], ["-b", "128"]),
             ("c", ["-r", "48000", "-c", "2"], "1.5", ["pinknoise"], ["-V", "7"]),
             ("d", ["-r", "22050", "-c", "1"], "2", ["triangle", "440"], ["-b", "32"]),
             ("e", ["-r", "44100", "-c", "1"], "1", ["sine", "110"], ["-b", "64"])]
    out = []
    for name, fmt, dur, synth, lame in specs:
        wav, mp3 = os.path.join(tmp, name + ".wav"), os.path.join(tmp, name + ".mp3")
        subprocess.run(["sox", "-R", "-D", "-V1", "-n"] + fmt + ["-b", "16", wav, "synth", dur] + synth + ["vol", "0.5"],
                       check=True)
        subprocess.run(["lame", "--quiet"] + lame + [wav, mp3], check=True)
        with open(mp3, "rb") as f:
            out.append(audio_only(f.read()))
    return out


def safe(name):
    return "".join("_" if c in '/\\:*?"<>|' else c for c in name)


def make_library():
    """Writes TREE (10,000 files) unless this generation of it is there already."""
    marker = os.path.join(LIB, GENERATION)
    if os.path.exists(marker) and os.path.isdir(TREE):
        return
    B.log("making the library: 10,000 tagged MP3 files")
    shutil.rmtree(LIB, ignore_errors=True)
    tmp = os.path.join(LIB, "encodes")
    os.makedirs(tmp)
    audio = encodes(tmp)
    rng = random.Random(11)
    artists = sorted({f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(120)}
                     | {f"The {rng.choice(ADJ)} {rng.choice(BANDS)}" for _ in range(60)})
    words = lambda k: " ".join(rng.choice(ADJ + NOUN + VERB) for _ in range(k))  # noqa: E731
    n = 0
    for a in range(ALBUMS):
        compilation = a % 10 == 9
        album_artist = "Various Artists" if compilation else artists[a % len(artists)]
        album = UTF16[(a // 100) % len(UTF16)] if a % 100 == 50 else f"{rng.choice(ADJ)} {rng.choice(NOUN)}" + (f" {a}" if a % 3 else "")
        year = 1960 + rng.randrange(64)
        date = str(year) if a % 4 else f"{year}-{1 + rng.randrange(12):02d}-{1 + rng.randrange(28):02d}"
        genre = rng.choice(GENRES)
        directory = os.path.join(TREE, safe(album_artist), safe(f"{year} - {album}"))
        os.makedirs(directory, exist_ok=True)
        for t in range(1, TRACKS + 1):
            title = words(rng.choice((1, 2, 2, 3)))
            artist = rng.choice(artists) if compilation else album_artist
            tag = id3v23([("TIT2", title), ("TPE1", artist), ("TPE2", album_artist), ("TALB", album),
                          ("TRCK", f"{t}/{TRACKS}"), ("TYER", date[:4]), ("TCON", genre)]
                         + ([("TDAT", date[8:10] + date[5:7])] if len(date) > 4 else []))
            with open(os.path.join(directory, f"{t:02d} - {safe(title)}.mp3"), "wb") as f:
                f.write(tag + audio[n % len(audio)])
            n += 1
    shutil.rmtree(tmp)
    open(marker, "w").close()
    B.log(f"library ready: {n} files")


# ---------------------------------------------------------------- the daemons

def qp_state(rep):
    return os.path.join(B.WORK, "state", f"library-{rep}")


def start_qp(state_home):
    sock = os.path.join(B.WORK, "run", "library.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    env = B.qp_env({"XDG_STATE_HOME": state_home})
    child = B.Child([B.QP, "--music-directory", TREE, "--output", "null", "--socket", sock], env=env)
    B.wait_accepting(sock, child=child)
    return child, sock


def mpd_db(rep):
    return os.path.join(B.MPD_DIR, f"library-{rep}.db")


def start_mpd(db):
    return B.start_mpd("library", "devnull", music_directory=TREE, db_file=db)


def qp_db_file(state_home):
    return os.path.join(state_home, "queueplayerd", "database.json")


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def make_empty_databases():
    """Each daemon's database of an empty TREE: TREE is moved aside for a moment, and
    each daemon builds its database of the empty directory at that path by itself (no
    format of theirs is written here)."""
    os.makedirs(EMPTY, exist_ok=True)
    aside = TREE + ".aside"
    os.rename(TREE, aside)
    try:
        os.mkdir(TREE)
        state = os.path.join(EMPTY, "qp-state")
        shutil.rmtree(state, ignore_errors=True)
        child, sock = start_qp(state)
        wait_for(lambda: os.path.exists(qp_db_file(state)), 20, "queueplayerd saved no database of an empty directory")
        child.stop()
        db = os.path.join(EMPTY, "mpd.db")
        if os.path.exists(db):
            os.unlink(db)
        child, sock = start_mpd(db)   # without a database file, mpd builds one at start
        wait_for(lambda: os.path.exists(db), 20, "mpd saved no database of an empty directory")
        c = B.Client(sock)
        wait_for(lambda: "updating_db" not in c.status(), 20, "mpd's first update did not end")
        c.close()
        child.stop()
        os.rmdir(TREE)
    finally:
        if os.path.isdir(TREE) and not os.listdir(TREE):
            os.rmdir(TREE)
        os.rename(aside, TREE)


def start_empty(kind, rep):
    """The daemon, accepting, with an empty database of TREE in its place."""
    if kind == "queueplayerd":
        state = qp_state(rep)
        shutil.rmtree(state, ignore_errors=True)
        os.makedirs(os.path.dirname(qp_db_file(state)))
        shutil.copy(qp_db_file(os.path.join(EMPTY, "qp-state")), qp_db_file(state))
        return start_qp(state)
    shutil.copy(os.path.join(EMPTY, "mpd.db"), mpd_db(rep))
    return start_mpd(mpd_db(rep))


def start_loaded(kind, rep):
    """The daemon restarted on the database its update saved."""
    return start_qp(qp_state(rep)) if kind == "queueplayerd" else start_mpd(mpd_db(rep))


# ---------------------------------------------------------------- measurements

def stat_songs(c):
    return int(dict(l.split(": ", 1) for l in c.command("stats") if ": " in l).get("songs", "0"))


def timed_update(child, sock):
    c = B.Client(sock)
    if stat_songs(c) != 0:
        raise RuntimeError("the database was not empty before the update")
    cpu0 = B.proc_cpu_seconds(child.pid)
    t0 = time.perf_counter()
    c.command("update")
    while "updating_db" in c.status():
        if time.perf_counter() - t0 > 600:
            raise TimeoutError("update took more than 10 minutes")
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    cpu = B.proc_cpu_seconds(child.pid) - cpu0
    songs = stat_songs(c)
    c.close()
    return wall, cpu, songs


def round_trips(child, c, lines):
    """Sends each line, reads its reply; returns (round trips, daemon CPU seconds, reply lines)."""
    rtts, sizes = [], []
    cpu0 = B.proc_cpu_seconds(child.pid)
    for line in lines:
        t0 = time.perf_counter()
        c.send(line)
        reply = c.reply()
        rtts.append(time.perf_counter() - t0)
        sizes.append(len(reply))
    return rtts, B.proc_cpu_seconds(child.pid) - cpu0, sizes


FLOOD = ["status", "currentsong", "ping"]


def flood_pipelined(child, sock, seconds):
    """A writer sends FLOOD in turn without waiting; the reader counts the replies' `OK`s."""
    c = B.Client(sock)
    chunk = ("\n".join(FLOOD * 100) + "\n").encode()
    per_chunk = len(FLOOD) * 100
    sent = [0]
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            c.sock.sendall(chunk)
            sent[0] += per_chunk

    cpu0 = B.proc_cpu_seconds(child.pid)
    t0 = time.perf_counter()
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    got, tail = 0, b""
    deadline = t0 + seconds
    while True:
        if time.perf_counter() >= deadline:
            stop.set()   # not joined here: the writer may wait for the daemon, which waits for this reader
            if not thread.is_alive() and got >= sent[0]:
                break
        if stop.is_set() and not select.select([c.sock], [], [], 0.05)[0]:
            if time.perf_counter() - deadline > 30:
                raise TimeoutError(f"the flood's replies stopped at {got} of {sent[0]}")
            continue   # the writer's last chunk may still be on its way
        data = c.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the daemon closed the connection during the flood")
        if b"ACK" in data:
            raise RuntimeError(f"an error reply during the flood: {data[data.index(b'ACK'):][:200]!r}")
        got += (tail + data).count(b"OK\n")   # no reply line of these commands ends in OK but the last
        tail = data[-2:]
    wall = time.perf_counter() - t0
    cpu = B.proc_cpu_seconds(child.pid) - cpu0
    c.close()
    if got != sent[0]:
        raise RuntimeError(f"{got} replies to {sent[0]} commands")
    return got / wall, cpu / got * 1000


def flood_one_at_a_time(child, sock, seconds):
    c = B.Client(sock)
    n = 0
    cpu0 = B.proc_cpu_seconds(child.pid)
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        for line in FLOOD:
            c.send(line)
            c.reply()
        n += len(FLOOD)
    wall = time.perf_counter() - t0
    cpu = B.proc_cpu_seconds(child.pid) - cpu0
    c.close()
    return n / wall, cpu / n * 1000


def flood_paused(child, sock, seconds):
    """The pipelined flood with a song loaded and paused (mpd asks its player thread for the
    status then; queueplayerd's controller reads its player), the queue emptied after it."""
    c = B.Client(sock)
    song = next(l.split(": ", 1)[1] for l in c.command(f'search any "{SEARCH_TERMS[0]}"') if l.startswith("file: "))
    c.command(f'add "{song}"')
    c.command("play 0")
    c.command("pause 1")
    wait_for(lambda: c.status().get("state") == "pause", 10,
             f"{song} paused")
    result = flood_pipelined(child, sock, seconds)
    c.command("stop")
    c.command("clear")
    c.close()
    return result


def measure(kind, rep, n_queries, flood_seconds):
    r = {}
    child, sock = start_empty(kind, rep)
    try:
        r["update_s"], r["update_cpu_s"], r["songs"] = timed_update(child, sock)
        time.sleep(1)
        r["rss_after_update_kib"] = B.proc_status_kib(child.pid, "VmRSS")
        r["hwm_after_update_kib"] = B.proc_status_kib(child.pid, "VmHWM")
    finally:
        child.stop()
    if r["songs"] != ALBUMS * TRACKS:
        B.log(f"library {kind}: the update found {r['songs']} songs, not {ALBUMS * TRACKS}")

    child, sock = start_loaded(kind, rep)
    try:
        time.sleep(1)
        r["rss_loaded_kib"] = B.proc_status_kib(child.pid, "VmRSS")
        c = B.Client(sock)
        r["songs_loaded"] = stat_songs(c)
        searches = [f'search any "{SEARCH_TERMS[i % len(SEARCH_TERMS)]}"' for i in range(n_queries)]
        lists = ["list album group albumartist"] * n_queries
        round_trips(child, c, searches[:len(SEARCH_TERMS)] + lists[:5])   # warm-up
        for name, lines in (("search", searches), ("list", lists)):
            rtts, cpu, sizes = round_trips(child, c, lines)
            r[f"{name}_p50"] = B.percentile(rtts, 50)
            r[f"{name}_p99"] = B.percentile(rtts, 99)
            r[f"{name}_cpu_ms"] = cpu / len(lines) * 1000
            r[f"{name}_reply_lines"] = sum(sizes) / len(sizes)
        c.close()
        r["pipelined_per_s"], r["pipelined_cpu_s_per_1000"] = flood_pipelined(child, sock, flood_seconds)
        r["one_at_a_time_per_s"], r["one_at_a_time_cpu_s_per_1000"] = flood_one_at_a_time(child, sock, flood_seconds)
        r["paused_pipelined_per_s"], r["paused_pipelined_cpu_s_per_1000"] = flood_paused(child, sock, flood_seconds)
        time.sleep(1)
        r["rss_after_queries_kib"] = B.proc_status_kib(child.pid, "VmRSS")
        if not child.alive():
            raise RuntimeError(f"{kind} died during the measurement")
    finally:
        child.stop()
    B.log(f"library {kind}: update {r['update_s']:.2f} s ({r['update_cpu_s']:.2f} s CPU, {r['songs']} songs); "
          f"RSS loaded {r['rss_loaded_kib'] / 1024:.1f} MiB; "
          f"search p50 {r['search_p50'] * 1e3:.2f} ms p99 {r['search_p99'] * 1e3:.2f} ms "
          f"({r['search_reply_lines']:.0f} lines); list p50 {r['list_p50'] * 1e3:.2f} ms "
          f"p99 {r['list_p99'] * 1e3:.2f} ms ({r['list_reply_lines']:.0f} lines); "
          f"pipelined {r['pipelined_per_s']:.0f}/s {r['pipelined_cpu_s_per_1000'] * 1e3:.1f} ms CPU/1000; "
          f"one at a time {r['one_at_a_time_per_s']:.0f}/s {r['one_at_a_time_cpu_s_per_1000'] * 1e3:.1f} ms CPU/1000; "
          f"paused, pipelined {r['paused_pipelined_per_s']:.0f}/s "
          f"{r['paused_pipelined_cpu_s_per_1000'] * 1e3:.1f} ms CPU/1000")
    return r


KEYS = ("update_s", "update_cpu_s", "rss_loaded_kib", "rss_after_queries_kib", "rss_after_update_kib",
        "search_p50", "search_p99", "search_cpu_ms", "search_reply_lines",
        "list_p50", "list_p99", "list_cpu_ms", "list_reply_lines",
        "pipelined_per_s", "pipelined_cpu_s_per_1000", "one_at_a_time_per_s", "one_at_a_time_cpu_s_per_1000",
        "paused_pipelined_per_s", "paused_pipelined_cpu_s_per_1000",
        "songs", "songs_loaded")


def main():
    B.require_env()
    make_library()
    make_empty_databases()
    reps, n_queries, flood_seconds = (2, 60, 3) if B.QUICK else (5, 300, 10)
    runs = {"queueplayerd": [], "mpd": []}
    for rep in range(reps):
        order = ["queueplayerd", "mpd"] if rep % 2 == 0 else ["mpd", "queueplayerd"]
        for kind in order:
            runs[kind].append(measure(kind, rep, n_queries, flood_seconds))
    out = {"songs": ALBUMS * TRACKS, "queries": n_queries, "flood_seconds": flood_seconds,
           "search_terms": SEARCH_TERMS, "flood_commands": FLOOD}
    for kind, rs in runs.items():
        out[kind] = {key: B.summary([r[key] for r in rs]) for key in KEYS}
        out[kind]["repetitions"] = rs
    B.write_fragment("library", out)


if __name__ == "__main__":
    main()
