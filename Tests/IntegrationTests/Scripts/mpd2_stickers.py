"""python-mpd2 (Debian's python3-mpd) over TCP against a queueplayerd with stickers:
refused without admin, then set, get, list, find with filters, sort and window, delete.

Usage: /usr/bin/python3 mpd2_stickers.py HOST PORT

The daemon's music directory holds a.mp3, b.mp3, dir/c.mp3 and dirx/d.mp3; it runs with
--password reader@read,add,player,control and --password full@read,add,player,control,admin,
no default permissions. Prints one JSON step per line (steps.py); StickerDaemonTests checks them.
"""
import sys

import mpd

import steps

HOST, PORT = sys.argv[1], int(sys.argv[2])

client = mpd.MPDClient()
client.timeout = 5
client.connect(HOST, PORT)


def found(items):
    """sticker find's song dicts as [file, value] pairs (python-mpd2 keeps `name=value`)."""
    return [[item["file"], item["sticker"]] for item in items]


steps.run("none.get", lambda: client.sticker_get("song", "a.mp3", "rating"))
client.password("reader")
steps.run("reader.get", lambda: client.sticker_get("song", "a.mp3", "rating"))
steps.run("reader.commands", lambda: "sticker" in client.commands())
client.password("full")
steps.run("full.commands", lambda: "sticker" in client.commands())
for uri, value in [("a.mp3", "5"), ("b.mp3", "10"), ("dir/c.mp3", "3"), ("dirx/d.mp3", "7")]:
    steps.run("set." + uri, lambda: client.sticker_set("song", uri, "rating", value))
steps.run("set.playcount", lambda: client.sticker_set("song", "a.mp3", "playcount", "2"))
steps.run("get", lambda: client.sticker_get("song", "a.mp3", "rating"))
steps.run("list", lambda: client.sticker_list("song", "a.mp3"))
steps.run("find.all", lambda: client.sticker_find("song", "", "rating"), found)
steps.run("find.dir", lambda: client.sticker_find("song", "dir", "rating"), found)
steps.run("find.less", lambda: client.sticker_find("song", "", "rating", "<", "5"), found)
steps.run("find.greater", lambda: client.sticker_find("song", "", "rating", ">", "5"), found)
steps.run("find.equal", lambda: client.sticker_find("song", "", "rating", "=", "10"), found)
steps.run("find.sort", lambda: client.sticker_find("song", "", "rating", "sort", "-value_int"), found)
steps.run("find.window", lambda: client.sticker_find("song", "", "rating", "sort", "value_int", "window", "1:3"), found)
steps.run("find.badop", lambda: client.sticker_find("song", "", "rating", "~", "5"))
steps.run("get.nosong", lambda: client.sticker_get("song", "nosuch.mp3", "rating"))
steps.run("get.none", lambda: client.sticker_get("song", "b.mp3", "nosuch"))
steps.run("get.domain", lambda: client.sticker_get("album", "x", "rating"))
steps.run("delete.one", lambda: client.sticker_delete("song", "a.mp3", "playcount"))
steps.run("delete.again", lambda: client.sticker_delete("song", "a.mp3", "playcount"))
steps.run("list.after", lambda: client.sticker_list("song", "a.mp3"))
client.close()
