"""Takes 50-raw-password-permissions.txt from an mpd 0.23 listening on /tmp/remote-mpd/mpd.sock
(the configuration is in the transcript's header). Usage: /usr/bin/python3 capture_permissions.py > 50-....txt"""
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/remote-mpd/mpd.sock"); s.settimeout(2)
t0 = time.time()
out = []
def rd():
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk: break
        data += chunk
        if data.endswith(b"OK\n") or b"\nACK " in b"\n"+data and data.endswith(b"\n"):
            try:
                s.settimeout(0.3); more = s.recv(65536); data += more
            except socket.timeout: pass
            s.settimeout(2)
            break
    for line in data.decode().splitlines():
        out.append("[%6.3f] <- %s" % (time.time()-t0, line))
def send(cmd, note=None):
    if note: out.append("# --- " + note)
    out.append("[%6.3f] -> %r" % (time.time()-t0, cmd.encode()))
    s.sendall(cmd.encode()); rd()
rd()
send("status\n", "no password: read refused")
send("setvol 40\n", "player refused")
send("setvol\n", "permission checked before the argument count")
send("frobnicate\n", "unknown stays unknown")
send("commands\n", "commands without a password")
send("password guess\n", "wrong password")
send("password reader\n", "read-only password")
send("status\n")
send("add \"01-morning-sine.mp3\"\n")
send("command_list_ok_begin\nstatus\nnext\nping\ncommand_list_end\n", "refused inside a list")
send("notcommands\n", "notcommands with read")
send("password s3cret\n", "full password")
send("notcommands\n")
send("setvol 40\n")
print("\n".join(out))
