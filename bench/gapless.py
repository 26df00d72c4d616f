#!/usr/bin/python3
"""Row 5: samples added or dropped at item boundaries.

Each player plays the three consecutive 5 s pieces of one continuous sweep, as one
queue, into alsa-lib's file plugin (pcm "capture": file + null, unpaced, appending
across reopenings). The reference for each piece is libmpg123's gapless decode of
that piece alone (`mpg123 --gapless -s`); the expected output is their
concatenation. Each piece is located in the output by its middle (the lag where
the output best matches 0.5 s into the piece), so for each boundary

    added (+) or dropped (-) = start(next piece) - (start(piece) + length(piece))

in frames; samples before the first piece and after the last are counted apart
(not boundaries). For exactness the bytes around each boundary (+-1024 frames)
are compared with the reference: byte-identical for libmpg123-based players;
mpd decodes MP3 with libmad into 24-bit samples, so for it we give the largest
difference in 16-bit steps instead.

Players: queueplayerd --output alsa:capture; mpg123 --gapless -o alsa -a capture;
mpd (ALSA output "capture", its default gapless_mp3_playback).
"""

import array
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

SETS = {"sweep-44k": (44100, 2), "sweep-22k": (22050, 1)}
PIECES = ["1.mp3", "2.mp3", "3.mp3"]
CAPTURE = os.path.join(B.WORK, "capture.raw")


def reference(set_name):
    """Per-piece reference samples (s16, interleaved) from libmpg123's gapless decoder."""
    refs = []
    for p in PIECES:
        raw = subprocess.run(["mpg123", "-q", "--gapless", "-s", B.music(set_name, p)],
                             check=True, stdout=subprocess.PIPE).stdout
        a = array.array("h")
        a.frombytes(raw)
        refs.append(a)
    return refs


