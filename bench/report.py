#!/usr/bin/python3
"""Turns the fragments of one benchmark run into NAME.md (a table to read),
NAME.json (every figure, every run) and the jitter plot.

usage: report.py FRAGMENTS-DIR OUTPUT-DIR NAME     (NAME: latest, or quick)
"""

import glob
import json
import os
import sys

NOISY = 0.20  # a figure whose runs spread by more than this ((max - min) / median) is called noisy


def load(frag, name):
    path = os.path.join(frag, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def med(xs):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) / 2
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summ(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    m = med(xs)
    return {"median": m, "min": min(xs), "max": max(xs), "n": len(xs),
            "spread": (max(xs) - min(xs)) / m if m else 0.0, "runs": xs}


# ------------------------------------------------------------------ formatting

def fmt(v, unit):
    if v is None:
        return "n/a"
    if unit == "s":
        return f"{v:.3f} s"
    if unit == "ms":
        return f"{v:.3f} ms" if abs(v) < 10 else f"{v:.1f} ms"
    if unit == "us":
        return f"{v * 1e6:.0f} µs"
    if unit == "ms_from_s":
        return f"{v * 1e3:.2f} ms"
    if unit == "per_s":
        return f"{v:,.0f}/s"
    if unit == "MiB":
        return f"{v / 1024:.1f} MiB"
    if unit == "frames":
        return f"{v:+d}" if v else "0"
    if unit == "x":
        return f"{v:.0f}×"
    return f"{v:.3g}"


def spread_text(s, unit):
    if not s or s["n"] < 2:
        return "1 run"
    t = f"{fmt(s['min'], unit)}–{fmt(s['max'], unit)} ({s['n']} runs)"
    return t + (" **noisy**" if s["spread"] > NOISY else "")


class Table:
    def __init__(self):
        self.rows = []

    def add(self, num, figure, ours, peer, theirs, unit, target=None, note=""):
        """One line: our figure against one peer's; target is (op, ratio-limit) or a callable."""
        o = ours["median"] if isinstance(ours, dict) else ours
        p = theirs["median"] if isinstance(theirs, dict) else theirs
        numeric = isinstance(p, (int, float)) and not isinstance(p, bool)
        ratio = (o / p) if (o is not None and numeric and p != 0) else None
        if ratio is None and o == 0 and p == 0:
            ratio_text = "= (0 and 0)"
        elif ratio is None:
            ratio_text = "∞ (peer 0)" if numeric and p == 0 and o else "n/a"
        else:
            ratio_text = f"{ratio:.2f}×"
        met = None
        target_text = "—"
        if target:
            op, limit, target_text = target
            value = ratio if op in ("<=", "<", ">=") else o
            if op == "=0":
                met = o == 0
            elif value is not None and op in (">=", "abs>="):
                met = value >= limit
            elif value is not None:
                met = value <= limit if op in ("<=", "abs<=") else value < limit
        row = {"row": num, "figure": figure, "ours": o, "peer": peer, "peer_figure": p, "unit": unit,
               "ratio": ratio, "ratio_text": ratio_text, "target": target_text, "met": met,
               "ours_runs": ours if isinstance(ours, dict) else None,
               "peer_runs": theirs if isinstance(theirs, dict) else None, "note": note}
        self.rows.append(row)

    def markdown(self):
        out = ["| # | figure | queueplayerd | peer | peer's figure | ratio (ours / peer) | target | met? "
               "| spread of runs, ours · peer's (min–max) |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            met = "—" if r["met"] is None else ("yes" if r["met"] else "**MISSED**")
            spread = f"{spread_text(r['ours_runs'], r['unit'])} · {spread_text(r['peer_runs'], r['unit'])}" \
                if r["ours_runs"] or r["peer_runs"] else "—"
            fig = r["figure"] + (f" ({r['note']})" if r["note"] else "")
            out.append(f"| {r['row']} | {fig} | {fmt(r['ours'], r['unit'])} | {r['peer']} | "
                       f"{fmt(r['peer_figure'], r['unit']) if isinstance(r['peer_figure'], (int, float)) else r['peer_figure']} | "
                       f"{r['ratio_text']} | {r['target']} | {met} | {spread} |")
        return "\n".join(out)


# ------------------------------------------------------------------ rows

def row1(t, frag):
    for inp, label in (("long-44k-stereo", "44.1 kHz stereo"), ("long-22k-mono", "22.05 kHz mono")):
        times, cpu = {}, {}
        for path in sorted(glob.glob(os.path.join(frag, f"throughput-{inp}-*.json"))):
            with open(path) as f:
                for r in json.load(f)["results"]:
                    times.setdefault(r["command"], []).extend(r["times"])
                    cpu.setdefault(r["command"], []).append(r["user"] + r["system"])
        cpu = {k: sum(v) / len(v) for k, v in cpu.items()}

        def cpu_note(peer):
            if "queueplayerd" not in cpu or peer not in cpu:
                return ""
            return f"CPU user+sys, mean: ours {cpu['queueplayerd']:.3f} s, peer {cpu[peer]:.3f} s"
        if not times:
            t.add(1, f"decode throughput, {label}", None, "(family failed)", None, "s")
            continue
        qp, t_, alsa = (summ(times.get(k, [])) for k in ("queueplayerd", "mpg123 -t", "mpg123 -o alsa"))
        t.add(1, f"15 min unpaced, {label}: wall time (ours via file+null plugins)", qp,
              "`mpg123 -t` (null sink)", t_, "s", ("<=", 1.05, "≤ 1.05×"), cpu_note("mpg123 -t"))
        t.add(1, f"15 min unpaced, {label}: wall time, same plugins", qp,
              "`mpg123 -o alsa` (file+null)", alsa, "s", ("<=", 1.0, "≤ 1.0×"), cpu_note("mpg123 -o alsa"))


def row2_3(t, rt):
    runs = rt["runs"]
    cpu = {v: summ([r["cpu_s_per_60s"] for r in rs]) for v, rs in runs.items()}
    hwm = {v: summ([r["vm_hwm_kib"] for r in rs]) for v, rs in runs.items()}
    # Issue 14's targets: ≤ 1.0 × mpd's in the foreground, ≤ 1.2 × in the background (printing).
    for fgbg, label, lim in (("queueplayerd-fg", "foreground", 1.0), ("queueplayerd-bg", "background (printing)", 1.2)):
        t.add(2, f"CPU s per 60 s real-time playback, {label}", cpu[fgbg], "mpd (ALSA → pulse, libmpg123)", cpu["mpd"], "s",
              ("<=", lim, f"≤ {lim}× mpd"))
        t.add(2, f"CPU s per 60 s real-time playback, {label}",
              cpu[fgbg], "`mpg123 -o alsa` (pulse, no target)", cpu["mpg123"], "s")
    # What 6000 wake-ups a minute cost here, before any work: the floor under both targets above.
    floors = (("queueplayerd-fg", "foreground", "tick-floor",
               "a bare 10 ms timer loop in C, silent, while mpg123 plays beside it"),
              ("queueplayerd-bg", "background (printing)", "tick-floor-bg",
               "the same loop printing a `Background:` line per wake-up"))
    for fgbg, label, loop, name in floors:
        if not cpu.get(loop):
            continue
        both = cpu["mpg123"]["median"] + cpu[loop]["median"]
        t.add(2, f"CPU s per 60 s real-time playback, {label}", cpu[fgbg], f"{name} (reference, no target)",
              cpu[loop], "s", note=f"mpg123's figure + the loop's: {both:.3f} s, ours / that: "
                                   f"{cpu[fgbg]['median'] / both:.2f}×" if both > 0 else "")
        # Issue 32's target: the sum of mpd's median and the loop's, both from this run.
        if cpu.get("mpd"):
            t.add(2, f"CPU s per 60 s real-time playback, {label}", cpu[fgbg],
                  f"mpd + the {'printing ' if loop.endswith('-bg') else ''}loop (the sum of their medians)",
                  cpu["mpd"]["median"] + cpu[loop]["median"], "s", ("<=", 1.05, "≤ 1.05× (issue 32)"))
    # Wake-ups, counted: context switches per second of every thread (issue 14's target).
    if all("ctxt_per_s" in r for rs in runs.values() for r in rs):
        ctxt = {v: summ([r["ctxt_per_s"] for r in rs]) for v, rs in runs.items()}
        fg, bg = "queueplayerd-fg", "queueplayerd-bg"
        figure = "context switches per second (all threads), real-time playback"
        t.add(2, f"{figure}, foreground", ctxt[fg], "mpd (libmpg123, no observer)", ctxt["mpd"], "per_s",
              ("abs<=", 110, "≤ 110/s"))
        t.add(2, f"{figure}, foreground", ctxt[fg], "`mpg123 -o alsa` (pulse, no target)", ctxt["mpg123"], "per_s")
        t.add(2, f"{figure}, background (printing)", ctxt[bg], "ours, foreground", ctxt[fg], "per_s",
              ("<=", 1.1, "≤ 1.1×"))
        if ctxt.get("tick-floor"):
            t.add(2, f"{figure}, foreground", ctxt[fg],
                  "a bare 10 ms timer loop in C, silent (reference, no target)", ctxt["tick-floor"], "per_s")
    # Per tick (issue 32): the clock thread's CPU against the bare loop's whole process, both over
    # 6,000 wake-ups a minute; the ratio is the same per tick as per minute.
    clock = summ([r["by_thread"].get("qp.clock", {}).get("cpu_s_per_60s") for r in runs.get("queueplayerd-fg", [])
                  if r.get("by_thread")])
    if clock and cpu.get("tick-floor"):
        per_tick = lambda s: {**s, "median": s["median"] / 6000, "min": s["min"] / 6000, "max": s["max"] / 6000}
        t.add(2, "CPU per tick of the clock thread (`qp.clock`), foreground, 10 ms observer", per_tick(clock),
              "a bare 10 ms timer loop in C, per wake-up, while mpg123 plays beside it", per_tick(cpu["tick-floor"]), "us",
              ("<=", 1.25, "≤ 1.25× the loop"))
        # Not a target: the same loop in this binary, entering a queue to call a block per wake-up.
        queue_tick = summ([r["by_thread"].get("floor.tick", {}).get("cpu_s_per_60s")
                           for r in runs.get("queue-floor", []) if r.get("by_thread")])
        if queue_tick:
            t.add(2, "CPU per tick of the clock thread (`qp.clock`), foreground, 10 ms observer", per_tick(clock),
                  "bench/floor --tick: the loop in this binary, a block called on a queue per wake-up (reference)",
                  per_tick(queue_tick), "us",
                  note=f"that floor / the C loop: {queue_tick['median'] / cpu['tick-floor']['median']:.2f}×")
    floor = summ([r["vm_hwm_kib"] for r in rt.get("memory_floor", [])])
    playing = summ([r["vm_hwm_kib"] for r in rt.get("memory_floor_playing", [])])
    for fgbg, label in (("queueplayerd-fg", "foreground"), ("queueplayerd-bg", "background")):
        t.add(3, f"peak RSS (VmHWM) during 2, {label}", hwm[fgbg], "mpd", hwm["mpd"], "MiB", ("<", 1.0, "< mpd"))
        t.add(3, f"peak RSS (VmHWM) during 2, {label}", hwm[fgbg], "mpg123 (target: 16 MiB)", hwm["mpg123"], "MiB",
              ("abs<=", 16 * 1024, "≤ 16 MiB"))
        if floor:
            # Issue 32: 16 MiB, or the floor + 3 MiB where the floor itself is above 13 MiB.
            limit = max(16 * 1024, floor["median"] + 3 * 1024)
            t.add(3, f"peak RSS (VmHWM) during 2, {label}", hwm[fgbg],
                  "the floor: bench/floor, linked as queueplayerd is, idle", floor, "MiB",
                  ("abs<=", limit, f"≤ {limit / 1024:.1f} MiB (16, or the floor + 3)"),
                  note=f"ours − the floor: {(hwm[fgbg]['median'] - floor['median']) / 1024:.1f} MiB")
        if playing:
            # Not a target: what a program of this link keeps resident playing through the same
            # output (the pulse plugin's libraries), beside the idle floor the target is taken from.
            t.add(3, f"peak RSS (VmHWM) during 2, {label}", hwm[fgbg],
                  "the floor playing: bench/floor, linked as queueplayerd is, playing the file to pulsenull itself",
                  playing, "MiB", note=f"ours − the floor playing: {(hwm[fgbg]['median'] - playing['median']) / 1024:.1f} MiB")
    return cpu, hwm


def observer_summary(runs):
    obs = [r["observer"] for r in runs if "observer" in r and "error" not in r["observer"]]
    keys = ("interval_error_p50_ms", "interval_error_p99_ms", "interval_error_max_ms", "drift_ms")
    return obs, ({k: summ([o[k] for o in obs]) for k in keys} if obs else None)


def row4(t, rt):
    out = {}
    for key, runs, floor_runs, label in (
            ("idle", rt["runs"]["queueplayerd-bg"], rt["runs"].get("tick-floor-bg", []), "idle machine"),
            ("loaded", rt["loaded"], rt.get("loaded_floor", []), "other core saturated (stress-ng)")):
        obs, s = observer_summary(runs)
        if not obs:
            t.add(4, f"10 ms observer, {label}", None, "(no data)", None, "ms")
            continue
        _, floor = observer_summary(floor_runs)
        if floor:
            out[f"{key}_floor"] = floor
        s["drift_abs_ms"] = summ([abs(o["drift_ms"]) for o in obs])
        out[key] = s
        skipped = sum(o["printed_steps_not_one_tick"] for o in obs)
        lines = sum(o["lines"] for o in obs)
        expected = sum(o["expected_lines"] for o in obs)
        note = (f"p50 {s['interval_error_p50_ms']['median']:.3f} ms; {lines} of {expected} lines; "
                f"{skipped} printed steps ≠ 0.01")
        none = "none (absolute)"
        loop = (f"bare C timer loop printing the same lines while mpg123 plays to the same sink, "
                f"{rt.get('floor_duration_s', '?')} s windows (reference)")
        for stat, name, limit in (("interval_error_p99_ms", "p99", 1.0), ("interval_error_max_ms", "max", 5.0)):
            peer, figure = (loop, floor[stat]) if floor else (none, "—")
            t.add(4, f"10 ms observer, interval error {name}, {label}", s[stat], peer, figure, "ms",
                  ("abs<=", limit, f"≤ {limit:g} ms"), note if name == "p99" else "")
            t.rows[-1]["limit"] = limit
        t.add(4, f"10 ms observer, drift (absolute) over {rt['duration_s']} s, {label}",
              s["drift_abs_ms"], none, "—", "ms", ("abs<=", 10.0, "≤ 10 ms"))
        t.rows[-1]["limit"] = 10.0
    # ratio column for absolute rows: ours / target
    for r in t.rows:
        if r["row"] == 4 and r["ours"] is not None:
            against_loop = r["ratio"]    # ours / the loop's, as add() computed it (None without a loop)
            r["ratio"] = r["ours"] / r["limit"]
            r["ratio_text"] = f"{r['ratio']:.2f} of target"
            if against_loop is not None:
                r["ratio_text"] += f"; {against_loop:.2f}× the loop's"
    return out


def row5(t, gp):
    out = {}
    for set_name, label in (("sweep-44k", "44.1 kHz stereo"), ("sweep-22k", "22.05 kHz mono")):
        g = gp.get(set_name)
        if not g:
            continue
        worst = {}
        for player, runs in g["runs"].items():
            vals = [sum(abs(b) for b in r["boundaries"]) if "boundaries" in r else None for r in runs]
            worst[player] = None if any(v is None for v in vals) else max(vals)
        out[set_name] = worst
        qp_runs = g["runs"]["queueplayerd"]
        exact = all(all(r.get("boundary_bytes_identical", [False])) for r in qp_runs)
        mpd_tail = [r.get("tail") for r in g["runs"].get("mpd", [])]
        for peer, label_peer in (("mpg123", "`mpg123 --gapless -o alsa`"), ("mpd", "mpd (ALSA, libmad)")):
            note = ""
            if peer == "mpg123":
                note = ("ours byte-identical to the reference around every boundary"
                        if exact else "ours NOT byte-identical to the reference around the boundaries")
            else:
                diffs = [max(r.get("boundary_max_abs_diff") or [0]) for r in g["runs"]["mpd"]]
                note = (f"mpd's libmad within {max(diffs):.2f} LSB of the reference; "
                        f"{mpd_tail[0]} frames of silence after the last item")
            t.add(5, f"frames added/dropped at the 2 boundaries, sweep {label}", worst["queueplayerd"],
                  label_peer, worst[peer], "frames", ("=0", 0, "0"), note)
    return out


def row6(t, ct):
    qp, mpd = ct["queueplayerd"], ct["mpd"]
    n = ct["other_clients"]
    t.add(6, f"`status` round trip p50, {n} other clients idling", qp["status_p50"], "mpd", mpd["status_p50"],
          "us", ("<=", 1.0, "≤ mpd"))
    t.add(6, f"`status` round trip p99, {n} other clients idling", qp["status_p99"], "mpd", mpd["status_p99"],
          "us", ("<=", 1.0, "≤ mpd"))
    t.add(6, "`next` → `changed: player` on an idling client, p50", qp["next_p50"], "mpd", mpd["next_p50"],
          "ms_from_s", ("<=", 1.0, "≤ mpd"))
    t.add(6, "`next` → `changed: player` on an idling client, p99", qp["next_p99"], "mpd", mpd["next_p99"],
          "ms_from_s", ("<=", 1.0, "≤ mpd"))


def row7(t, st):
    t.add(7, "launch → control socket accepting (greeting read)", st["queueplayerd_accepting"],
          "mpd (database built, no state)", st["mpd_accepting"], "ms_from_s", ("<=", 1.0, "≤ mpd"))
    t.add(7, "launch → control socket accepting (greeting read)", st["queueplayerd_accepting"],
          "none (absolute; issue 32)", "—", "ms_from_s", ("abs<=", 0.020, "≤ 20 ms"))
    t.add(7, "launch → first audio frame written (file plugin)", st["queueplayerd_first_frame"],
          "mpd + `add`, `play` at once", st["mpd_first_frame"], "ms_from_s", ("<=", 1.0, "≤ mpd"))
    t.add(7, "launch → first audio frame written (file plugin)", st["queueplayerd_first_frame"],
          "`mpg123 -o alsa` (no daemon, no socket)", st["mpg123_first_frame"], "ms_from_s",
          ("<=", 1.5, "≤ 1.5× (issue 32)"))
    if "floor_first_frame" in st:
        # What the binary costs before any of the daemon's work: the floor program (linked as
        # the daemon is) playing the same file with libmpg123 and alsa-lib called directly.
        floor, mpg123 = st["floor_first_frame"]["median"], st["mpg123_first_frame"]["median"]
        t.add(7, "launch → first audio frame written (file plugin)", st["queueplayerd_first_frame"],
              "the floor: bench/floor, linked as queueplayerd is, playing the file itself", st["floor_first_frame"],
              "ms_from_s", note=f"the floor / `mpg123 -o alsa`: {floor / mpg123:.2f}×")


def row8(t, lb):
    qp, mpd = lb["queueplayerd"], lb["mpd"]
    n = lb["songs"]
    le = ("<=", 1.0, "≤ mpd")
    t.add(8, f"`update` of {n:,} tagged files from an empty database, wall time", qp["update_s"], "mpd",
          mpd["update_s"], "s", le)
    t.add(8, "`update` from empty, CPU (all threads)", qp["update_cpu_s"], "mpd", mpd["update_cpu_s"], "s")
    for name, figure in (("search", "`search any X` round trip"), ("list", "`list album group albumartist` round trip")):
        lines = f"replies of {qp[name + '_reply_lines']['median']:.0f} · {mpd[name + '_reply_lines']['median']:.0f} lines"
        t.add(8, f"{figure} p50", qp[name + "_p50"], "mpd", mpd[name + "_p50"], "ms_from_s", le, lines)
        t.add(8, f"{figure} p99", qp[name + "_p99"], "mpd", mpd[name + "_p99"], "ms_from_s", le)
        t.add(8, f"{figure}, CPU per request", qp[name + "_cpu_ms"], "mpd", mpd[name + "_cpu_ms"], "ms")
    t.add(8, "idle RSS, library loaded from the database at start", qp["rss_loaded_kib"], "mpd",
          mpd["rss_loaded_kib"], "MiB", le)
    t.add(8, "idle RSS after the queries and floods", qp["rss_after_queries_kib"], "mpd",
          mpd["rss_after_queries_kib"], "MiB", le)
    cmds = "/".join(lb["flood_commands"])
    t.add(8, f"one client pipelining {cmds}: CPU per 1,000 commands", qp["pipelined_cpu_s_per_1000"], "mpd",
          mpd["pipelined_cpu_s_per_1000"], "ms_from_s", le)
    t.add(8, f"one client pipelining {cmds}: commands per second (higher is better)", qp["pipelined_per_s"], "mpd",
          mpd["pipelined_per_s"], "per_s", (">=", 1.0, "≥ mpd"))
    t.add(8, f"one client, {cmds} one at a time: CPU per 1,000 commands", qp["one_at_a_time_cpu_s_per_1000"], "mpd",
          mpd["one_at_a_time_cpu_s_per_1000"], "ms_from_s")
    t.add(8, f"one client, {cmds} one at a time: commands per second (higher is better)", qp["one_at_a_time_per_s"],
          "mpd", mpd["one_at_a_time_per_s"], "per_s")
    if "paused_pipelined_cpu_s_per_1000" in qp and "paused_pipelined_cpu_s_per_1000" in mpd:
        t.add(8, f"one client pipelining {cmds}, a song loaded and paused: CPU per 1,000 commands",
              qp["paused_pipelined_cpu_s_per_1000"], "mpd", mpd["paused_pipelined_cpu_s_per_1000"], "ms_from_s", le)
        t.add(8, f"one client pipelining {cmds}, a song loaded and paused: commands per second (higher is better)",
              qp["paused_pipelined_per_s"], "mpd", mpd["paused_pipelined_per_s"], "per_s", (">=", 1.0, "≥ mpd"))


def row9(t, ws):
    """Issue 31's bench: pushed ticks over the WebSocket API (bench/websocket.py)."""
    runs = ws["runs"]
    loop = (f"`tick-floor --print` → pipe → the same asyncio reader, mpg123 playing beside it, "
            f"{ws.get('floor_duration_s', '?')} s windows (reference)")
    ticks = [r["ticks"] for r in runs.get("ws-1x10ms", []) if "ticks" in r]
    floor = [r["ticks"] for r in runs.get("tick-floor-bg", []) if "ticks" in r]
    first = len(t.rows)
    if ticks:
        s = {k: summ([x[k] for x in ticks]) for k in ticks[0] if isinstance(ticks[0][k], (int, float))}
        f = {k: summ([x[k] for x in floor]) for k in floor[0] if isinstance(floor[0][k], (int, float))} if floor else {}
        got, expected = sum(x["ticks"] for x in ticks), sum(x["expected_ticks"] for x in ticks)
        skipped = sum(x["elapsed_steps_not_one_interval"] for x in ticks)
        note = f"{got} ticks of {expected} expected; {skipped} `elapsed` steps ≠ 10 ms"
        for stat, name, limit in (("interval_error_p50_ms", "p50", None), ("interval_error_p99_ms", "p99", 2.0),
                                  ("interval_error_max_ms", "max", None)):
            t.add(9, f"WebSocket ticks at 10 ms, 1 subscriber: interval error as received, {name}", s[stat],
                  loop if f else "none (absolute)", f.get(stat, "—"), "ms",
                  ("abs<=", limit, f"≤ {limit:g} ms") if limit else None, note if name == "p99" else "")
            t.rows[-1]["limit"] = limit
        for stat, name, limit in (("elapsed_error_p50_ms", "p50", None), ("elapsed_error_p99_ms", "p99", 5.0),
                                  ("elapsed_error_max_ms", "max", None)):
            t.add(9, f"pushed `elapsed` against the audible position (receive time + median offset), {name}",
                  s[stat], "the same loop's printed deadline, the same way (reference)" if f else "none (absolute)",
                  f.get(stat, "—"), "ms", ("abs<=", limit, f"≤ {limit:g} ms") if limit else None)
            t.rows[-1]["limit"] = limit
        t.add(9, f"pushed `elapsed`, drift against the wall clock over {ws['duration_s']} s (absolute)",
              summ([abs(x["drift_ms"]) for x in ticks]), "the same loop's (reference)" if f else "none (absolute)",
              summ([abs(x["drift_ms"]) for x in floor]) if floor else "—", "ms")
        t.rows[-1]["limit"] = None
    else:
        t.add(9, "WebSocket ticks at 10 ms, 1 subscriber", None, "(no data)", None, "ms")
    # absolute rows: the ratio column says ours / target, then ours / the loop's
    for r in t.rows[first:]:
        if r.get("limit") and r["ours"] is not None:
            against_loop = r["ratio"]
            r["ratio"] = r["ours"] / r["limit"]
            r["ratio_text"] = f"{r['ratio']:.2f} of target" + (f"; {against_loop:.2f}× the loop's" if against_loop else "")
        elif r["ratio"] is not None:
            r["ratio_text"] = f"{r['ratio']:.2f}× the loop's"
    cpu = {v: summ([r["cpu_s_per_60s"] for r in rs]) for v, rs in runs.items()}
    if not cpu.get("none"):
        t.add(9, "CPU s per 60 s real-time playback with WebSocket subscribers", None, "(no data)", None, "s")
        return
    none = "ours, the same playback with no subscriber (server listening)"
    setups = ws.get("setups", {})
    for v, label in (("ws-1x10ms", "1 subscriber at 10 ms"),
                     ("ws-100x100ms", "100 subscribers at 100 ms")):
        if not cpu.get(v):
            continue
        setup = setups.get(v, {})
        rs = runs[v]
        if "ticks_in_window" in rs[0]:
            note = (f"{setup.get('connections', '?')} connections (the daemon's limit); "
                    f"{sum(r['ticks_in_window'] for r in rs)} ticks of {sum(r['expected_ticks'] for r in rs)} expected; "
                    f"the client's CPU {med([r['client_cpu_s_per_60s'] for r in rs]):.2f} s, not counted")
        else:
            note = f"the client's CPU {med([r['client_cpu_s_per_60s'] for r in rs]):.2f} s, not counted"
        t.add(9, f"CPU s per 60 s real-time playback, {label}", cpu[v], none, cpu["none"], "s", note=note)
    # What one 10 ms subscriber adds, per repetition (the variants of a repetition run back to back),
    # beside what a bare loop waking and writing every 10 ms costs on this machine.
    extra = [a["cpu_s_per_60s"] - b["cpu_s_per_60s"] for a, b in zip(runs.get("ws-1x10ms", []), runs["none"])]
    if extra and cpu.get("tick-floor-bg"):
        t.add(9, "CPU s per 60 s that 1 subscriber at 10 ms adds (with − without, per repetition)", summ(extra),
              "bare C 10 ms loop printing a line per wake-up (reference)", cpu["tick-floor-bg"], "s")


# ------------------------------------------------------------------ plot

def row10(t, sm):
    """Issue 29's bench: streaming (bench/streaming.py)."""
    t.add(10, "`play` → first audio frame, 128 kbit/s live stream over loopback (a server that answers at once, 64 KiB burst)",
          sm["queueplayerd_first_frame"], "mpd (curl input)", sm["mpd_first_frame"], "ms_from_s", ("<=", 1.0, "≤ mpd"))
    if "queueplayerd_first_frame_icecast" in sm:
        t.add(10, "the same through icecast2 (most of it icecast2's own polling, the same for both)",
              sm["queueplayerd_first_frame_icecast"], "mpd (curl input)", sm["mpd_first_frame_icecast"], "ms_from_s")
    t.add(10, f"CPU per minute, a 128 kbit/s file over HTTP (nginx), {sm['cpu_window_s']:.0f} s windows",
          sm["cpu_streaming_s_per_min"], "the same file played locally", sm["cpu_local_s_per_min"], "s",
          ("<=", 1.1, "≤ 1.1 × local"))
    rss = sm["rss"]
    t.add(10, f"peak RSS growth over {rss['seconds'] / 60:.0f} min of a live stream, a new title every 10 s "
              f"({rss['titles']} titles)", rss["growth_kib"], "none (absolute)", "—", "MiB",
          ("abs<=", 2048, "≤ 2 MiB"))


def row11(t, ld):
    """Loudness measurement of an hour-long episode (bench/loudness.py)."""
    audio = ld["audio_seconds"]
    t.add(11, f"measuring a {audio / 3600:.0f} h episode (EBU R128 integrated loudness and true peak), wall s "
              f"(ours {ld['queueplayerd_lufs']} LUFS / {ld['queueplayerd_dbtp']} dBTP, "
              f"ffmpeg {ld['ffmpeg_lufs']} LUFS / {ld['ffmpeg_dbtp']} dBTP)",
          ld["queueplayerd_s"], "ffmpeg `-af ebur128=peak=true`", ld["ffmpeg_s"], "s", ("<=", 1.0, "≤ 1.0× (no slower)"))
    median = ld["queueplayerd_s"]["median"]
    t.add(11, "the same as a multiple of real time", audio / median if median else None, "none (absolute)", "—", "x",
          ("abs>=", 100, "≥ 100×"))


def row13(t, ch):
    """Reading the chapters of a file with 1,000 CHAP frames (bench/chapters.py): no peer."""
    n = ch["chapters"]
    t.add(13, f"`chapters URI` round trip on a file of {n} CHAP frames, the first request (the tag read), ms",
          ch["first_s"] * 1e3, "none (absolute)", "—", "ms", ("abs<", 50, "< 50 ms"))
    t.add(13, f"the same, later requests, p50 ms (p99 {ch['p99_s'] * 1e3:.2f} ms)",
          ch["p50_s"] * 1e3, "none (absolute)", "—", "ms", ("abs<", 50, "< 50 ms"))


def plot(rt, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {}
    for key, runs in (("idle", rt["runs"].get("queueplayerd-bg", [])), ("loaded", rt.get("loaded", []))):
        for r in runs:
            s = r.get("observer", {}).get("series")
            if s:
                series[key] = s
                break
    if not series:
        return False
    fig, ax = plt.subplots(2, 2, figsize=(13, 8.5))
    colors = {"idle": "tab:blue", "loaded": "tab:red"}
    names = {"idle": "idle machine", "loaded": "other core saturated (stress-ng --cpu 1)"}
    for i, key in enumerate(("idle", "loaded")):
        a = ax[0][i]
        if key in series:
            s = series[key]
            a.plot(s["t"], s["interval_ms"], ".", ms=2, color=colors[key])
        a.axhline(10, color="k", lw=0.8)
        for y in (9, 11):
            a.axhline(y, color="gray", lw=0.6, ls="--")
        a.set_title(f"interval between lines, {'idle' if key == 'idle' else 'other core saturated'}")
        a.set_xlabel("s into the window")
        a.set_ylabel("ms (target 10; dashed ±1 ms)")
        top = max(series[key]["interval_ms"]) if key in series else 20
        a.set_ylim(0, max(20, top * 1.05))
    a = ax[1][0]
    for key, s in series.items():
        errs = sorted(abs(x - 10) for x in s["interval_ms"])
        n = len(errs)
        a.semilogy(errs, [1 - k / n for k in range(n)], color=colors[key], label=names[key])
    a.axvline(1, color="gray", ls="--", lw=0.8)
    a.axvline(5, color="gray", ls=":", lw=0.8)
    a.axhline(0.01, color="gray", lw=0.6)
    a.set_xlabel("|interval − 10 ms| (ms); dashed: p99 target 1 ms, dotted: max target 5 ms")
    a.set_ylabel("fraction of intervals with a larger error")
    a.set_title("interval error, complementary CDF (horizontal line: p99)")
    a.legend()
    a = ax[1][1]
    for key, s in series.items():
        a.plot(s["t"], s["residual_ms"], ".", ms=2, color=colors[key], label=names[key])
    a.set_title("drift: printed time − wall-clock time, from the window's first line (target ±10 ms)")
    a.set_xlabel("s into the window")
    a.set_ylabel("ms")
    a.legend()
    fig.suptitle("queueplayerd's 10 ms periodic time observer, read from its stdout "
                 "(timestamps taken by the reading process)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


# ------------------------------------------------------------------ main

def thread_lines(runs_by_variant, variants, prefix=""):
    """One line per variant: each thread name's CPU s per 60 s and switches per second, medians
    over the runs (×N: threads of that name; a name that does almost nothing is left out)."""
    out = []
    for variant, label in variants:
        runs = [r["by_thread"] for r in runs_by_variant.get(variant, []) if r.get("by_thread")]
        if not runs:
            continue
        names = sorted({n for r in runs for n in r}, key=lambda n: -med([r.get(n, {}).get("cpu_s_per_60s", 0) for r in runs]))
        cells = []
        for n in names:
            cpu = med([r.get(n, {}).get("cpu_s_per_60s", 0) for r in runs])
            ctxt = med([r.get(n, {}).get("ctxt_per_s", 0) for r in runs])
            if cpu < 0.005 and ctxt < 0.5:
                continue
            threads = med([r.get(n, {}).get("threads", 0) for r in runs])
            cells.append(f"`{n}`{f' ×{threads:.0f}' if threads > 1 else ''} {cpu:.2f} s, {ctxt:.0f}/s")
        out.append(f"- {prefix}{label} ({len(runs)} runs): " + "; ".join(cells))
    return out


def by_thread_section(rt):
    """Row 2 by thread name, for the players whose threads are ours to name: where the CPU
    and the wake-ups go (medians over the runs; a name no run had is left out)."""
    out = thread_lines(rt["runs"], (("queueplayerd-fg", "queueplayerd, foreground"), ("queueplayerd-bg", "queueplayerd, background"),
                                     ("mpd", "mpd"), ("mpg123", "mpg123")))
    if not out:
        return []
    return ["## Row 2 by thread", "",
            "CPU seconds per 60 s and context switches per second of each thread name, median over the row-2 runs "
            "(/proc/PID/task/*/stat and status; threads that do less than 0.005 s and 0.5 switches a second are left "
            "out). queueplayerd's `qp.clock` makes the ticks, `qp.render` decodes and writes, `threaded-ml` is "
            "libpulse's thread (ALSA's pulse plugin, in every player's process).", ""] + out + [""]


def ws_by_thread_section(ws):
    """Row 9's daemon CPU by thread name, as row 2's: where the ticks' cost goes."""
    out = thread_lines(ws["runs"], (("none", "no subscriber"), ("ws-1x10ms", "1 subscriber at 10 ms"),
                                    ("ws-100x100ms", "100 subscribers at 100 ms")), prefix="queueplayerd, ")
    if not out:
        return []
    return ["## Row 9 by thread", "",
            "The daemon's CPU seconds per 60 s and context switches per second by thread name, median over the "
            "row-9 runs (as row 2's; ×N: threads of that name). `qp.clock` runs the time observers, `NIO-ELT-…` are "
            "swift-nio's event-loop threads (the HTTP and WebSocket server), `oot.default-qos` is libdispatch's "
            "worker pool (`com.apple.root.default-qos`, cut to the kernel's 15 characters), `qp.render` decodes "
            "and writes, `threaded-ml` is libpulse's thread.", ""] + out + [""]


def row12(t, ra):
    """The playback rate (bench/rate.py): CPU at 1.5x and 2.0x against mpv's `--speed`, and the
    peak RSS against playback at 1.0x."""
    v = ra["variants"]
    window = f"{ra['window_s']:.0f} s windows"
    for rate in ("1.5", "2.0"):
        t.add(12, f"CPU per minute, paced playback at {rate}x to a null output, pitch kept ({window})",
              v[f"queueplayerd {rate}"]["cpu_s_per_min"], f"mpv `--speed={rate}` (`--ao=null`)",
              v[f"mpv {rate}"]["cpu_s_per_min"], "s", ("<=", 1.2, "≤ 1.2 × mpv"))
    base = v["queueplayerd 1.0"]["hwm_kib"]["median"]
    for rate in ("1.5", "2.0"):
        peak = v[f"queueplayerd {rate}"]["hwm_kib"]
        t.add(12, f"peak RSS at {rate}x, above playback at 1.0x", peak["median"] - base, "none (absolute)", "—", "MiB",
              ("abs<=", 2048, "≤ 2 MiB"), note=f"{peak['median'] / 1024:.1f} MiB against {base / 1024:.1f} MiB")
    t.add(12, f"CPU per minute, paced playback at 1.0x ({window}; the reference)",
          v["queueplayerd 1.0"]["cpu_s_per_min"], "mpv at 1.0x", v["mpv 1.0"]["cpu_s_per_min"], "s")


def main():
    frag, outdir, name = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    machine = load(frag, "machine") or {}
    end = load(frag, "end") or {}
    rt, gp, ct, st, lb, ws, sm, ld, ra, ch = (load(frag, n) for n in ("realtime", "gapless", "control", "startup", "library",
                                                                      "websocket", "streaming", "loudness", "rate", "chapters"))
    seconds = {os.path.basename(p)[8:-4]: int(open(p).read()) for p in glob.glob(os.path.join(frag, "seconds-*.txt"))}

    def ran(family):
        """Whether the run tried FAMILY (bench/run writes seconds-FAMILY.txt for each one it ran): a
        family left out by BENCH_ONLY is not reported as failed."""
        return not seconds or family in seconds
    t = Table()
    missing = []
    if ran("throughput"):
        row1(t, frag)
    if rt:
        row2_3(t, rt)
    elif ran("realtime"):
        missing.append("2, 3, 4 (realtime)")
    observer = row4(t, rt) if rt else {}
    gapless = row5(t, gp) if gp else None
    for data, family, rows, fn in ((gp, "gapless", "5", None), (ct, "control", "6", row6), (st, "startup", "7", row7),
                                   (lb, "library", "8", row8), (ws, "websocket", "9", row9),
                                   (sm, "streaming", "10", row10), (ld, "loudness", "11", row11),
                                   (ra, "rate", "12", row12), (ch, "chapters", "13", row13)):
        if data and fn:
            fn(t, data)
        elif not data and ran(family):
            missing.append(f"{rows} ({family})")
    t.rows.sort(key=lambda r: r["row"])

    plot_name = "jitter.png" if name == "latest" else f"jitter-{name}.png"
    plotted = bool(rt) and plot(rt, os.path.join(outdir, plot_name))

    missed = [r for r in t.rows if r["met"] is False]
    noisy = [r for r in t.rows
             if any(x and x["n"] > 1 and x["spread"] > NOISY for x in (r["ours_runs"], r["peer_runs"]))]
    dur = rt["duration_s"] if rt else None
    md = [f"# queueplayerd benchmarks{' (QUICK mode: short runs, not for quoting)' if machine.get('quick') else ''}",
          "",
          f"Run {machine.get('started', '?')} on {machine.get('cpus', '?')} × {machine.get('cpu_model', '?')}, "
          f"Linux {machine.get('kernel', '?')}; queueplayerd {machine.get('queueplayerd_commit', '?')} (release build); "
          f"{machine.get('mpg123', 'mpg123')}; {machine.get('mpd', 'mpd')}; libasound {machine.get('libasound', '?')}; "
          f"{machine.get('hyperfine', 'hyperfine')}. Whole run: {end.get('wall_seconds', '?')} s "
          f"({', '.join(f'{k} {v} s' for k, v in sorted(seconds.items()))}). "
          f"Load average at start {machine.get('loadavg_start', '?')}, at end {end.get('loadavg_end', '?')} "
          "(the machine is shared: other people's tests ran beside this).",
          "",
          "Every figure is the median over repeated runs, taken side by side with the peers in the same run, "
          "measured from outside the process (hyperfine, /proc/PID, wait4, this harness's own clock); "
          "the only things queueplayerd reports about itself that are used are its `Background:` lines (row 4) "
          "and the `elapsed` of its pushed ticks (row 9). "
          f"A figure is marked **noisy** when its runs spread by more than {NOISY:.0%} of the median. "
          "Ratios are ours / peer's: below 1 is better for us.",
          "",
          t.markdown(),
          ""]
    if missing:
        md += [f"Families that failed (no figures): {', '.join(missing)}.", ""]
    if rt:
        md += by_thread_section(rt)
    if ws:
        md += ws_by_thread_section(ws)
    md += ["## Targets missed", ""]
    if missed:
        for r in missed:
            md.append(f"- row {r['row']}: {r['figure']} vs {r['peer']}: {fmt(r['ours'], r['unit'])} against "
                      f"{fmt(r['peer_figure'], r['unit']) if isinstance(r['peer_figure'], (int, float)) else r['peer_figure']}"
                      f" ({r['ratio_text']}; target {r['target']})")
    else:
        md.append("- none")
    md += ["", "## Noisy figures", ""]
    md += [f"- row {r['row']}: {r['figure']} vs {r['peer']}: ours {spread_text(r['ours_runs'], r['unit'])}; "
           f"peer {spread_text(r['peer_runs'], r['unit'])}" for r in noisy] or ["- none"]
    md += ["", "## What was compared, and how", "",
           "1. **Throughput.** queueplayerd's `--output null` is paced in real time, so its unpaced path is ALSA's "
           "`file` plugin writing to /dev/null over the `null` plugin (`--output alsa:devnull`). It is compared with "
           "`mpg123 -t` (decode only, mpg123's null sink) and with `mpg123 -o alsa -a devnull` (the same plugin "
           "chain). Input: the 180 s file queued five times (15 min). hyperfine, two rounds in opposite order.",
           f"2. **CPU.** Real-time playback to a private user-mode PulseAudio null sink through ALSA's pulse plugin "
           f"(`pulsenull`). utime+stime from /proc/PID/stat over a {dur} s window opening 2 s after playback "
           "started, scaled to 60 s. queueplayerd's 10 ms observer always runs; in the background it prints "
           "`Background: t` to a pipe read by the harness. mpd decodes with libmpg123 here, as the others do "
           "(its libmad plugin, first for MP3, is switched off for this family; rows 5 to 8 use mpd's default, "
           "libmad, which is gapless where mpd 0.23's libmpg123 plugin is not). "
           "PulseAudio's own CPU is not counted for anyone. "
           "Measured the same way, a reference: `bench/tick-floor.c`, a C loop that only sleeps to 10 ms "
           "deadlines (no audio of its own), which is what 6000 wake-ups a minute cost on this machine before any "
           "work; beside the background figure, the same loop printing a `Background:` line per wake-up. While "
           "a loop is measured, `mpg123 -o alsa` plays the same file to the same sink in another process (not "
           "counted), so the loop competes with the same audio work as queueplayerd does.",
           "3. **Memory.** VmHWM (peak RSS) from /proc/PID/status at the end of each row-2 window.",
           "4. **Observer.** Each `Background:` line is timestamped by the reading process as it arrives; "
           "interval error is |gap between consecutive lines − 10 ms|, so it includes pipe and reader wake-up. "
           "Drift: the null sink consumes at the wall clock's rate, so audible frames / rate advance with wall "
           "time; drift is how much (printed time − wall time) moved between the window's first and last second "
           "(medians over 100 lines). A constant offset between printed time and the first audible frame is not "
           "visible from outside and is not in this figure. The loaded runs saturate the other core with "
           "`stress-ng --cpu 1 --taskset 1`. Beside ours, as a reference: `tick-floor --print`, a C loop that "
           "sleeps to 10 ms deadlines and writes one line per wake-up, read and measured the same way (idle and "
           "loaded, shorter windows, with mpg123 playing to the same sink meanwhile): what this machine's scheduler, "
           "its timer and the pipe give a program that does nothing else under the same audio load.",
           "5. **Gapless.** Three consecutive 5 s pieces of one continuous sweep (44.1 kHz stereo, and 22.05 kHz "
           "mono) played as one queue into ALSA's file plugin. Each piece is located in the output by matching "
           "its middle against libmpg123's gapless decode of that piece (`mpg123 --gapless -s`); added (+) or "
           "dropped (−) frames at a boundary = start of the next piece − end of this one. Silence before the "
           "first or after the last piece is not a boundary and is reported in the JSON (`head`, `tail`).",
           "6. **Control.** Both daemons play a 64-item queue to the PulseAudio null sink while 100 other clients "
           "idle (re-idling whenever woken). The same Python client measures `status` round trips (one every "
           "2 ms) and the time from sending `next` to a separate idling client reading `changed: player`.",
           "7. **Start-up.** From just before fork/exec to the first greeting read on the control socket (polled "
           "every 0.5 ms); and to the first audio bytes arriving in a FIFO written by ALSA's file plugin (which "
           "hands data on in blocks, alike for every player). mpd cannot be told to play on its command line: "
           "its figure includes a client sending `add` and `play` the moment it accepts.",
           "8. **Library.** 10,000 MP3 files (500 albums × 20 tracks, copies of five short lame encodes, each "
           "with its own ID3v2.3 tag: Artist, AlbumArtist, Album, Title, Track, Year, Genre), made once by "
           "`bench/library.py`. Each daemon starts on an empty database of that directory (its own, built of an "
           "empty directory at the same path); `update`, then `status` every 10 ms until `updating_db` is gone. "
           "Restarted on the database it saved: VmRSS 1 s after accepting; one client's round trips of "
           "`search any X` (16 terms in turn) and `list album group albumartist`; then one client flooding "
           "`status`/`currentsong`/`ping` with the queue empty, pipelined (a writer thread that does not wait) "
           "and one at a time, then pipelined again with one song added, played and paused (the queue emptied "
           "after); the daemon's CPU from /proc/PID/stat. The daemons alternate; medians over the "
           "repetitions of each repetition's figure.",
           "9. **WebSocket ticks** (issue 31). queueplayerd plays to the PulseAudio null sink of row 2 with "
           "`--http 127.0.0.1:PORT`; `bench/lib/wsclients.py`, a separate process with one asyncio event loop "
           "(python3-websockets), subscribes `{\"subscribe\": \"time\", \"interval\": ...}` and timestamps each tick "
           "(CLOCK_MONOTONIC) when it is received. One subscriber at 10 ms: interval error = |gap between receipts − "
           "10 ms|. The audible position: the null sink consumes at the wall clock's rate, so it is the receive time "
           "plus a constant that cannot be seen from outside (where the first frame was heard); that constant is "
           "taken as the median of (`elapsed` − receive time) over the window, and a tick's error is its distance "
           "from it, delivery jitter included (`status` reads the same clock inside the daemon, so it is no "
           "independent reference). Drift: how far (`elapsed` − receive time) moved between the window's first and last "
           "second (medians over 100 ticks). CPU: the daemon's utime+stime over the window, scaled to "
           "60 s, with no client, with that subscriber, and with 100 subscriptions at 100 ms over 32 connections "
           "(the daemon takes at most 32 WebSockets); the client's CPU is not counted. The reference: "
           "`tick-floor --print` into a pipe read by the same asyncio code, while mpg123 plays to the same sink, "
           "measured the same way (its printed deadline standing for `elapsed`).",
           "10. **Streaming** (issue 29). icecast2 on 127.0.0.1, fed by ffmpeg (a tone, libmp3lame 128 kbit/s, `-re`). "
           "`play` → first frame: each daemon idle with nothing queued and its ALSA output into the file plugin's FIFO "
           "(row 7's); `add URL`, the FIFO drained, the clock started as `play` is sent and stopped at the first bytes "
           "out of the FIFO; the daemons alternate. CPU: one 128 kbit/s CBR file served by nginx on 127.0.0.1 and the "
           "same file as a local path, each played to `pulsenull`, utime+stime over a window opening 3 s in, scaled to "
           "60 s (`BENCH_STREAM_CPU_SECONDS`, default 60). RSS: the live stream played to `pulsenull` while icecast's "
           "admin interface changes the title every 10 s; growth = VmHWM at the end − VmRSS 10 s after the start, "
           "over `BENCH_STREAM_RSS_SECONDS` (default 1800: the issue's 30 minutes).",
           "12. **Playback rate.** The 180 s 44.1 kHz stereo file played in real time to a null output at 1.0x, "
           "1.5x and 2.0x, the pitch kept: queueplayerd `--output null --rate R` (libsonic, `timeDomain`; `status` "
           "checked at the end) against mpv `--ao=null --no-video --speed=R` (its `scaletempo2`), in a rotating "
           "order. CPU: utime+stime over a window opening 2 s in (`BENCH_RATE_SECONDS`, default 20), scaled to "
           "60 s; peak RSS: VmHWM at the window's end, against queueplayerd's own at 1.0x.",
           "13. **Chapters.** A 60 s tone given 1,000 ID3v2.4 `CHAP` frames (each with `TIT2` and `WXXX`, under "
           "nested `CTOC`s) by mutagen, in the music directory of queueplayerd `--output null`: the `chapters "
           "\"FILE\"` round trip on the control socket (the tag walked, the frames parsed, sorted and clipped, 1,000 "
           "blocks written and read), the first request apart, then 50 more (p50, p99). No peer: mpd has no chapters.",
           ""]
    # Only the families this run tried (a BENCH_ONLY run describes its own rows).
    described = {"1": "throughput", "2": "realtime", "3": "realtime", "4": "realtime", "5": "gapless", "6": "control",
                 "7": "startup", "8": "library", "9": "websocket", "10": "streaming",
                 "11": "loudness", "12": "rate", "13": "chapters"}
    md = [line for line in md if not (line[:1].isdigit() and ". " in line[:4]
                                      and not ran(described[line.split(".", 1)[0]]))]
    if plotted:
        md += [f"![10 ms observer jitter]({plot_name})", "",
               f"`{plot_name}`: intervals between `Background:` lines over one 60 s window, idle and loaded, their "
               "complementary CDF, and the printed time against the wall clock.", ""]
    with open(os.path.join(outdir, name + ".md"), "w") as f:
        f.write("\n".join(md))

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "series"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    throughput = {}
    for path in sorted(glob.glob(os.path.join(frag, "throughput-*.json"))):
        with open(path) as f:
            throughput[os.path.basename(path)[:-5]] = json.load(f)
    doc = {"machine": machine, "end": end, "family_seconds": seconds, "noisy_threshold": NOISY,
           "table": t.rows, "targets_missed": [f"row {r['row']}: {r['figure']} vs {r['peer']}" for r in missed],
           "observer": observer, "gapless": gapless,
           "raw": {"throughput_hyperfine": throughput, "realtime": strip(rt), "gapless": gp,
                   "control": ct, "startup": st, "library": lb, "websocket": ws, "streaming": sm,
                   "loudness": ld, "rate": ra, "chapters": ch}}
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
