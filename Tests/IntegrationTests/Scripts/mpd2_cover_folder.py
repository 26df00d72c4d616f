"""python-mpd2 asks for a folder's cover as Cantata does: `albumart "Artist - Album/" 0`.

Usage: /usr/bin/python3 mpd2_cover_folder.py SOCKET OUTDIR

The daemon's music directory is the one CoverFolderTests.swift builds. The covers received
are written to OUTDIR (folder.bin, folder-no-slash.bin) for the test to compare byte for
byte. Prints one JSON object per line: {"step": NAME, "ok": VALUE} or
{"step": NAME, "error": "Type: message"}.
"""
import sys

from pictures import connect, save
from steps import run

SOCKET, OUTDIR = sys.argv[1], sys.argv[2]

client = connect(SOCKET)

# Small chunks: python-mpd2 asks for the next one until it has `size` bytes.
run("binarylimit", lambda: client.binarylimit(1024))
run("folder", lambda: save(OUTDIR, "folder.bin", client.albumart("Artist - Album/")))
run("folder-no-slash", lambda: save(OUTDIR, "folder-no-slash.bin", client.albumart("Artist - Album")))
run("folder-none", lambda: client.albumart("Empty/"))
run("folder-outside", lambda: client.albumart("../"))
run("ping", lambda: client.ping())
