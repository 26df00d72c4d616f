"""The step protocol of the python-mpd2 test scripts: one JSON object per line,
{"step": NAME, "ok": VALUE} or {"step": NAME, "error": "Type: message"}."""
import json


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def run(step, function, shape=lambda value: value):
    """Runs `function`, printing its value (through `shape`) or its error; the script goes on."""
    try:
        value = function()
    except Exception as error:
        emit(step, error="%s: %s" % (type(error).__name__, error))
        return None
    emit(step, ok=shape(value))
    return value
