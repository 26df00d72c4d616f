"""The step protocol of the python-mpd2 test scripts: one JSON object per line,
{"step": NAME, "ok": VALUE} or {"step": NAME, "error": "Type: message"}."""
import json
import sys
import threading

_write = threading.Lock()


def emit(step, **fields):
    """Prints one step as one line. A script's threads may emit at the same moment: `print` writes
    the text and the newline separately, so two lines could interleave into one that parses as
    neither; the line goes out whole, under a lock."""
    line = json.dumps({"step": step, **fields}) + "\n"
    with _write:
        sys.stdout.write(line)
        sys.stdout.flush()


def run(step, function, shape=lambda value: value):
    """Runs `function`, printing its value (through `shape`) or its error; the script goes on."""
    try:
        value = function()
    except Exception as error:
        emit(step, error="%s: %s" % (type(error).__name__, error))
        return None
    emit(step, ok=shape(value))
    return value
