#!/usr/bin/python3
"""Waits on the WebSocket API (docs/websocket.md) for a stream's title, for LiveStreamDaemonTests.

    ws_stream.py BASE_URL TITLE

Connects to BASE_URL/ws with Debian's python3-websockets, prints `connected`, then prints each
`stream` event as JSON, and exits 0 once one carries TITLE (1 after 20 s without it).
"""
import asyncio
import json
import sys

import websockets


async def main():
    url = sys.argv[1].rstrip("/").replace("http://", "ws://") + "/ws"
    title = sys.argv[2]
    async with websockets.connect(url, open_timeout=5, ping_interval=None) as ws:
        print("connected", flush=True)
        try:
            async with asyncio.timeout(20) if hasattr(asyncio, "timeout") else _deadline(20):
                async for text in ws:
                    event = json.loads(text)
                    if event.get("event") == "stream":
                        print(json.dumps(event), flush=True)
                        if event.get("title") == title:
                            return 0
        except (asyncio.TimeoutError, TimeoutError):
            pass
    return 1


class _deadline:
    """asyncio.timeout for Pythons before 3.11."""

    def __init__(self, seconds):
        self.seconds = seconds

    async def __aenter__(self):
        task = asyncio.current_task()
        self.handle = asyncio.get_running_loop().call_later(self.seconds, task.cancel)

    async def __aexit__(self, kind, value, traceback):
        self.handle.cancel()
        if kind is asyncio.CancelledError:
            raise asyncio.TimeoutError()


sys.exit(asyncio.run(main()))
