"""Writes an ID3v2 tag into an MP3 file with mutagen, for the library tag tests.

Usage: /usr/bin/python3 tag_mp3.py FILE [--v23] [--v1] FRAME=VALUE... [APIC=MIME:PATH]

FRAME is an ID3v2 text frame id (TPE1, TPE2, TPOS, ...); a VALUE with `||` holds several
values (NUL-separated in ID3v2.4). TXXX:DESCRIPTION=VALUE writes a user-defined frame.
APIC=MIME:PATH embeds the bytes of PATH as the front cover. --v23 writes ID3v2.3 instead
of 2.4; --v1 writes an ID3v1 tag only (TIT2, TPE1, TALB, TYER/TDRC, TRCK), no ID3v2.
"""
import sys

from mutagen import id3

path = sys.argv[1]
options = [argument for argument in sys.argv[2:] if argument.startswith("--")]
pairs = [argument.split("=", 1) for argument in sys.argv[2:] if not argument.startswith("--")]

tag = id3.ID3()
for key, value in pairs:
    if key == "APIC":
        mime, picture = value.split(":", 1)
        with open(picture, "rb") as source:
            tag.add(id3.APIC(encoding=3, mime=mime, type=3, desc="cover", data=source.read()))
    elif key.startswith("TXXX:"):
        tag.add(id3.TXXX(encoding=3, desc=key[5:], text=value.split("||")))
    else:
        tag.add(getattr(id3, key)(encoding=3, text=value.split("||")))

if "--v1" in options:
    tag.save(path, v1=2, v2_version=4)
    id3.ID3(path).delete(path, delete_v1=False, delete_v2=True)
else:
    tag.save(path, v1=0, v2_version=3 if "--v23" in options else 4)
