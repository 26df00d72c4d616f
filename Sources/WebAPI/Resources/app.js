// queueplayerd's page: plain JavaScript over the WebSocket API (docs/websocket.md).
"use strict";

const $ = (id) => document.getElementById(id);
let socket = null;
let nextId = 1;
const pending = new Map();
let retryDelay = 500;
// The password the user gave (memory only, never stored): sent again after a reconnection.
let password = null;
// Whether this connection's time subscription is in place.
let subscribed = false;

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
    subscribed = false;
    start(true);
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

/** Sends a request (`{command: ...}`, `{subscribe: ...}`) with a fresh id; resolves with the whole answer. */
function request(message) {
  return new Promise((resolve) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) { resolve({ error: { message: "disconnected" } }); return; }
    const id = nextId++;
    pending.set(id, { resolve });
    socket.send(JSON.stringify({ ...message, id }));
  });
}

/** Runs an MPD command line; resolves with its `ok` value (or null, after showing the error). */
async function command(line) {
  const answer = await request({ command: line });
  if (answer.error) {
    // Refused for want of a permission: a password may give it.
    if (answer.error.ack === permissionDenied) showLogin(answer.error.message);
    else showError(line + ": " + answer.error.message);
    return null;
  }
  return answer.ok;
}

/** An MPD argument, quoted. */
function quoted(text) {
  return '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
}

const permissionDenied = 4;

/** On each connection (`resend`: the password given before, if any, first) and after a
 * password: everything, or the password form when the daemon lets the page read nothing. */
async function start(resend) {
  if (resend && password !== null) {
    const answer = await request({ command: "password " + quoted(password) });
    // The daemon may have restarted with other passwords.
    if (answer.error) { password = null; showLogin(answer.error.message); return; }
  }
  const status = await request({ command: "status" });
  if (status.error && status.error.ack === permissionDenied) {
    showLogin(password === null ? "" : "this password does not let the page read");
    return;
  }
  $("login").hidden = true;
  if (!subscribed) {
    const answer = await request({ subscribe: "time", interval: 0.1 });
    subscribed = !answer.error;
  }
  refreshAll();
}

function showLogin(message) {
  $("login").hidden = false;
  $("loginMessage").textContent = message;
  $("password").focus();
}

async function logIn(event) {
  event.preventDefault();
  const given = $("password").value;
  const answer = await request({ command: "password " + quoted(given) });
  if (answer.error) { showLogin(answer.error.message); return; }
  password = given;
  $("password").value = "";
  start(false);
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

function refreshAll() { refreshStatus(); refreshSong(); refreshQueue(); refreshOutputs(); refreshInProgress(); refreshChapters(); }

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
  showSleep(status.sleep);
  showPace(status);
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
      refreshChapters();
      break;
    case "idle":
      for (const changed of event.changed) {
        if (changed === "player") { refreshStatus(); refreshSong(); }
        else if (changed === "playlist") { refreshQueue(); refreshStatus(); }
        else if (changed === "mixer" || changed === "options") refreshStatus();
        else if (changed === "output") { refreshOutputs(); refreshStatus(); }
        else if (changed === "sticker") refreshInProgress();
      }
      break;
    case "lifecycle":
      $("appstate").textContent = event.state;
      break;
    case "stream":
      // A stream's new title or name, shown as currentsong's Title and Name are.
      if (event.songid === view.songid && (event.title || event.name)) {
        $("title").textContent = event.title || event.name;
        $("artist").textContent = event.title && event.name ? event.name : "";
      }
      break;
    case "downloads":
      showDownloads(event.active);
      showDownloadCounts(event);
      break;
    case "download":
      showDownload(event);
      break;
    case "locations":
      track.length = 0;
      for (const fix of event.fixes) addFix(fix);
      drawTrack();
      break;
    case "location":
      addFix(event);
      drawTrack();
      break;
    case "chapters":
      showChapters(event.chapters);
      break;
    case "chapter":
      markChapter(event.chapter);
      break;
    case "region":
      $("regionEvent").textContent = (event.state === "enter" ? "Entered " : "Left ") + event.region;
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
    // Item time: at rate 2 the item moves on 2 s a second.
    const ahead = Math.min((performance.now() - view.tickAt) / 1000, 0.25) * (view.rate ?? 1);
    drawTime(view.tickElapsed + ahead);
  }
  requestAnimationFrame(animate);
}

