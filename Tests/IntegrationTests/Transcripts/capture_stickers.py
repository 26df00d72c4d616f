"""Takes 51-raw-stickers.txt from an mpd 0.23 listening on SOCKET, whose music directory holds
Media/'s 01-morning-sine.mp3 and 02-evening-triangle.mp3, dir/03-noon-pluck-22k-mono.mp3 and
dirx/04-night-pluck.mp3, with a sticker_file (the configuration is in the transcript's header).
Usage: /usr/bin/python3 capture_stickers.py SOCKET > 51-raw-stickers.txt"""
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(2)
t0 = time.time()
out = []
def rd(record=True):
    data = b""
    while not (data.endswith(b"OK\n") or (b"\nACK " in b"\n" + data and data.endswith(b"\n"))):
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
    if record:
        for line in data.decode().splitlines():
            out.append("[%6.3f] <- %s" % (time.time() - t0, line))
    return data
def send(cmd, note=None):
    if note: out.append("# --- " + note)
    out.append("[%6.3f] -> %r" % (time.time() - t0, cmd.encode()))
    s.sendall(cmd.encode()); rd()
out.append("[%6.3f] <- %s" % (time.time() - t0, s.recv(64).decode().strip()))
# The library first (not recorded): update, then wait for it to finish.
s.sendall(b"update\n"); rd(False)
deadline = time.time() + 30
while b"updating_db" in (s.sendall(b"status\n") or rd(False)):
    if time.time() > deadline:
        sys.exit("mpd's update did not finish within 30 s")
    time.sleep(0.1)
A, B, C, D = "01-morning-sine.mp3", "02-evening-triangle.mp3", "dir/03-noon-pluck-22k-mono.mp3", "dirx/04-night-pluck.mp3"
send('sticker get song %s rating\n' % A, "none yet")
send('sticker set song "%s" rating 7\n' % D, "set, last URI first: find lists in URI order")
send('sticker set song "%s" rating 3\n' % C)
send('sticker set song %s rating 10\n' % B)
send('sticker set song %s rating 5\n' % A)
send('sticker set song %s playcount 2\n' % A)
send('sticker set song %s Album x\n' % A)
send('sticker set song %s rating 6\n' % A, "replaced")
send('sticker get song %s rating\n' % A, "get")
send('sticker list song %s\n' % A, "list: by name")
send('sticker find song "" rating\n', "find everywhere")
send('sticker find song dir rating\n', "find below a directory: not dirx")
send('sticker find song dir/ rating\n', "a trailing slash finds nothing")
send('sticker find song "" rating < 6\n', "compared as text")
send('sticker find song "" rating > 6\n')
send('sticker find song "" rating = 10\n')
send('sticker find song "" nosuchname\n', "no such name")
send('sticker find song "" rating ~ 3\n', "errors")
send('sticker find song "" rating =\n')
send('sticker get song nosuch.mp3 rating\n')
send('sticker set song nosuch.mp3 rating 1\n')
send('sticker get song dir rating\n')
send('sticker frob song x\n')
send('sticker get album x y\n')
send('sticker get song\n')
send('sticker\n')
send('sticker set song %s "" 1\n' % A, "an empty name is ignored")
send('sticker get song %s ""\n' % A)
send('sticker set song %s empty ""\n' % B, "an empty value is stored, but get cannot tell it from none")
send('sticker get song %s empty\n' % B)
send('sticker list song %s\n' % B)
send('command_list_ok_begin\nsticker get song %s rating\nsticker get song %s nosuch\nping\ncommand_list_end\n' % (A, A),
     "in a command list")
send('sticker delete song %s rating\n' % A, "delete")
send('sticker delete song %s rating\n' % A)
send('sticker delete song %s\n' % A)
send('sticker delete song %s\n' % A)
send('sticker list song %s\n' % A)
print("\n".join(out))
