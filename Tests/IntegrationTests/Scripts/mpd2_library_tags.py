"""python-mpd2 against queueplayerd: the tags beyond the first six, and cover art in chunks.

Usage: /usr/bin/python3 mpd2_library_tags.py SOCKET OUTDIR

The daemon's music directory is the one LibraryTagsTests.swift builds, its song database
built. The pictures received are written to OUTDIR (albumart.bin, readpicture.bin) for the
test to compare byte for byte. Prints one JSON object per line: {"step": NAME, "ok": VALUE}
or {"step": NAME, "error": "Type: message"}.
"""
import sys

from pictures import connect, save as save_in
from steps import run

SOCKET, OUTDIR = sys.argv[1], sys.argv[2]

client = connect(SOCKET)


def save(name, reply):
    return save_in(OUTDIR, name, reply)


# Small chunks: python-mpd2 asks for the next one until it has `size` bytes.
run("binarylimit", lambda: client.binarylimit(1024))
run("albumart", lambda: save("albumart.bin", client.albumart("Album/01.mp3")))
run("readpicture", lambda: save("readpicture.bin", client.readpicture("Album/01.mp3")))
run("readpicture-none", lambda: client.readpicture("Album/02.mp3"))
run("albumart-none", lambda: client.albumart("Other/03.mp3"))

run("list-albumartist", lambda: [entry["albumartist"] for entry in client.list("albumartist")])
run("find-composer", lambda: [song["file"] for song in client.find("composer", "J. S. Bach")])
run("find-albumartist", lambda: [song["file"] for song in client.find("(AlbumArtist == 'Various Artists')")])
run("song-tags", lambda: {key: song[key] for song in client.find("file", "Album/01.mp3")
                          for key in ("albumartist", "composer", "disc", "track", "date", "artist", "musicbrainz_albumid")})
run("count-group-disc", lambda: client.count("album", "Tagged Album", "group", "disc"))
run("sticker", lambda: client.sticker_get("song", "Album/01.mp3", "rating"))
run("ping", lambda: client.ping())
