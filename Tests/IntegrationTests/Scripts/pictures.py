"""What the python-mpd2 scripts that fetch pictures share: a client that knows `binarylimit`,
and a reply's bytes saved for the test to compare."""
import os

import mpd

# python-mpd2 3.0 predates `binarylimit`; it takes no reply but OK.
if not hasattr(mpd.MPDClient, "binarylimit"):
    mpd.MPDClient.add_command("binarylimit", mpd.MPDClient._parse_nothing)


def connect(socket):
    client = mpd.MPDClient()
    client.timeout = 10
    client.connect(socket)
    return client


def save(outdir, name, reply):
    """Writes the reply's bytes to OUTDIR/NAME; returns the rest of the reply and their length."""
    with open(os.path.join(outdir, name), "wb") as out:
        out.write(reply["binary"])
    return {key: value for key, value in reply.items() if key != "binary"} | {"length": len(reply["binary"])}
