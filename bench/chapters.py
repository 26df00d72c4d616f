#!/usr/bin/python3
"""Row 13: reading the chapters of a file with 1,000 CHAP frames.

A 60 s tone (sox, lame) given 1,000 ID3v2.4 CHAP frames by mutagen (each with a TIT2 and a
WXXX subframe, under a top-level CTOC of four nested ones), in the music directory of queueplayerd --output
null. The figure is the `chapters "FILE"` round trip on the control socket: the tag walked,
each CHAP frame read and parsed, the chapters sorted and clipped to the duration, the reply
of 1,000 blocks written and read (this process's clock). The first request (the song's
duration read from the file as well) is reported apart; then 50 more, p50 and p99.
Target: under 50 ms. No peer: mpd has no chapters.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import benchlib as B  # noqa: E402

CHAPTERS = 1000
REPEATS = 50

MUTAGEN = """
import sys
from mutagen import id3
tag = id3.ID3()
ids = []
for i in range(int(sys.argv[2])):
    start = i * 60
    tag.add(id3.CHAP(element_id="c%d" % i, start_time=start, end_time=start + 60,
                     sub_frames=[id3.TIT2(encoding=3, text=["Chapter %d" % i]),
                                 id3.WXXX(encoding=3, desc="", url="https://example.com/%d" % i)]))
    ids.append("c%d" % i)
# A CTOC lists at most 255 entries: the top-level table lists four of 250 each.
parts = ["part%d" % p for p in range(0, len(ids), 250)]
for p in range(0, len(ids), 250):
    tag.add(id3.CTOC(element_id="part%d" % p, flags=id3.CTOCFlags.ORDERED, child_element_ids=ids[p:p + 250]))
tag.add(id3.CTOC(element_id="toc", flags=id3.CTOCFlags.TOP_LEVEL | id3.CTOCFlags.ORDERED, child_element_ids=parts))
tag.save(sys.argv[1], v2_version=4)
"""


def make_file(directory):
    os.makedirs(directory, exist_ok=True)
    wav, mp3 = os.path.join(directory, "tone.wav"), os.path.join(directory, "chapters.mp3")
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "60", "sine", "440", "vol", "0.5"], check=True)
    subprocess.run(["lame", "--quiet", "-V", "4", wav, mp3], check=True)
    os.remove(wav)
    subprocess.run(["/usr/bin/python3", "-c", MUTAGEN, mp3, str(CHAPTERS)], check=True)
    return mp3


def main():
    B.require_env()
    music = os.path.join(B.WORK, "chapters-music")
    make_file(music)
    sock = os.path.join(B.WORK, "run", "chapters.sock")
    os.makedirs(os.path.dirname(sock), exist_ok=True)
    child = B.Child([B.QP, "--music-directory", music, "--output", "null", "--no-state", "--socket", sock], env=B.qp_env())
    try:
        B.wait_accepting(sock, child=child)
        client = B.Client(sock)
        t0 = time.perf_counter()
        lines = client.command('chapters "chapters.mp3"')
        first = time.perf_counter() - t0
        blocks = sum(1 for line in lines if line.startswith("chapter: "))
        if blocks != CHAPTERS:
            raise RuntimeError(f"{blocks} chapters listed, {CHAPTERS} written")
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            client.command('chapters "chapters.mp3"')
            times.append(time.perf_counter() - t0)
        result = {"chapters": CHAPTERS, "first_s": first, "p50_s": B.percentile(times, 50), "p99_s": B.percentile(times, 99)}
        B.log(f"chapters of a file with {CHAPTERS} CHAP frames: first {first * 1e3:.2f} ms, "
              f"then p50 {result['p50_s'] * 1e3:.2f} ms, p99 {result['p99_s'] * 1e3:.2f} ms")
        B.write_fragment("chapters", result)
    finally:
        child.popen.terminate()
        child.popen.wait(timeout=20)


if __name__ == "__main__":
    main()