// Podcast downloads: one entry per `download` event's number, with a progress bar.

function formatBytes(bytes) {
  if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + " MB";
  if (bytes >= 1e3) return Math.round(bytes / 1e3) + " kB";
  return bytes + " B";
}

function showDownloadCounts(counts) {
  const parts = [];
  if (counts.active) parts.push(counts.active + " running");
  if (counts.waiting) parts.push(counts.waiting + " waiting");
  if (counts.queued) parts.push(counts.queued + " queued");
  $("downloadCounts").textContent = parts.join(", ");
}

function showDownload(download) {
  const list = $("downloadList");
  let item = list.querySelector('li[data-download="' + download.download + '"]');
  if (download.state === "removed") {
    if (item) item.remove();
    $("downloadsSection").hidden = list.children.length === 0;
    return;
  }
  if (!item) {
    item = document.createElement("li");
    item.dataset.download = download.download;
    const title = document.createElement("span");
    title.className = "title";
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.setAttribute("role", "progressbar");
    const fill = document.createElement("div");
    fill.className = "fill";
    bar.append(fill);
    const meta = document.createElement("span");
    meta.className = "meta";
    item.append(title, bar, meta);
    list.append(item);
  }
  item.className = download.state;
  item.dataset.received = download.received;
  item.querySelector(".title").textContent = download.title || download.path.split("/").pop();
  const fraction = download.state === "done" ? 1
    : download.expected > 0 ? Math.min(download.received / download.expected, 1) : 0;
  const bar = item.querySelector(".bar");
  bar.setAttribute("aria-valuenow", Math.round(fraction * 100));
  item.querySelector(".fill").style.width = fraction * 100 + "%";
  const amount = download.expected ? formatBytes(download.received) + " of " + formatBytes(download.expected)
    : formatBytes(download.received);
  item.querySelector(".meta").textContent = [download.state, amount, download.feed, download.error].filter(Boolean).join(" · ");
  $("downloadsSection").hidden = false;
}

// Location: the last 100 fixes drawn as a track, scaled to their bounding box.
const track = [];
const trackLimit = 100;

function addFix(fix) {
  if (typeof fix.latitude !== "number" || typeof fix.longitude !== "number") return;
  track.push(fix);
  if (track.length > trackLimit) track.splice(0, track.length - trackLimit);
}

function drawTrack() {
  const svg = $("track");
  $("locationSection").hidden = track.length === 0;
  if (track.length === 0) { svg.replaceChildren(); return; }
  const width = 320, height = 200, margin = 10;
  const latitudes = track.map((fix) => fix.latitude), longitudes = track.map((fix) => fix.longitude);
  const minLat = Math.min(...latitudes), maxLat = Math.max(...latitudes);
  const minLon = Math.min(...longitudes), maxLon = Math.max(...longitudes);
  // Equirectangular around the box's middle: a degree of longitude is shorter away from the equator.
  const squeeze = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
  const spanX = (maxLon - minLon) * squeeze, spanY = maxLat - minLat;
  const scale = Math.min((width - 2 * margin) / (spanX || 1), (height - 2 * margin) / (spanY || 1));
  const offsetX = (width - spanX * scale) / 2, offsetY = (height - spanY * scale) / 2;
  const points = track.map((fix) => [
    offsetX + (fix.longitude - minLon) * squeeze * scale,
    offsetY + (maxLat - fix.latitude) * scale,
  ]);
  const namespace = "http://www.w3.org/2000/svg";
  const line = document.createElementNS(namespace, "polyline");
  line.setAttribute("points", points.map(([x, y]) => x.toFixed(1) + "," + y.toFixed(1)).join(" "));
  const last = document.createElementNS(namespace, "circle");
  const [lastX, lastY] = points[points.length - 1];
  last.setAttribute("cx", lastX.toFixed(1));
  last.setAttribute("cy", lastY.toFixed(1));
  last.setAttribute("r", "4");
  last.setAttribute("class", "last");
  svg.replaceChildren(line, last);
  svg.dataset.points = points.length;
  const fix = track[track.length - 1];
  $("lastFix").textContent = fix.latitude.toFixed(5) + ", " + fix.longitude.toFixed(5) +
    (typeof fix.accuracy === "number" ? " ± " + Math.round(fix.accuracy) + " m" : "") + " · " + fix.time;
}

// Sleep timer and resume: `sleep SECONDS|end|off` from the buttons, the time left from status's
// `sleep` (counted down here between refreshes), and the items in progress (`inprogress`: the
// places the daemon keeps), each a link that plays it from there.

