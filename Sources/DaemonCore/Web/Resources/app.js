// queueplayerd's page: plain JavaScript over the WebSocket API (docs/websocket.md).
"use strict";

const $ = (id) => document.getElementById(id);
let socket = null;
let nextId = 1;
const pending = new Map();
let retryDelay = 500;

// What the page shows, from the replies and the pushed events.
const view = {
  state: "stop", songid: null, elapsed: 0, duration: 0,
  // The last tick: its elapsed time, and when it arrived (performance.now()), to move the bar between ticks.
  tickElapsed: 0, tickAt: 0,
};

function connect() {
  const token = new URLSearchParams(location.search).get("token");
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" +
    (token ? "?token=" + encodeURIComponent(token) : "");
  socket = new WebSocket(url);
  socket.onopen = () => {
    retryDelay = 500;
    setConnection(true);
    send({ subscribe: "time", interval: 0.1 });
    refreshAll();
  };
  socket.onmessage = (message) => {
    let data;
    try { data = JSON.parse(message.data); } catch (_) { return; }
    if (data.id !== undefined && pending.has(data.id)) {
      const { resolve } = pending.get(data.id);
      pending.delete(data.id);
      resolve(data);
    } else if (data.event) {
      onEvent(data);
    }
  };
  socket.onclose = () => {
    setConnection(false);
    for (const { resolve } of pending.values()) resolve({ error: { message: "disconnected" } });
    pending.clear();
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10000);
  };
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

/** Runs an MPD command line; resolves with its `ok` value (or null, after showing the error). */
function command(line) {
  return new Promise((resolve) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) { resolve(null); return; }
    const id = nextId++;
    pending.set(id, { resolve: (answer) => {
      if (answer.error) { showError(line + ": " + answer.error.message); resolve(null); } else { resolve(answer.ok); }
    } });
    socket.send(JSON.stringify({ id, command: line }));
  });
}

function showError(text) {
  const element = $("error");
  element.textContent = text;
  element.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { element.hidden = true; }, 5000);
}

function setConnection(on) {
  const element = $("connection");
  element.textContent = on ? "connected" : "offline";
  element.className = "connection " + (on ? "on" : "off");
}

function refreshAll() { refreshStatus(); refreshSong(); refreshQueue(); refreshOutputs(); }

async function refreshStatus() {
  const status = await command("status");
  if (!status) return;
  view.state = status.state;
  view.songid = status.songid ?? null;
  view.duration = status.duration ?? 0;
  view.elapsed = status.elapsed ?? 0;
  view.tickElapsed = view.elapsed;
  view.tickAt = performance.now();
  $("state").textContent = status.state;
  $("playpause").classList.toggle("playing", status.state === "play");
  if (status.appstate) $("appstate").textContent = status.appstate;
  if (typeof status.volume === "number" && status.volume >= 0 && document.activeElement !== $("volume")) {
    $("volume").value = status.volume;
    $("volumeValue").textContent = status.volume;
  }
  showDownloads(status.transfers ?? 0);
  markCurrent();
  drawTime(view.elapsed);
}

async function refreshSong() {
  const song = await command("currentsong");
  if (song) showSong(song);
}

function showSong(song) {
  if (!song || !song.file) {
    $("title").textContent = "Nothing playing";
    $("artist").textContent = "";
    $("album").textContent = "";
    return;
  }
  // A stream: its name, and the title it announces.
  const title = song.Title || song.Name || song.file.split("/").pop();
  $("title").textContent = Array.isArray(title) ? title.join(", ") : title;
  const join = (value) => Array.isArray(value) ? value.join(", ") : (value || "");
  $("artist").textContent = join(song.Artist) || (song.Title && song.Name ? song.Name : "");
  $("album").textContent = join(song.Album);
  if (typeof song.duration === "number") view.duration = song.duration;
  if (typeof song.Id === "number") { view.songid = song.Id; markCurrent(); }
}