def load_capture(expected_samples):
    """The capture as a list of samples in 16-bit units, and its sample format.

    The file plugin writes raw samples in the stream's format: S16 for
    queueplayerd and mpg123, 32-bit containers (S24_P32 from mpd's libmad
    decoder) for mpd; told apart by the size against the expected length.
    """
    with open(CAPTURE, "rb") as f:
        data = f.read()
    if len(data) >= 4 * expected_samples * 0.98 and len(data) % 4 == 0:
        a = array.array("i")
        a.frombytes(data)
        scale = 256.0 if max(abs(v) for v in a[: 1 << 16] or [0]) < (1 << 24) else 65536.0
        return [v / scale for v in a], ("S24_P32" if scale == 256.0 else "S32"), data
    a = array.array("h")
    a.frombytes(data[: len(data) // 2 * 2])
    return a, "S16", data


def locate(out, ref, ch, expected_frame, anchor_frame, search=12000, window=512, tol=48):
    """The output frame where `ref` starts, found by where its anchor (a window of
    `window` frames at `anchor_frame` into ref) best matches the output; with the
    mean absolute difference there (16-bit steps)."""
    first = ref[anchor_frame * ch]
    best = (None, float("inf"))
    lo = max(0, expected_frame + anchor_frame - search)
    hi = min(len(out) // ch - window, expected_frame + anchor_frame + search)
    n = window * ch
    base = anchor_frame * ch
    for pos in range(lo, hi):
        if abs(out[pos * ch] - first) > tol:
            continue
        o = pos * ch
        total = 0.0
        for k in range(0, n, 4):  # every 4th sample is plenty for a sweep
            total += abs(out[o + k] - ref[base + k])
            if total >= best[1] * (n / 4):
                break
        mad = total / (n / 4)
        if mad < best[1]:
            best = (pos - anchor_frame, mad)
    return best


def analyse(set_name, refs, player):
    rate, ch = SETS[set_name]
    lengths = [len(r) // ch for r in refs]
    expected = sum(lengths)
    out, fmt, raw = load_capture(expected * ch)
    total = len(out) // ch
    starts, fits = [], []
    e = 0
    for r, n in zip(refs, lengths):
        start, mad = locate(out, r, ch, e, anchor_frame=n // 2 - 256)
        starts.append(start)
        fits.append(mad)
        e = (start if start is not None else e) + n
    result = {"player": player, "format": fmt, "frames_out": total, "frames_expected": expected,
              "piece_frames": lengths, "starts": starts, "anchor_mean_abs_diff": fits}
    if any(s is None for s in starts):
        result["error"] = "a piece was not found in the output"
        return result
    result["boundaries"] = [starts[i + 1] - (starts[i] + lengths[i]) for i in range(len(refs) - 1)]
    result["head"] = starts[0]
    result["tail"] = total - (starts[-1] + lengths[-1])
    tail = out[(starts[-1] + lengths[-1]) * ch:]
    result["tail_is_silence"] = all(v == 0 for v in tail)
    # Around each boundary, +-1024 frames: exact bytes (S16), or the largest difference.
    concat = array.array("h")
    for r in refs:
        concat.extend(r)
    exact, maxdiff = [], []
    for i in range(len(refs) - 1):
        b_ref = sum(lengths[: i + 1])
        b_out = starts[i + 1]
        w = 1024
        ref_win = concat[(b_ref - w) * ch:(b_ref + w) * ch]
        out_win = out[(b_out - w) * ch:(b_out + w) * ch]
        if fmt == "S16":
            exact.append(bytes(ref_win) == bytes(array.array("h", out_win)))
        else:
            exact.append(False)
        maxdiff.append(max((abs(a - b) for a, b in zip(out_win, ref_win)), default=None))
    result["boundary_bytes_identical"] = exact
    result["boundary_max_abs_diff"] = maxdiff
    if fmt == "S16":
        result["whole_output_identical"] = raw == concat.tobytes()
    return result


def play(player, set_name):
    if os.path.exists(CAPTURE):
        os.unlink(CAPTURE)
    files = [B.music(set_name, p) for p in PIECES]
    if player == "queueplayerd":
        c = B.Child([B.QP, "--once", "--output", "alsa:capture",
                     "--socket", os.path.join(B.WORK, "run", "gapless.sock")] + files, env=B.qp_env())
        if c.wait(120) != 0:
            raise RuntimeError(f"queueplayerd exited {c.popen.returncode}")
    elif player == "mpg123":
        c = B.Child(["mpg123", "-q", "--gapless", "-o", "alsa", "-a", "capture"] + files)
        if c.wait(120) != 0:
            raise RuntimeError(f"mpg123 exited {c.popen.returncode}")
    else:
        child, sock = B.start_mpd("gapless", "capture")
        try:
            cl = B.Client(sock)
            cl.command("clear")
            for p in PIECES:
                cl.command(f'add "{set_name}/{p}"')
            cl.command("play")
            cl.close()
            time.sleep(0.2)
            if not B.wait_stopped(sock, 120):
                raise RuntimeError("mpd did not finish the queue")
        finally:
            child.stop()  # closes its output: the file plugin flushes what it holds
    time.sleep(0.2)  # the `cat` behind the plugin has exited by now (pclose), but be safe


def main():
    B.require_env()
    B.prepare_mpd_database()
    reps = 1 if B.QUICK else 2
    players = ["queueplayerd", "mpg123", "mpd"]
    results = {}
    for set_name in SETS:
        refs = reference(set_name)
        results[set_name] = {"reference_piece_frames": [len(r) // SETS[set_name][1] for r in refs],
                             "runs": {p: [] for p in players}}
        for rep in range(reps):
            for player in players:
                B.log(f"gapless {set_name} {player} run {rep + 1}")
                play(player, set_name)
                r = analyse(set_name, refs, player)
                B.log(f"  boundaries {r.get('boundaries')} head {r.get('head')} tail {r.get('tail')} "
                      f"identical {r.get('boundary_bytes_identical')} maxdiff {r.get('boundary_max_abs_diff')}")
                results[set_name]["runs"][player].append(r)
    B.write_fragment("gapless", results)


if __name__ == "__main__":
    main()
