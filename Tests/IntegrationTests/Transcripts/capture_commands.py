"""Takes 51-raw-missing-commands.txt from Debian's mpd 0.23 (/usr/bin/mpd): starts it with a
configuration of its own in a temporary directory (a null output, the music directory that
Scripts/transcript_library.py makes from Media/, default_permissions "read" and the password
"s3cret" with every permission), drives it as a raw client on its Unix socket, ends it with
`kill` and checks that it exits 0.

Usage: /usr/bin/python3 capture_commands.py > 51-raw-missing-commands.txt
(needs Debian's mpd, which `scripts/bootstrap --bench` installs, and python3-mutagen)

CommandTranscriptTests replays the requests against queueplayerd over the same music directory,
with the same waits (the `status` half a second into a range). Lines read while waiting are not
recorded.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time


def wait_until(condition, what, timeout=30):
    """Polls `condition` every 50 ms; exits with an error naming `what` after `timeout` seconds."""
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            sys.exit(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

work = tempfile.mkdtemp(prefix="mpd-capture-")
music = os.path.join(work, "music")
playlists = os.path.join(work, "playlists")
os.makedirs(playlists)
subprocess.run([sys.executable, os.path.join(ROOT, "Tests/IntegrationTests/Scripts/transcript_library.py"),
                os.path.join(ROOT, "Media"), music], check=True)
sock_path = os.path.join(work, "mpd.sock")
with open(os.path.join(work, "mpd.conf"), "w") as conf:
    conf.write(f'''music_directory "{music}"
playlist_directory "{playlists}"
db_file "{work}/database"
log_file "{work}/log"
bind_to_address "{sock_path}"
default_permissions "read"
password "s3cret@read,add,player,control,admin"
audio_output {{
    type "null"
    name "null"
}}
''')
mpd = subprocess.Popen(["/usr/bin/mpd", "--no-daemon", os.path.join(work, "mpd.conf")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 10
while not os.path.exists(sock_path):
    if time.time() > deadline:
        sys.exit("mpd did not listen")
    time.sleep(0.05)


def connect():
    client = socket.socket(socket.AF_UNIX)
    client.connect(sock_path)
    client.settimeout(5)
    return client


s = connect()
t0 = time.time()
out = []
pending = b""


def line():
    global pending
    while b"\n" not in pending:
        chunk = s.recv(65536)
        if not chunk:
            return None
        pending += chunk
    text, pending = pending.split(b"\n", 1)
    return text.decode()


def reply(until_eof=False):
    """Reads one reply: up to its OK or ACK line (or, for `kill`, to the end of the stream)."""
    lines = []
    while True:
        text = line()
        if text is None:
            out.append("# --- connection closed")
            return lines
        out.append("[%6.3f] <- %s" % (time.time() - t0, text))
        lines.append(text)
        if not until_eof and (text == "OK" or text.startswith("ACK ") or text.startswith("OK MPD ")):
            return lines


def send(cmd, note=None, until_eof=False, record=True):
    if note:
        out.append("# --- " + note)
    if record:
        out.append("[%6.3f] -> %r" % (time.time() - t0, cmd.encode()))
        s.sendall(cmd.encode())
        return reply(until_eof)
    # Not part of the transcript (waiting for mpd): sent and read without recording.
    s.sendall(cmd.encode())
    lines = []
    while True:
        text = line()
        lines.append(text)
        if text == "OK" or text.startswith("ACK "):
            return lines


line()
send("password s3cret\n", record=False)
send("update\n", record=False)
wait_until(lambda: not any(l.startswith("updating_db") for l in send("status\n", record=False)), "the update")
s.close()
s = connect()  # a client of its own: default_permissions "read"
reply()

send("clearerror\n", "read only: each new command refused but for what read allows")
for cmd in ["playlist", "readcomments \"comments.mp3\"", "listpartitions", "partition default",
            "searchaddpl \"pl\" title sine", "rangeid 1 1:2", "addtagid 1 artist x", "cleartagid 1",
            "kill", "outputset 0 a b", "moveoutput null", "newpartition other", "delpartition other"]:
    send(cmd + "\n")
send("notcommands\n", "notcommands with read")
send("password s3cret\n", "every permission")
send("notcommands\n")
send("commands\n")

send("playlist\n", "playlist: the old format, empty queue")
send("add \"01-morning-sine.mp3\"\n")
send("add \"02-evening-triangle.mp3\"\n")
send("add \"03-noon-pluck-22k-mono.mp3\"\n")
send("playlist\n")
send("playlist 0\n")

send("clearerror\n", "clearerror")
send("clearerror now\n")

send("readcomments \"comments.mp3\"\n", "readcomments: TXXX pairs with valid names and values")
send("readcomments \"01-morning-sine.mp3\"\n", "a COMM frame is not a comment pair")
send("readcomments \"missing.mp3\"\n")
send("readcomments \"\"\n")
send("readcomments\n")

send("rangeid 2 1:5\n", "rangeid")
send("playlistid 2\n")
send("rangeid 2 1.5:\n")
send("playlistid 2\n")
send("rangeid 2 :4.25\n")
send("playlistid 2\n")
send("rangeid 2 3:100\n")
send("playlistid 2\n")
send("rangeid 2 :\n")
send("playlistid 2\n")
send("rangeid 2 5:1\n")
send("rangeid 2 -1:\n")
send("rangeid 2 x\n")
send("rangeid 2 1\n")
send("rangeid 2 100:\n")
send("rangeid 99 1:2\n")
send("rangeid x 1:2\n")
send("rangeid 2\n")
send("rangeid 3 10:\n", "a range plays: from 10 s on")
send("playid 3\n")
wait_until(lambda: "state: play" in send("status\n", record=False) and any(
    l.startswith("elapsed: ") and float(l[9:]) >= 0.5 for l in send("status\n", record=False)), "half a second of the range")
send("status\n", "half a second into the range: elapsed counts from its start, duration is its length")
send("rangeid 3 1:2\n", "the current song cannot be edited")
send("stop\n")

send("addtagid 1 artist Someone\n", "addtagid and cleartagid: only on remote songs")
send("addtagid 1 nosuchtag Someone\n")
send("addtagid 99 artist Someone\n")
send("addtagid x artist Someone\n")
send("addtagid 1 artist\n")
send("cleartagid 1\n")
send("cleartagid 1 artist\n")
send("cleartagid 1 nosuchtag\n")
send("cleartagid 99\n")
send("cleartagid\n")

send("searchaddpl \"found\" title sine\n", "searchaddpl")
send("listplaylist \"found\"\n")
send("searchaddpl \"found\" any pluck position 0\n")
send("listplaylist \"found\"\n")
send("searchaddpl \"found\" \"(Title == \\\"Comments\\\")\" position 1\n")
send("listplaylist \"found\"\n")
send("searchaddpl \"found\" any pluck position 99\n")
send("searchaddpl \"sorted\" any pluck sort -Title window 0:1\n")
send("listplaylist \"sorted\"\n")
send("searchaddpl \"none\" title zzz\n")
send("listplaylist \"none\"\n")
send("searchaddpl \"found\" title\n")
send("searchaddpl \"found\" nosuchtag x\n")
send("searchaddpl \"found\"\n")
send("searchaddpl \"bad/name\" title sine\n")
send("rm \"found\"\n")
send("rm \"sorted\"\n")

send("outputs\n", "outputset and moveoutput")
send("outputset 0 dop 1\n")
send("outputset 0 \"bad name\" 1\n")
send("outputset 5 dop 1\n")
send("outputset x dop 1\n")
send("outputset 0 dop\n")
send("moveoutput null\n")
send("moveoutput nosuchoutput\n")
send("moveoutput\n")

send("listpartitions\n", "partitions: one")
send("partition default\n")
send("partition other\n")
send("partition\n")
send("newpartition default\n")
send("newpartition \"bad name\"\n")
send("delpartition default\n")
send("delpartition other\n")
send("delpartition \"bad name\"\n")
send("listpartitions\n")

send("kill\n", "kill: no reply, the connection closes, mpd exits 0", until_eof=True)
code = mpd.wait(timeout=10)
out.append("# --- mpd exited with status %d" % code)
print("# Debian's mpd 0.23.12 (/usr/bin/mpd), a null output, default_permissions \"read\", password")
print("# \"s3cret@read,add,player,control,admin\", the music directory of Scripts/transcript_library.py; a raw")
print("# client on the Unix socket (Transcripts/capture_commands.py). Issue 34: the commands that were missing.")
print("\n".join(out))
