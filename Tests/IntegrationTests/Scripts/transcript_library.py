"""Makes the music directory of the command transcripts, for the mpd that takes them
(Transcripts/capture_commands.py) and for the daemon that replays them (CommandTranscriptTests).

Usage: /usr/bin/python3 transcript_library.py MEDIA_DIR MUSIC_DIR

MUSIC_DIR gets the four files of MEDIA_DIR (Media/) and comments.mp3: the first of them with a
new tag whose TXXX frames are what `readcomments` reads (names mpd prints and names it leaves
out: a space, a digit, a control character in the value) and a COMM frame, which is a tag
(`Comment`), not a comment pair.
"""
import glob
import os
import shutil
import subprocess
import sys

media, music = sys.argv[1], sys.argv[2]
os.makedirs(music, exist_ok=True)
for path in sorted(glob.glob(os.path.join(media, "*.mp3"))):
    shutil.copyfile(path, os.path.join(music, os.path.basename(path)))

comments = os.path.join(music, "comments.mp3")
shutil.copyfile(os.path.join(media, "01-morning-sine.mp3"), comments)
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tag_mp3.py"), comments,
                "TIT2=Comments", "TPE1=queueplayerd project",
                "TXXX:replaygain_track_gain=-6.20 dB",
                "TXXX:CATALOGNUMBER=QPD-0001",
                "TXXX:Release-Type=single",
                "TXXX:MusicBrainz Album Id=0f2b6b4e-album",
                "TXXX:mood2=calm",
                "TXXX:Notes=first line\nsecond line",
                "TXXX:Moods=calm||bright",
                "COMM=a comment frame"], check=True)
