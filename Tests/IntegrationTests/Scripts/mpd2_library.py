"""python-mpd2 against queueplayerd: the queue with ids and versions, the database, stored
playlists and client-to-client messages (the commands mpc does not reach).

Usage: /usr/bin/python3 mpd2_library.py SOCKET

The daemon must have been started with --music-directory Media/ and an empty queue, its song
database built. Prints one JSON object per line: {"step": NAME, "ok": VALUE} or
{"step": NAME, "error": "Type: message"}; MPDClientsTests.swift checks them.
"""
import sys
import threading

import mpd

from steps import emit, run

SOCKET = sys.argv[1]




client = mpd.MPDClient()
client.timeout = 10
client.connect(SOCKET)

# The database.
run("lsinfo", lambda: [entry.get("file") for entry in client.lsinfo()])
run("list-album-group-artist", lambda: client.list("album", "group", "artist"))
run("find-expression", lambda: [song["file"] for song in client.find("(Title contains 'ing')")])
run("search-old-pairs", lambda: [song["file"] for song in client.search("title", "NIGHT")])
run("count", lambda: client.count("artist", "queueplayerd project"))
run("find-bad-filter", lambda: client.find("(Title ~~ 'x')"))

# The queue with ids and versions.
version = int(client.status()["playlist"])
first = run("addid", lambda: client.addid("01-morning-sine.mp3"))
run("addid-at-0", lambda: client.addid("04-night-pluck.mp3", 0))
run("findadd", lambda: client.findadd("(Title starts_with 'Evening')"))
run("playlist-order", lambda: [song["file"] for song in client.playlistinfo()])
run("plchanges", lambda: [song["file"] for song in client.plchanges(version)])
later = int(client.status()["playlist"])
run("plchanges-none", lambda: client.plchanges(later))
run("playlistid", lambda: client.playlistid(first)[0]["file"])
run("playid", lambda: client.playid(first))
run("current-after-playid", lambda: client.currentsong()["id"])
run("moveid", lambda: client.moveid(first, 2))
run("plchangesposid", lambda: client.plchangesposid(later))
run("prioid", lambda: client.prioid(200, first))
run("prio-shown", lambda: client.playlistid(first)[0].get("prio"))
run("playlistfind", lambda: [song["file"] for song in client.playlistfind("title", "Night (pluck and sine, E-flat major)")])
run("deleteid-unknown", lambda: client.deleteid(9999))
run("modes", lambda: (client.repeat(1), client.random(1), client.single("oneshot"), client.consume(1),
                      {key: client.status()[key] for key in ("repeat", "random", "single", "consume")})[-1])
run("consume-oneshot-0.24", lambda: client.consume("oneshot"))
run("crossfade-3", lambda: client.crossfade(3))

# Stored playlists.
run("save", lambda: client.save("mix"))
run("listplaylists", lambda: [entry["playlist"] for entry in client.listplaylists()])
run("listplaylist", lambda: client.listplaylist("mix"))
run("playlistadd", lambda: client.playlistadd("mix", "03-noon-pluck-22k-mono.mp3"))
run("rename", lambda: client.rename("mix", "mix2"))
run("bad-name", lambda: client.save("../escape"))
run("rm", lambda: client.rm("mix2"))

# Messages, with a second client idling for them.
listener = mpd.MPDClient()
listener.timeout = 10
listener.connect(SOCKET)
listener.subscribe("queueplayerd")
run("channels", lambda: client.channels())
woken = []
idler = threading.Thread(target=lambda: woken.extend(listener.idle("message")))
idler.start()
run("sendmessage", lambda: client.sendmessage("queueplayerd", '{"aps":{"content-available":1}}'))
idler.join(10)
emit("idle-message", ok=woken)
run("readmessages", lambda: listener.readmessages())
run("sendmessage-nobody", lambda: client.sendmessage("nobody-here", "x"))
listener.close()
client.close()
