"""python-mpd2 (Debian's python3-mpd 3.0.5) and the commands the daemon adds to mpd's: each called through
its own method, as a client script would.

Usage: /usr/bin/python3 mpd2_added_commands.py SOCKET OUTPUT_NAME

The daemon runs over the music directory of transcript_library.py with an empty queue; the last
step is kill, after which it stops. Prints one JSON step per line (steps.py);
AddedCommandsClientTests.swift checks them.
"""
import sys

import mpd

import steps

SOCKET, OUTPUT = sys.argv[1], sys.argv[2]

client = mpd.MPDClient()
client.timeout = 10
client.connect(SOCKET)

for uri in ["01-morning-sine.mp3", "02-evening-triangle.mp3", "03-noon-pluck-22k-mono.mp3"]:
    client.add(uri)
ids = [song["id"] for song in client.playlistinfo()]

steps.run("playlist", lambda: client.playlist())
steps.run("readcomments", lambda: client.readcomments("comments.mp3"))
steps.run("readcomments_none", lambda: client.readcomments("01-morning-sine.mp3"))
steps.run("readcomments_missing", lambda: client.readcomments("missing.mp3"))
steps.run("clearerror", lambda: client.clearerror())
steps.run("rangeid", lambda: client.rangeid(ids[1], "1:5"))
steps.run("rangeid_song", lambda: client.playlistid(ids[1])[0])
steps.run("rangeid_bad", lambda: client.rangeid(ids[1], "5:1"))
steps.run("addtagid", lambda: client.addtagid(ids[0], "artist", "Someone"))
steps.run("cleartagid", lambda: client.cleartagid(ids[0]))
steps.run("searchaddpl", lambda: client.searchaddpl("mpd2-found", "title", "sine"))
steps.run("searchaddpl_list", lambda: client.listplaylist("mpd2-found"))
steps.run("rm", lambda: client.rm("mpd2-found"))
steps.run("listpartitions", lambda: client.listpartitions())
steps.run("partition", lambda: client.partition("default"))
steps.run("partition_other", lambda: client.partition("other"))
steps.run("newpartition", lambda: client.newpartition("other"))
steps.run("delpartition", lambda: client.delpartition("default"))
steps.run("moveoutput", lambda: client.moveoutput(OUTPUT))
steps.run("kill", lambda: client.kill())
steps.emit("done")
