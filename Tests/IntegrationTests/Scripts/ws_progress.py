#!/usr/bin/python3
"""Downloads' progress and location events over the WebSocket API (docs/websocket.md), with
Python's `websockets`, for WebProgressEventsTests. Uses ws_api.py's client and step format.

    ws_progress.py BASE_URL SCENARIO [ARGS...]
"""
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ws_api import Client, fetch_now, step  # noqa: E402


async def arrivals(client, timeout):
    """Each message as (arrival time, data), until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while (got := await client.receive(deadline - time.monotonic())) is not None:
        yield got


async def gather(client, until, timeout, kinds):
    """Events of `kinds` (with their arrival times) until `until(data)` holds for one, or the deadline."""
    events = []
    async for at, data in arrivals(client, timeout):
        if data.get("event") in kinds:
            events.append([at, data])
            if until(data):
                return events, True
    return events, False


async def scenario_downloads():
    """One client from before the download to its end (the daemon fetches its feed only when this
    client pushes); then a second one, which gets the list at once."""
    a = await Client.open()
    step("push", await fetch_now(a))
    events, done = await gather(a, lambda d: d.get("event") == "download" and d.get("state") in ("done", "failed"),
                                90, ("download", "downloads"))
    step("events", events)
    step("ended", done)
    b = await Client.open()
    first, _ = await gather(b, lambda d: d.get("event") == "download", 5, ("download", "downloads"))
    step("on connect", [data for _, data in first])
    await a.close()
    await b.close()


async def scenario_location(last_time, expected_region):
    """One client follows the drive to its last fix (`last_time`, as `location` prints it): the
    history it got on connecting, then each fix; a second client then gets the history at once."""
    a = await Client.open()
    track = []
    pushed = []
    regions = []
    async for _, data in arrivals(a, 60):
        kind = data.get("event")
        if kind == "locations":
            track = list(data["fixes"])
        elif kind == "location":
            track.append(data)
            pushed.append(data)
        elif kind == "region":
            regions.append(data)
        if track and track[-1]["time"] == last_time and (not expected_region or len(regions) >= 1):
            break
    step("pushed", pushed)
    step("track", track[-100:])
    step("regions", regions)
    b = await Client.open()
    history, found = await gather(b, lambda d: d.get("event") == "locations", 5, ("locations",))
    step("on connect", history[-1][1]["fixes"] if found else None)
    await a.close()
    await b.close()


SCENARIOS = {"downloads": scenario_downloads, "location": scenario_location}

if __name__ == "__main__":
    scenario = SCENARIOS.get(sys.argv[2])
    if scenario is None:
        step("scenario", error=f"no scenario {sys.argv[2]}: {sorted(SCENARIOS)}")
        sys.exit(2)
    try:
        asyncio.run(scenario(*sys.argv[3:]))
    except Exception as error:  # a step, so that the test shows it
        step("exception", error=f"{type(error).__name__}: {error}")