async function refreshQueue() {
  const entries = await command("playlistinfo");
  if (!entries) return;
  const list = $("queue");
  list.replaceChildren(...entries.map((entry) => {
    const item = document.createElement("li");
    item.dataset.songid = entry.Id;
    const title = entry.Title || entry.file.split("/").pop();
    item.textContent = Array.isArray(title) ? title.join(", ") : title;
    const meta = document.createElement("span");
    meta.className = "meta";
    const artist = Array.isArray(entry.Artist) ? entry.Artist.join(", ") : (entry.Artist || "");
    meta.textContent = [artist, formatTime(entry.duration ?? entry.Time ?? 0)].filter(Boolean).join(" · ");
    item.append(meta);
    item.addEventListener("click", () => command("playid " + entry.Id));
    return item;
  }));
  markCurrent();
}

function markCurrent() {
  for (const item of $("queue").children) {
    item.classList.toggle("current", view.songid !== null && Number(item.dataset.songid) === view.songid);
  }
}

async function refreshOutputs() {
  const outputs = await command("outputs");
  if (!outputs) return;
  $("outputs").replaceChildren(...outputs.map((output) => {
    const item = document.createElement("li");
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = output.outputenabled === 1;
    box.dataset.outputid = output.outputid;
    box.addEventListener("change", () => command("toggleoutput " + output.outputid));
    label.append(box, " " + output.outputname + (output.plugin ? " (" + output.plugin + ")" : ""));
    item.append(label);
    return item;
  }));
}

function showDownloads(count) {
  const element = $("downloads");
  element.hidden = count === 0;
  element.textContent = count + (count === 1 ? " download" : " downloads");
}

function onEvent(event) {
  switch (event.event) {
    case "time":
      view.state = event.state;
      view.songid = event.songid;
      view.tickElapsed = event.elapsed;
      view.tickAt = performance.now();
      break;
    case "currentItem":
      showSong(event.song);
      refreshStatus();
      break;
    case "idle":
      for (const changed of event.changed) {
        if (changed === "player") { refreshStatus(); refreshSong(); }
        else if (changed === "playlist") { refreshQueue(); refreshStatus(); }
        else if (changed === "mixer" || changed === "options") refreshStatus();
        else if (changed === "output") { refreshOutputs(); refreshStatus(); }
      }
      break;
    case "lifecycle":
      $("appstate").textContent = event.state;
      break;
    case "stream":
      // A stream's new title or name (issue 29), shown as currentsong's Title and Name are.
      if (event.songid === view.songid && (event.title || event.name)) {
        $("title").textContent = event.title || event.name;
        $("artist").textContent = event.title && event.name ? event.name : "";
      }
      break;
    case "downloads":
      showDownloads(event.active);
      break;
  }
}

function formatTime(seconds) {
  seconds = Math.max(0, Math.floor(seconds));
  const minutes = Math.floor(seconds / 60);
  const rest = String(seconds % 60).padStart(2, "0");
  return minutes >= 60 ? Math.floor(minutes / 60) + ":" + String(minutes % 60).padStart(2, "0") + ":" + rest
    : minutes + ":" + rest;
}

function drawTime(elapsed) {
  const duration = view.duration;
  $("elapsed").textContent = formatTime(elapsed);
  $("duration").textContent = formatTime(duration);
  $("fill").style.width = duration > 0 ? Math.min(100, (elapsed / duration) * 100) + "%" : "0";
}

// Between two ticks the bar moves on by the clock, at most one tick interval ahead of the last.
function animate() {
  if (view.state === "play") {
    const ahead = Math.min((performance.now() - view.tickAt) / 1000, 0.25);
    drawTime(view.tickElapsed + ahead);
  }
  requestAnimationFrame(animate);
}

function setUp() {
  $("prev").addEventListener("click", () => command("previous"));
  $("next").addEventListener("click", () => command("next"));
  $("playpause").addEventListener("click", () => command(view.state === "play" ? "pause 1" : "play"));
  $("bar").addEventListener("click", (click) => {
    const box = $("bar").getBoundingClientRect();
    if (view.duration > 0 && box.width > 0) {
      const fraction = Math.min(Math.max((click.clientX - box.left) / box.width, 0), 1);
      command("seekcur " + (fraction * view.duration).toFixed(3));
    }
  });
  $("volume").addEventListener("input", () => { $("volumeValue").textContent = $("volume").value; });
  $("volume").addEventListener("change", () => command("setvol " + $("volume").value));
  connect();
  requestAnimationFrame(animate);
}

setUp();
