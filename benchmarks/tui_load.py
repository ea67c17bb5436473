#!/usr/bin/env python3
"""TUI load benchmark on a synthetic 25,000-event campaign.

    python3 benchmarks/tui_load.py [--events 25000] [--repeat 5] [--seconds 10]

Each measurement runs in a fresh child process (headless Textual, 100x30):
  first paint  process start (before `import textual`) → first complete frame of the
               watch screen with the final state: status, table, plot, transcript window
               with its Markdown parsed. Limit 1 s.
  jump to end  replay at event 0, press `end` → the end state on screen, Markdown parsed.
               Limit 0.5 s.
  memory       peak RSS of the replay process after load, jump to end and a seek back.
               Limit 300 MB.
  tailing      watch a 20,000-event session while another thread appends 50 events/s
               for --seconds; a key is pressed every 100 ms: input lag = key posted →
               its action ran; tail lag = line written → state updated on screen.
  terminal     (when tmux is installed) the real `socratic watch` in a 100x30 tmux pane
               while 50 events/s are appended: `?` sent with send-keys → help visible in
               capture-pane, `q` → gone (includes tmux and the polling of the pane).
Prints medians (and p95 where useful) over --repeat runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _settled(app) -> bool:
    """Every mounted streaming Markdown block has been parsed (has its children)."""
    from socratic.tui.widgets.streaming_text import StreamingText

    return all(len(w.children) > 0 or not w.block.text.strip() for w in app.query(StreamingText))


async def _wait_settled(pilot, app, timeout: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout
    await pilot.pause()
    while not _settled(app) and time.perf_counter() < deadline:
        await pilot.pause(0.005)
    await pilot.pause()


# ---------------------------------------------------------------------------- children


def child_first_paint(session: str, t_start: float) -> dict:
    from socratic.tui.app import SocraticApp  # imports count: t_start was taken before them

    async def main() -> float:
        app = SocraticApp(Path(session), "watch", watch_files=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await _wait_settled(pilot, app)
            t = time.time() - t_start
            assert app.main.state.n_events > 20_000
            return t

    return {"first_paint_s": asyncio.run(main())}


def child_jump_end(session: str) -> dict:
    from socratic.tui.app import SocraticApp

    async def main() -> dict:
        app = SocraticApp(Path(session), "replay", autoplay=False, start=0)
        async with app.run_test(size=(100, 30)) as pilot:
            await _wait_settled(pilot, app)
            t0 = time.perf_counter()
            await pilot.press("end")
            await _wait_settled(pilot, app)
            t_end = time.perf_counter() - t0
            assert app.main.pos == len(app.main.timeline)
            t0 = time.perf_counter()
            await pilot.press("left_square_bracket")
            await _wait_settled(pilot, app)
            t_prev = time.perf_counter() - t0
            t0 = time.perf_counter()
            await pilot.press("home")
            await _wait_settled(pilot, app)
            t_home = time.perf_counter() - t0
            await pilot.press("end")
            await _wait_settled(pilot, app)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB → MB (Linux)
            return {"jump_end_s": t_end, "prev_eval_s": t_prev, "home_s": t_home,
                    "peak_rss_mb": rss}

    return asyncio.run(main())


def child_tailing(session: str, more: str, seconds: float, rate: float) -> dict:
    from textual.binding import Binding

    from socratic.tui.app import SocraticApp

    extra = [json.loads(line) for line in Path(more).read_text().splitlines()]

    class Bench(SocraticApp):
        BINDINGS = SocraticApp.BINDINGS + [Binding("f12", "ping", show=False)]

        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.pings: list[float] = []

        def action_ping(self) -> None:
            self.pings.append(time.perf_counter())

    written: dict[int, float] = {}
    tail_lags: list[float] = []

    async def main() -> dict:
        app = Bench(Path(session), "watch")
        orig_ingest = app.main.ingest

        def ingest(events):
            orig_ingest(events)
            now = time.perf_counter()
            for ev in events:
                w = written.get(ev.get("seq"))
                if w is not None:
                    tail_lags.append(now - w)

        app.main.ingest = ingest  # type: ignore[method-assign]
        stop = threading.Event()

        def writer() -> None:
            path = Path(session) / "events.jsonl"
            t0 = time.perf_counter()
            with open(path, "a", encoding="utf-8") as fh:
                for i, ev in enumerate(extra):
                    if stop.is_set():
                        return
                    written[ev["seq"]] = time.perf_counter()
                    fh.write(json.dumps(ev) + "\n")
                    fh.flush()
                    # a steady rate: sleep to the next tick, not a fixed interval
                    time.sleep(max(0.0, t0 + (i + 1) / rate - time.perf_counter()))

        lags: list[float] = []
        async with app.run_test(size=(100, 30)) as pilot:
            await _wait_settled(pilot, app)
            th = threading.Thread(target=writer, daemon=True)
            th.start()
            t_end = time.perf_counter() + seconds
            while time.perf_counter() < t_end:
                n = len(app.pings)
                t0 = time.perf_counter()
                await pilot.press("f12")
                while len(app.pings) == n:
                    await asyncio.sleep(0.001)
                lags.append(app.pings[-1] - t0)
                await asyncio.sleep(0.1)
            stop.set()
            th.join()
            await pilot.pause(0.3)
            applied = app.main.state.seq
        return {"input_lag_ms": lags, "tail_lag_ms": tail_lags, "applied_seq": applied,
                "renders": app.main.renders}

    r = asyncio.run(main())
    return {
        "input_lag_median_ms": statistics.median(r["input_lag_ms"]) * 1000,
        "input_lag_p95_ms": sorted(r["input_lag_ms"])[int(0.95 * (len(r["input_lag_ms"]) - 1))] * 1000,
        "tail_lag_median_ms": statistics.median(r["tail_lag_ms"]) * 1000 if r["tail_lag_ms"] else None,
        "tail_lag_p95_ms": (sorted(r["tail_lag_ms"])[int(0.95 * (len(r["tail_lag_ms"]) - 1))] * 1000
                            if r["tail_lag_ms"] else None),
        "events_tailed": len(r["tail_lag_ms"]),
        "renders": r["renders"],
    }


# ---------------------------------------------------------------------------- parent


def run_child(*args: str) -> dict:
    t_start = time.time()
    out = subprocess.run([sys.executable, __file__, "--child", *args, "--t-start", repr(t_start)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"child {args[0]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=25_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--t-start", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        kind, *rest = args.child
        if kind == "first_paint":
            res = child_first_paint(rest[0], args.t_start)
        elif kind == "jump_end":
            res = child_jump_end(rest[0])
        else:
            res = child_tailing(rest[0], rest[1], float(rest[2]), float(rest[3]))
        print(json.dumps(res))
        return 0

    from make_synthetic_session import make_events, write_session

    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full"
        events = make_events(args.events, seed=1)
        write_session(full, events)
        size_mb = (full / "events.jsonl").stat().st_size / 1e6
        print(f"synthetic campaign: {len(events)} events, {size_mb:.1f} MB "
              f"(python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")

        paints, jumps, prevs, homes, rss = [], [], [], [], []
        for _ in range(args.repeat):
            paints.append(run_child("first_paint", str(full))["first_paint_s"])
            r = run_child("jump_end", str(full))
            jumps.append(r["jump_end_s"])
            prevs.append(r["prev_eval_s"])
            homes.append(r["home_s"])
            rss.append(r["peak_rss_mb"])
        med = statistics.median
        print(f"first paint (watch, process start → settled frame): median {med(paints):.3f} s "
              f"(limit 1.0)  runs {', '.join(f'{x:.3f}' for x in paints)}")
        print(f"jump to end (replay, key → settled frame):          median {med(jumps):.3f} s "
              f"(limit 0.5)  runs {', '.join(f'{x:.3f}' for x in jumps)}")
        print(f"previous evaluation from the end:                   median {med(prevs):.3f} s")
        print(f"home from the end:                                  median {med(homes):.3f} s")
        print(f"peak memory (replay, RSS):                           median {med(rss):.0f} MB "
              f"(limit 300)")

        live = Path(tmp) / "live"
        n_live = min(20_000, len(events) - int(args.rate * args.seconds) - 100)
        write_session(live, [e for e in events[:n_live] if e["type"] != "campaign.end"])
        more = Path(tmp) / "more.jsonl"
        more.write_text("".join(json.dumps(e) + "\n" for e in events[n_live:]
                                if e["type"] != "campaign.end"))
        res = []
        for _ in range(max(1, args.repeat // 2)):
            shutil_copy(live, Path(tmp) / "live_run")
            res.append(run_child("tailing", str(Path(tmp) / "live_run"), str(more),
                                 str(args.seconds), str(args.rate)))
        print(f"live tailing at {args.rate:.0f} events/s for {args.seconds:.0f} s "
              f"({res[0]['events_tailed']} events, {res[0]['renders']} renders):")
        print(f"  input lag: median {med(r['input_lag_median_ms'] for r in res):.1f} ms, "
              f"p95 {med(r['input_lag_p95_ms'] for r in res):.1f} ms")
        tl = [r["tail_lag_median_ms"] for r in res if r["tail_lag_median_ms"] is not None]
        tp = [r["tail_lag_p95_ms"] for r in res if r["tail_lag_p95_ms"] is not None]
        if tl:
            print(f"  write → on screen: median {med(tl):.1f} ms, p95 {med(tp):.1f} ms")
        shutil_copy(live, Path(tmp) / "live_tmux")
        lags = tmux_input_lag(Path(tmp) / "live_tmux", more, args.seconds, args.rate)
        if lags:
            lags.sort()
            print(f"  real terminal (tmux, {len(lags)} key presses): key → visible change median "
                  f"{med(lags) * 1000:.0f} ms, p95 {lags[int(0.95 * (len(lags) - 1))] * 1000:.0f} ms")
        else:
            print("  real terminal: skipped (no tmux)")
    return 0


def tmux_input_lag(session: Path, more: Path, seconds: float, rate: float) -> list[float] | None:
    """Key → visible change in a real terminal (tmux), while another thread appends."""
    import shutil

    if shutil.which("tmux") is None:
        return None
    sock = f"socratic-bench-{os.getpid()}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout

    tmux("new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
         f"cd {ROOT} && TERM=xterm-256color {sys.executable} -m socratic watch {session}; sleep 5")
    extra = more.read_text().splitlines(keepends=True)
    stop = threading.Event()

    def writer() -> None:
        t0 = time.perf_counter()
        with open(session / "events.jsonl", "a", encoding="utf-8") as fh:
            for i, line in enumerate(extra):
                if stop.is_set():
                    return
                fh.write(line)
                fh.flush()
                time.sleep(max(0.0, t0 + (i + 1) / rate - time.perf_counter()))

    def wait(pred, timeout=5.0) -> float | None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < timeout:
            if pred(tmux("capture-pane", "-p", "-t", "b")):
                return time.perf_counter() - t0
            time.sleep(0.01)
        return None

    lags: list[float] = []
    opens: list[float] = []
    closes: list[float] = []
    try:
        if wait(lambda scr: "RUNNING" in scr, 20) is None:
            return None
        th = threading.Thread(target=writer, daemon=True)
        th.start()
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            tmux("send-keys", "-t", "b", "?")
            lag = wait(lambda scr: "Everywhere" in scr)
            if lag is not None:
                lags.append(lag)
                opens.append(lag)
            tmux("send-keys", "-t", "b", "q")  # (Escape alone waits for a possible sequence)
            lag = wait(lambda scr: "Everywhere" not in scr)
            if lag is not None:
                lags.append(lag)
                closes.append(lag)
            time.sleep(0.2)
        stop.set()
        th.join()
    finally:
        tmux("kill-server")
    if os.environ.get("TUI_LOAD_DEBUG"):
        print("open", sorted(round(x * 1000) for x in opens), file=sys.stderr)
        print("close", sorted(round(x * 1000) for x in closes), file=sys.stderr)
    return lags


def shutil_copy(src: Path, dst: Path) -> None:
    import shutil

    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)


if __name__ == "__main__":
    raise SystemExit(main())