let sleepDeadline = null;

function showSleep(value) {
  const remaining = value === undefined ? null : Number(value);
  sleepDeadline = Number.isFinite(remaining) ? performance.now() + remaining * 1000 : null;
  $("sleepRemaining").textContent = value === undefined ? "" : Number.isFinite(remaining) ? formatTime(remaining) : "at the " + value;
}

function tickSleep() {
  if (sleepDeadline !== null) $("sleepRemaining").textContent = formatTime((sleepDeadline - performance.now()) / 1000);
}

async function refreshInProgress() {
  const items = await command("inprogress");
  if (!Array.isArray(items)) return;
  const list = $("inProgress");
  list.textContent = "";
  for (const item of items) {
    const entry = document.createElement("li");
    const name = item.file.split("/").pop();
    entry.textContent = name + " · " + formatTime(item.elapsed) +
      (typeof item.duration === "number" ? " / " + formatTime(item.duration) : "");
    entry.title = item.file;
    entry.addEventListener("click", async () => {
      const ids = await command("addid " + quoted(item.file));
      if (ids && ids.Id !== undefined) command("playid " + ids.Id);
    });
    list.appendChild(entry);
  }
}

function setUpSleep() {
  for (const button of document.querySelectorAll("[data-sleep]")) {
    button.addEventListener("click", () => command("sleep " + button.dataset.sleep));
  }
  setInterval(tickSleep, 1000);
}

// Playback rate, pitch algorithm and skip silence: shown from `status` (`rate`,
// `pitchalgorithm`, `skipsilence`, `silenceskipped`), set by the commands of the same names.
const rateSteps = [0.8, 1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 3.0];

function rateOption(rate) {
  const option = document.createElement("option");
  option.value = String(rate);
  option.textContent = rate.toFixed(1) + "\u00d7";
  return option;
}

function setUpPace() {
  for (const rate of rateSteps) $("rate").append(rateOption(rate));
  $("rate").addEventListener("change", () => command("rate " + $("rate").value));
  $("pitch").addEventListener("change", () => command("pitchalgorithm " + $("pitch").value));
  $("skipSilence").addEventListener("change", () => command("skipsilence " + ($("skipSilence").checked ? 1 : 0)));
}

function showPace(status) {
  if (typeof status.rate !== "number") return;
  view.rate = status.rate;
  // A rate set elsewhere (mpc, a feed's) that is not a step is shown as it is.
  if (![...$("rate").options].some((option) => Number(option.value) === status.rate)) {
    $("rate").append(rateOption(status.rate));
  }
  if (document.activeElement !== $("rate")) $("rate").value = [...$("rate").options].find((option) => Number(option.value) === status.rate).value;
  if (status.pitchalgorithm && document.activeElement !== $("pitch")) $("pitch").value = status.pitchalgorithm;
  $("skipSilence").checked = status.skipsilence === 1;
  $("silenceSkipped").textContent = status.silenceskipped > 0 ? "(" + status.silenceskipped.toFixed(1) + " s cut)" : "";
}

// ---- Chapters: the current song's chapter list (`chapters`), the one heard marked (the
// `chapters` and `chapter` events, `status`'s `chapter`), a tap seeks to it (`seekchapter N`).

async function refreshChapters() {
  const chapters = await command("chapters");
  showChapters(chapters || []);
  const status = await command("status");
  markChapter(status && typeof status.chapter === "number" ? status.chapter : null);
}

function showChapters(chapters) {
  $("chaptersSection").hidden = chapters.length === 0;
  $("chapterList").replaceChildren(...chapters.map((chapter) => {
    const item = document.createElement("li");
    item.dataset.chapter = chapter.chapter;
    item.textContent = chapter.title || "Chapter " + chapter.chapter;
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = formatTime(chapter.start) + " – " + formatTime(chapter.end);
    item.append(meta);
    item.addEventListener("click", () => command("seekchapter " + chapter.chapter));
    return item;
  }));
}

function markChapter(number) {
  for (const item of $("chapterList").children) {
    item.classList.toggle("current", number !== null && Number(item.dataset.chapter) === number);
  }
}

// ---- Setting up

function setUp() {
  setUpSleep();
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
  $("login").addEventListener("submit", logIn);
  setUpPace();
  connect();
  requestAnimationFrame(animate);
}

setUp();
