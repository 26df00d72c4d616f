#!/usr/bin/python3
"""The WebSocket API (docs/websocket.md) driven by a real client, Python's `websockets`
(Debian's python3-websockets 10, asyncio), for WebSocketAPITests.

    ws_api.py BASE_URL SCENARIO [ARGS...]

Prints one JSON object a line: {"step": NAME, "ok": VALUE} or {"step": NAME, "error": TEXT}.
The Swift test makes the judgements; this script only waits for conditions, with deadlines.
"""
import asyncio
import base64
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request

import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatusCode

BASE = sys.argv[1].rstrip("/")
WS = BASE.replace("http://", "ws://") + "/ws"


def step(name, ok=None, error=None):
    print(json.dumps({"step": name, "ok": ok} if error is None else {"step": name, "error": error}), flush=True)


class Client:
    """A connection with a reader that keeps events apart from answers."""

    @classmethod
    async def open(cls, url=WS, **kwargs):
        client = cls()
        client.ws = await websockets.connect(url, open_timeout=5, max_size=None, ping_interval=None, **kwargs)
        client.next_id = 1
        client.events = []
        return client

    async def receive(self, timeout):
        try:
            text = await asyncio.wait_for(self.ws.recv(), max(timeout, 0))
        except asyncio.TimeoutError:
            return None
        return time.monotonic(), json.loads(text)

    async def request(self, message, timeout=5):
        """Sends `message` with a fresh id; returns the answer, keeping events that come first."""
        ident = self.next_id
        self.next_id += 1
        message = dict(message, id=ident)
        await self.ws.send(json.dumps(message))
        return await self.answer(ident, timeout)

    async def answer(self, ident, timeout=5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = await self.receive(deadline - time.monotonic())
            if got is None:
                break
            at, data = got
            if data.get("id") == ident:
                return data
            self.events.append((at, data))
        raise TimeoutError(f"no answer to request {ident}")

    async def raw(self, text, timeout=5):
        """Sends `text` as it is; returns the first message that is not an event."""
        await self.ws.send(text)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = await self.receive(deadline - time.monotonic())
            if got is None:
                break
            if "event" not in got[1]:
                return got[1]
            self.events.append(got)
        raise TimeoutError("no answer")

    async def wait_event(self, predicate, timeout):
        """The first event (kept or new) for which `predicate` holds, or None at the deadline."""
        for index, (at, data) in enumerate(self.events):
            if predicate(data):
                del self.events[index]
                return at, data
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = await self.receive(deadline - time.monotonic())
            if got is None:
                return None
            if predicate(got[1]):
                return got
            self.events.append(got)
        return None

    async def collect(self, seconds, predicate):
        """Events for which `predicate` holds over `seconds`, with their arrival times."""
        out = []
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            got = await self.receive(left)
            if got is None:
                return out
            if predicate(got[1]):
                out.append(got)
            else:
                self.events.append(got)

    async def close(self):
        await self.ws.close()


async def fetch_now(client):
    """A silent push (the `queueplayerd` channel's message, as `mpc sendmessage` sends it): the
    daemon fetches its feeds now. For tests whose daemon runs with `--fetch-interval never`, so
    that nothing is fetched or downloaded before a client is there to watch it."""
    return await client.request({"command": r'sendmessage queueplayerd "{\"aps\":{\"content-available\":1}}"'})


def is_tick(data):
    return data.get("event") == "time"


async def wait_playing(client, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await client.request({"command": "status"}))["ok"]
        if status.get("state") == "play" and status.get("elapsed", 0) > 0.2:
            return status
        await asyncio.sleep(0.02)
    raise TimeoutError("never playing")


async def scenario_commands():
    c = await Client.open()
    step("status", await c.request({"command": "status"}))
    step("playlistinfo", await c.request({"command": "playlistinfo"}))
    step("outputs", await c.request({"command": "outputs"}))
    step("commands", await c.request({"command": "commands"}))
    step("currentsong", await c.request({"command": "currentsong"}))
    step("string id", await c.request({"command": "ping"}))
    step("no such song", await c.request({"command": "playid 999"}))
    step("unknown command", await c.request({"command": "frobnicate"}))
    step("idle refused", await c.request({"command": "idle"}))
    step("config refused", await c.request({"command": "config"}))
    step("bad json", await c.raw("{not json"))
    step("not an object", await c.raw("[1,2]"))
    step("unknown request", await c.request({"foo": 1}))
    step("interval too short", await c.request({"subscribe": "time", "interval": 0.001}))
    step("interval too long", await c.request({"subscribe": "time", "interval": 61}))
    step("interval not a number", await c.request({"subscribe": "time", "interval": "fast"}))
    step("interval boolean", await c.request({"subscribe": "time", "interval": True}))
    step("bad boundary", await c.request({"subscribe": "boundary", "times": []}))
    step("unknown subscription", await c.request({"unsubscribe": 77}))
    step("multi-line command", await c.request({"command": "status\nclear"}))
    await c.ws.send(b"\x00\x01")
    got = await c.wait_event(lambda d: "error" in d, 5)
    step("binary message", got[1] if got else None)
    step("still usable", await c.request({"command": "status"}))
    await c.close()


async def scenario_line_breaks():
    """Commands with CR or LF inside: each must be refused whole, running nothing."""
    c = await Client.open()
    step("volume before", (await c.request({"command": "status"}))["ok"].get("volume"))
    for name, line in [("crlf", "status\r\nsetvol 5"), ("cr", "status\rsetvol 6"), ("lf", "status\nsetvol 7"),
                       ("crlf idle", "status\r\nidle"), ("crlf list", "command_list_begin\r\nsetvol 8\r\ncommand_list_end"),
                       ("crlf close", "ping\r\nclose")]:
        step(name, await c.request({"command": line}))
    step("volume after", (await c.request({"command": "status"}))["ok"].get("volume"))
    step("still usable", await c.request({"command": "ping"}))
    await c.close()


async def scenario_ticks(interval, seconds):
    interval, seconds = float(interval), float(seconds)
    c = await Client.open()
    await wait_playing(c)
    answer = await c.request({"subscribe": "time", "interval": interval})
    step("subscribed", answer)
    ticks = await c.collect(seconds, is_tick)
    step("ticks", [[at, d["elapsed"], d["songid"], d["state"], d["subscription"]] for at, d in ticks])
    step("unsubscribe", await c.request({"unsubscribe": "time"}))
    # Ticks already on their way may still come; none may come a while later.
    await c.collect(0.3, is_tick)
    step("after unsubscribe", len(await c.collect(0.5, is_tick)))
    await c.close()


async def scenario_two_subscriptions():
    c = await Client.open()
    await wait_playing(c)
    a = (await c.request({"subscribe": "time", "interval": 0.05}))["ok"]["subscription"]
    b = (await c.request({"subscribe": "time", "interval": 0.2}))["ok"]["subscription"]
    ticks = await c.collect(2.0, is_tick)
    step("counts", {"fast": sum(1 for _, d in ticks if d["subscription"] == a),
                    "slow": sum(1 for _, d in ticks if d["subscription"] == b)})
    step("unsubscribe one", await c.request({"unsubscribe": a}))
    await c.collect(0.2, is_tick)
    later = await c.collect(1.0, is_tick)
    step("left", sorted({d["subscription"] for _, d in later}) + [b * 1000])
    await c.close()


async def scenario_pause():
    c = await Client.open()
    await wait_playing(c)
    await c.request({"subscribe": "time", "interval": 0.05})
    step("before", len(await c.collect(0.5, is_tick)))
    await c.request({"command": "pause 1"})
    # A tick computed just before the pause may still be on its way.
    await c.collect(0.15, is_tick)
    step("while paused", len(await c.collect(1.0, is_tick)))
    await c.request({"command": "pause 0"})
    first = await c.wait_event(is_tick, 3)
    step("resumed", first[1] if first else None)
    await c.close()


async def scenario_boundary():
    c = await Client.open()
    await wait_playing(c)
    await c.request({"command": "seekcur 1"})
    answer = await c.request({"subscribe": "boundary", "times": [1.6, 2.2]})
    step("subscribed", answer)
    pushes = []
    for _ in range(2):
        got = await c.wait_event(lambda d: d.get("event") == "boundary", 4)
        if got:
            pushes.append(got[1])
    step("pushes", pushes)
    step("unsubscribe", await c.request({"unsubscribe": answer["ok"]["subscription"]}))
    await c.close()


async def scenario_events():
    a, b = await Client.open(), await Client.open()
    await wait_playing(a)
    songid = (await a.request({"command": "status"}))["ok"]["songid"]
    await a.request({"command": "next"})
    item = await b.wait_event(lambda d: d.get("event") == "currentItem" and d.get("song") and d["song"].get("Id") != songid, 5)
    step("currentItem", item[1] if item else None)
    idle = await b.wait_event(lambda d: d.get("event") == "idle" and "player" in d["changed"], 5)
    step("idle player", idle[1] if idle else None)
    await a.request({"command": "setvol 40"})
    mixer = await b.wait_event(lambda d: d.get("event") == "idle" and "mixer" in d["changed"], 5)
    step("idle mixer", mixer[1] if mixer else None)
    await b.request({"command": "subscribe news"})
    await a.request({"command": "sendmessage news hello"})
    message = await b.wait_event(lambda d: d.get("event") == "idle" and "message" in d["changed"], 5)
    step("idle message", message[1] if message else None)
    step("readmessages", await b.request({"command": "readmessages"}))
    await a.close()
    await b.close()


async def scenario_sleep():
    a, b = await Client.open(), await Client.open()
    await wait_playing(a)
    step("sleep set", await a.request({"command": "sleep 1800"}))
    options = await b.wait_event(lambda d: d.get("event") == "idle" and "options" in d["changed"], 5)
    step("idle options", options[1] if options else None)
    step("status sleeping", await a.request({"command": "status"}))
    step("sleep refused", await a.request({"command": "sleep -5"}))
    step("sleep off", await a.request({"command": "sleep off"}))
    step("status awake", await a.request({"command": "status"}))
    step("inprogress", await a.request({"command": "inprogress"}))
    await a.close()
    await b.close()


async def scenario_permissions(password):
    """A daemon where nothing is allowed without `password` (`--default-permissions ""`): a client
    without it is refused what needs `read` and is pushed nothing while another, with it, hears the
    player; once it gives the password it may subscribe and is pushed events too."""
    a, b = await Client.open(), await Client.open()
    step("status refused", await a.request({"command": "status"}))
    step("subscribe refused", await a.request({"subscribe": "time", "interval": 0.01}))
    step("ping", await a.request({"command": "ping"}))
    step("b password", await b.request({"command": f"password {password}"}))
    step("b status", await b.request({"command": "status"}))
    await b.request({"command": "pause 1"})
    idle = await b.wait_event(lambda d: d.get("event") == "idle" and "player" in d["changed"], 5)
    step("b idle", idle[1] if idle else None)
    step("wrong password", await a.request({"command": "password not-it"}))
    # Answered on the partition's queue, after the idle event was handed out there: an event
    # pushed to this client would have come first. Taken before the right password: once that
    # gives `read`, what the client is sent on connecting may come before its answer or after.
    step("a events before its password", [data for _, data in a.events])
    step("a password", await a.request({"command": f"password {password}"}))
    step("a subscribe", await a.request({"subscribe": "time", "interval": 0.01}))
    await b.request({"command": "pause 0"})
    idle = await a.wait_event(lambda d: d.get("event") == "idle" and "player" in d["changed"], 5)
    step("a idle", idle[1] if idle else None)
    tick = await a.wait_event(is_tick, 5)
    step("a tick", tick[1] if tick else None)
    await a.close()
    await b.close()


async def scenario_guessing(password):
    """A guesser on the WebSocket from loopback: its fourth wrong password is answered only after
    the wait; another client from loopback gives the right one meanwhile, and so does the guesser
    afterwards. Times are from when the fourth guess was sent."""
    guesser, owner = await Client.open(), await Client.open()
    for attempt in range(1, 4):
        step(f"guess {attempt}", await guesser.request({"command": f"password guess-{attempt}"}))
    ident = guesser.next_id
    guesser.next_id += 1
    sent = time.monotonic()
    await guesser.ws.send(json.dumps({"command": "password guess-4", "id": ident}))
    step("owner password", await owner.request({"command": f"password {password}"}))
    step("owner answered after", time.monotonic() - sent)
    step("guess 4", await guesser.answer(ident, timeout=10))
    step("guess 4 answered after", time.monotonic() - sent)
    step("guesser password", await guesser.request({"command": f"password {password}"}))
    await guesser.close()
    await owner.close()


async def scenario_late_read(password):
    """A client that may read only after its password is sent what a client gets on connecting
    (here the downloads' counts: the daemon has a music directory) then, and not before."""
    a = await Client.open()
    step("status refused", await a.request({"command": "status"}))
    # Two round trips through the partition's queue: the counts a client that may read is sent
    # on connecting would have come by now. Taken before the password, since once it gives
    # `read` they may come before its answer or after.
    step("ping", await a.request({"command": "ping"}))
    step("before the password", [data for _, data in a.events])
    step("password", await a.request({"command": f"password {password}"}))
    counts = await a.wait_event(lambda d: d.get("event") == "downloads", 5)
    step("downloads after the password", counts[1] if counts else None)
    await a.close()


def status_of(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


async def upgrade(url, **kwargs):
    try:
        c = await Client.open(url, **kwargs)
    except InvalidStatusCode as error:
        return {"refused": error.status_code}
    answer = await c.request({"command": "ping"})
    await c.close()
    return {"accepted": answer}


async def scenario_origin():
    host = BASE.split("//", 1)[1]
    step("no origin", await upgrade(WS))
    step("own origin", await upgrade(WS, origin="http://" + host))
    step("other origin", await upgrade(WS, origin="http://evil.example"))
    step("other port", await upgrade(WS, origin="http://" + host.rsplit(":", 1)[0] + ":1"))
    step("rebound host", {"refused": raw_upgrade_status(host, "evil.example:" + host.rsplit(":", 1)[1])})
    step("page", status_of(BASE + "/")[0])
    step("script", status_of(BASE + "/app.js")[0])
    step("elsewhere", status_of(BASE + "/../../etc/passwd")[0])
    step("rebound page", status_of(BASE + "/", {"Host": "evil.example"})[0])
    code, headers = status_of(BASE + "/")
    step("headers", {k.lower(): v for k, v in headers.items() if k.lower() in ("content-security-policy", "x-content-type-options")})


async def scenario_token(token):
    step("no token", await upgrade(WS))
    step("wrong token", await upgrade(WS + "?token=nope"))
    step("query token", await upgrade(WS + "?token=" + token))
    step("bearer token", await upgrade(WS, extra_headers={"Authorization": "Bearer " + token}))
    step("cookie token", await upgrade(WS, extra_headers={"Cookie": "queueplayerd_token=" + token}))
    step("page without", status_of(BASE + "/")[0])
    code, headers = status_of(BASE + "/?token=" + token)
    step("page with", [code, headers.get("Set-Cookie", "")])
    step("script without", status_of(BASE + "/app.js")[0])


def raw_websocket(host, port):
    """A WebSocket opened by hand that will never read: the handshake, then nothing but sends."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Before connecting, so that the window it offers stays small.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return s


def raw_upgrade_status(address, host_header):
    """The status code of an upgrade sent by hand with this Host header."""
    key = base64.b64encode(os.urandom(16)).decode()
    return raw_status(address, f"GET /ws HTTP/1.1\r\nHost: {host_header}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")


def masked_text(text):
    return frame(1, text.encode())


def frame(opcode, payload, masked=True):
    """One whole client frame, masked unless told not to."""
    header = bytes([0x80 | opcode])
    mask_bit = 0x80 if masked else 0
    if len(payload) < 126:
        header += bytes([mask_bit | len(payload)])
    else:
        header += bytes([mask_bit | 126]) + len(payload).to_bytes(2, "big")
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def server_frames(s, timeout=5):
    """The frames the server sends until it closes the connection (or the deadline): [opcode, payload]."""
    s.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    frames = []
    while len(data) >= 2:
        length, at = data[1] & 0x7F, 2
        if length == 126:
            length, at = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, at = int.from_bytes(data[2:10], "big"), 10
        frames.append((data[0] & 0x0F, data[at:at + length]))
        data = data[at + length:]
    return frames


def close_code_after(payload_frame):
    """Sends one frame on a fresh WebSocket; the close code the server answers with, and the
    text messages it sent first."""
    host, port = BASE.split("//", 1)[1].rsplit(":", 1)
    s = raw_websocket(host, int(port))
    try:
        s.sendall(payload_frame)
        frames = server_frames(s)
    finally:
        s.close()
    texts = [payload.decode(errors="replace") for opcode, payload in frames if opcode == 1]
    closes = [int.from_bytes(payload[:2], "big") for opcode, payload in frames if opcode == 8 and len(payload) >= 2]
    # What the server sends on connecting (the starting state) is not an answer: only answers carry an id.
    return {"close": closes[0] if closes else None, "answers": [t for t in texts if '"id"' in t]}


def raw_status(address, request):
    """The status code the server answers a request sent by hand with, or None."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(request.encode())
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                break
            head += chunk
        return int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else None


async def scenario_strict():
    """What RFC 6455 and RFC 9112 refuse: unmasked frames, text that is not UTF-8, two Host headers."""
    address = BASE.split("//", 1)[1]
    ping = json.dumps({"id": 1, "command": "ping"}).encode()
    step("masked", close_code_after(frame(1, ping)))
    step("unmasked", close_code_after(frame(1, ping, masked=False)))
    step("unmasked ping", close_code_after(frame(9, b"hi", masked=False)))
    step("invalid utf-8", close_code_after(frame(1, b'{"id": 1, "command": "ping \xff\xfe"}')))
    step("two hosts upgrade", raw_upgrade_status(address, address + "\r\nHost: evil.example"))
    step("two hosts page", raw_status(address, f"GET / HTTP/1.1\r\nHost: {address}\r\nHost: evil.example\r\n\r\n"))
    step("one host page", raw_status(address, f"GET / HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"))


async def scenario_slow(seconds):
    seconds = float(seconds)
    host, port = BASE.split("//", 1)[1].rsplit(":", 1)
    reader = await Client.open()
    await wait_playing(reader)
    await reader.request({"subscribe": "time", "interval": 0.01})
    slow = raw_websocket(host, int(port))
    slow.sendall(masked_text(json.dumps({"subscribe": "time", "interval": 0.01})))
    # Flood: every `commands` answer is several KiB the client never reads.
    flood = masked_text(json.dumps({"command": "commands"}))
    sent = 0
    pending = b""
    dropped_at = None
    start = time.monotonic()
    ticks = []
    while time.monotonic() - start < seconds:
        if dropped_at is None:
            # Whole frames only: what a send did not take is sent first next time.
            try:
                slow.setblocking(False)
                for _ in range(100):
                    if not pending:
                        pending = flood
                        sent += 1
                    pending = pending[slow.send(pending):]
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                dropped_at = time.monotonic() - start
        ticks += await reader.collect(0.02, is_tick)
    step("sent", sent)
    step("send failed after", dropped_at)
    step("reader ticks", [[at, d["elapsed"]] for at, d in ticks])
    step("reader still answers", await reader.request({"command": "ping"}))
    await reader.close()


async def scenario_limit(count):
    count = int(count)
    clients = [await Client.open() for _ in range(count)]
    for c in clients:
        await c.request({"command": "ping"})
    extra = await Client.open()
    try:
        await asyncio.wait_for(extra.ws.recv(), 5)
        step("extra", "accepted")
    except ConnectionClosed as closed:
        step("extra", {"code": closed.rcvd.code if closed.rcvd else None, "reason": closed.rcvd.reason if closed.rcvd else None})
    await clients.pop().close()
    # Once one goes, a new one gets in (the server counts it gone when its handler ends).
    deadline = time.monotonic() + 5
    result = None
    while time.monotonic() < deadline and result is None:
        try:
            c = await Client.open()
            result = await c.request({"command": "ping"}, timeout=2)
            clients.append(c)
        except (ConnectionClosed, TimeoutError, asyncio.TimeoutError):
            await asyncio.sleep(0.05)
    step("after one left", result)
    for c in clients:
        await c.close()


async def scenario_hold(seconds):
    """Keeps a WebSocket open (for the shutdown test) and reports how it was closed."""
    c = await Client.open()
    await c.request({"subscribe": "time", "interval": 0.1})
    step("open", True)
    deadline = time.monotonic() + float(seconds)
    try:
        while time.monotonic() < deadline:
            await asyncio.wait_for(c.ws.recv(), max(deadline - time.monotonic(), 0))
        step("closed", None)
    except asyncio.TimeoutError:
        step("closed", None)
    except ConnectionClosed as closed:
        step("closed", {"code": closed.rcvd.code if closed.rcvd else None})


# Playback rate, pitch algorithm and skip silence (WebSocketAPITests' rate test).
async def scenario_pace():
    a, b = await Client.open(), await Client.open()
    await wait_playing(a)
    step("rate", await a.request({"command": "rate 2"}))
    options = await b.wait_event(lambda d: d.get("event") == "idle" and "options" in d["changed"], 5)
    step("idle options", options[1] if options else None)
    step("status", await a.request({"command": "status"}))
    step("bad rate", await a.request({"command": "rate abc"}))
    await a.request({"command": "pitchalgorithm varispeed"})
    await a.request({"command": "skipsilence 1"})
    step("status after", await a.request({"command": "status"}))
    await a.request({"subscribe": "time", "interval": 0.1})
    ticks = await a.collect(2.0, is_tick)
    step("ticks", [[at, d["elapsed"], d["songid"]] for at, d in ticks])
    await a.close()
    await b.close()


if __name__ == "__main__":
    name = sys.argv[2].replace("-", "_")
    try:
        asyncio.run(globals()["scenario_" + name](*sys.argv[3:]))
    except Exception as error:  # reported as a step, so the test shows it
        step("exception", error=f"{type(error).__name__}: {error}")
