#!/usr/bin/python3
"""The WebSocket's chapter events and commands (docs/websocket.md, "Chapters"), for
ChapterWebSocketTests; the client and the step format are ws_api.py's.

    ws_chapters.py BASE_URL SCENARIO [ARGS...]
"""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ws_api import Client, step  # noqa: E402


async def scenario_chapters():
    """`play 0` (a song with three chapters): its list, the chapter heard, a seek's chapter, `chapters`."""
    c = await Client.open()
    step("play", (await c.request({"command": "play 0"})).get("ok"))
    got = await c.wait_event(lambda e: e.get("event") == "chapters" and e.get("chapters"), 5)
    step("list event", got and got[1])
    got = await c.wait_event(lambda e: e.get("event") == "chapter" and e.get("chapter") == 1, 5)
    step("first", got and got[1])
    step("seek", (await c.request({"command": "seekchapter 3"})).get("ok"))
    got = await c.wait_event(lambda e: e.get("event") == "chapter" and e.get("chapter") == 3, 5)
    step("third", got and got[1])
    step("list", (await c.request({"command": "chapters"})).get("ok"))
    step("bad", (await c.request({"command": "seekchapter 99"})).get("error"))
    await c.close()


if __name__ == "__main__":
    # ws_api.py's own entry point picks the scenario by name, this one's among them.
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ws_api.py"), run_name="__main__",
                   init_globals={"scenario_chapters": scenario_chapters})
