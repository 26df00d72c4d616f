#!/usr/bin/python3
"""Row 11: loudness measurement.

An hour-long episode measured (EBU R128 integrated loudness and true peak):
  queueplayerd: `loudnessscan hour.mp3` sent to a daemon that serves a music directory
                holding only that file, to the idle `loudness` that says it is done (the
                measurement runs on its own queue: libmpg123 to 16-bit PCM, libebur128 with
                the true peak), read back with `loudness hour.mp3`
  ffmpeg -nostats -i hour.mp3 -af ebur128=peak=true -f null -   (the same figures, the
                same file, in the same run)
Wall-clock seconds; the runs alternate; medians. Our speed is also given as a multiple of
real time (target: at least 100x).

The input, 3600 s of speech-like audio (pink noise through a voice band, gated at syllable
and phrase rates, with pauses), 44.1 kHz stereo VBR -V 5 by sox and lame, is made once and
cached in .build/bench/hour-44k-stereo.mp3 (BENCH_HOUR=PATH uses another file).
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".build", "bench")
SECONDS = 3600


def hour_file():
    path = os.environ.get("BENCH_HOUR") or os.path.join(CACHE, "hour-44k-stereo.mp3")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    wav = path + ".wav"
    B.log(f"making {path} (sox + lame, once)")
    subprocess.run(["sox", "-R", "-D", "-V1", "-r", "44100", "-c", "2", "-n", "-b", "16", wav,
                    "synth", str(SECONDS), "pinknoise", "sinc", "150-4000",
                    "tremolo", "4", "90", "tremolo", "0.3", "60", "vol", "0.4"], check=True)
    subprocess.run(["lame", "--quiet", "-V", "5", wav, path + ".tmp"], check=True)
    os.unlink(wav)
    os.replace(path + ".tmp", path)
    return path


def ours(directory, name, run):
    sock = os.path.join(B.WORK, "run", f"loudness-{run}.sock")
    c = B.Child([B.QP, "--music-directory", directory, "--output", "null", "--no-state", "--socket", sock,
                 "--no-zeroconf"], env=B.qp_env())
    try:
        B.wait_accepting(sock, child=c)
        cl = B.Client(sock, timeout=600)
        t0 = time.monotonic()
        job = cl.command(f'loudnessscan "{name}"')
        while True:
            changed = cl.command("idle loudness")
            if "changed: loudness" in changed:
                break
        t1 = time.monotonic()
        fields = dict(l.split(": ", 1) for l in cl.command(f'loudness "{name}"'))
        cl.close()
        return t1 - t0, float(fields["loudness"]), float(fields["truepeak"]), job
    finally:
        c.stop()


def ffmpeg(path):
    t0 = time.monotonic()
    run = subprocess.run(["ffmpeg", "-nostats", "-hide_banner", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    t1 = time.monotonic()
    summary = run.stderr[run.stderr.rfind("Summary:"):]
    integrated = float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))
    peak = float(re.search(r"Peak:\s+(-?[\d.]+) dBFS", summary).group(1))
    return t1 - t0, integrated, peak


def main():
    B.require_env()
    path = hour_file()
    directory = os.path.join(B.WORK, "loudness-music")
    os.makedirs(directory, exist_ok=True)
    name = os.path.basename(path)
    link = os.path.join(directory, name)
    if not os.path.exists(link):
        os.symlink(path, link)
    runs = 1 if B.QUICK else 3
    qp, ff = [], []
    for run in range(runs):
        seconds, integrated, peak, _ = ours(directory, name, run)
        qp.append(seconds)
        B.log(f"queueplayerd: {seconds:.2f} s ({SECONDS / seconds:.0f}x real time): {integrated} LUFS, {peak} dBTP")
        seconds, f_integrated, f_peak = ffmpeg(path)
        ff.append(seconds)
        B.log(f"ffmpeg ebur128: {seconds:.2f} s ({SECONDS / seconds:.0f}x real time): {f_integrated} LUFS, {f_peak} dBTP")
    B.write_fragment("loudness", {
        "audio_seconds": SECONDS,
        "queueplayerd_s": B.summary(qp), "ffmpeg_s": B.summary(ff),
        "queueplayerd_lufs": integrated, "queueplayerd_dbtp": peak,
        "ffmpeg_lufs": f_integrated, "ffmpeg_dbtp": f_peak,
    })


if __name__ == "__main__":
    main()
