"""The scripted agent of the demo recording (benchmarks/record_demo.py) on the RMSNorm task.

It speaks through the fake Messages API and makes real edits with the real tools; its
kernels (demo_kernels/*.cu, package data) are real, compilable CUDA for `rmsnorm_fwd` (ABI
in docs/ARCHITECTURE.md). It reacts to the real tool results only loosely: it answers each question it is asked
(with a real check through bash), follows its plan otherwise, and if the stop hook still
rejects the final kernel it re-measures once before giving up.

    baseline ─▶ V1 vectorized, cross-warp reduction indexing bug (correctness failure)
             ─▶ explanation, fix = V2 (16-byte loads, still two passes over x)
             ─▶ stop attempt (rejected by the stop hook at a goal between V2 and V3)
             ─▶ V3: row in registers, warp per row for narrow rows, several rows per CTA
             ─▶ edge-case set, re-measure, stop (goal met)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from socratic_doubles.fakeapi import last_user_text

BUG_LINE = "float t = lane < kWarps / 2 ? warp_sums[lane] : 0.f;"
FIX_LINE = "float t = lane < kWarps ? warp_sums[lane] : 0.f;"

VERSIONS = ("v1", "v2", "v3")


def kernel(version: str) -> str:
    """The source of one planned version (package data demo_kernels/<version>.cu):
    v1 vectorized with the reduction bug (BUG_LINE), v2 = v1 fixed (FIX_LINE), v3 row in
    registers with a warp per narrow row."""
    return (resources.files(__package__) / "demo_kernels" / f"{version}.cu").read_text(
        encoding="utf-8")


KERNELS: dict[str, Callable[[], str]] = {v: partial(kernel, v) for v in VERSIONS}

# -- checks the scripted agent runs through bash (real commands over the real results) ---------

# every check starts from the newest saved evaluation (or says there is none yet, and exits
# 0: no evaluation yet is no failure, and the demo's first screen shows its first check)
PY_HEAD = ("python3 - <<'EOF'\n"
           "import glob, json, sys\n"
           "paths = sorted(glob.glob('../evals/*.json'))\n"
           "if not paths:\n"
           "    print('no saved evaluation yet: the first evaluate will answer this')\n"
           "    sys.exit(0)\n"
           "path = paths[-1]\n"
           "r = json.load(open(path))\n"
           "rows = r.get('scenarios') or []\n"
           "print('from', path)\n")

CHECK_BANDWIDTH = PY_HEAD + (
    "for s in rows:\n"
    "    p = s.get('params', {}); n_rows, cols = p.get('rows', 0), p.get('cols', 0)\n"
    "    nbytes = 2 * (2 * n_rows * cols + cols)\n"
    "    ms, bms = s.get('candidate_ms') or float('nan'), s.get('baseline_ms') or float('nan')\n"
    "    print(f\"{s['id']:>10}  {nbytes/1e6:9.2f} MB  candidate {nbytes/ms/1e9:5.2f} TB/s  \"\n"
    "          f\"baseline {nbytes/bms/1e9:5.2f} TB/s  bound_fraction {s.get('bound_fraction')}\")\n"
    "EOF")

CHECK_LATENCY = PY_HEAD + (
    "small = sorted(rows, key=lambda s: s['params'].get('rows', 0) * s['params'].get('cols', 0))[:3]\n"
    "for s in small:\n"
    "    print(s['id'], 'baseline', s.get('baseline_ms'), 'ms, candidate', s.get('candidate_ms'),\n"
    "          'ms, bytes bound', s.get('bound_ms'), 'ms')\n"
    "EOF")

CHECK_ERRORS = PY_HEAD + (
    "for p in paths[::-1]:\n"
    "    r = json.load(open(p))\n"
    "    bad = [s for s in r.get('scenarios') or [] if not s.get('correct')]\n"
    "    if bad:\n"
    "        print('last failing evaluation:', p)\n"
    "        for s in bad[:6]:\n"
    "            print(s['id'], 'max err', s.get('err'), 'baseline err', s.get('err_baseline'),\n"
    "                  (s.get('failures') or [''])[0])\n"
    "        break\n"
    "EOF")

CHECK_GAP = PY_HEAD + (
    "goal = float(json.load(open('../config.json'))['config'].get('goal_min_speedup') or 1.0)\n"
    "short = [s for s in rows if (s.get('speedup') or 0) < goal]\n"
    "total = sum(s['candidate_ms'] - s['baseline_ms'] / goal for s in short)\n"
    "for s in short:\n"
    "    need = s['candidate_ms'] - s['baseline_ms'] / goal\n"
    "    print(f\"{s['id']:>10} speedup {s['speedup']:.3f} needs {need*1000:.2f} us less \"\n"
    "          f\"({need / total:.0%} of the gap)\")\n"
    "print('scenarios short of the goal:', len(short), 'of', len(rows))\n"
    "EOF")

CHECK_REGISTERS = ("NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); "
                   "$NVCC -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v "
                   "-c candidate.cu -o /tmp/socratic_demo_candidate.o 2>&1 "
                   "| grep -E 'registers|spill' | head -24")

CHECK_TAIL = "grep -n -E 'cols % 8|i < nvec|addr % 16|row >= ' candidate.cu | head -20"

CHECK_TIMING = ("grep -n -E '^seeds|min_speedup|against' task/task.toml; " + PY_HEAD + (
    "for s in rows[:5]:\n"
    "    print(s['id'], 'pairs', s.get('pairs'), 'spread', s.get('spread'),\n"
    "          'speedup', s.get('speedup'))\n"
    "EOF"))

ANSWERS: list[tuple[tuple[str, ...], str, str]] = [
    (("wrong elements", "error", "pattern", "differ"),
     "Looking at where the failing evaluation put the errors before guessing: the per-scenario "
     "maximum error against the fp32 reference and the first failure it reported.",
     CHECK_ERRORS),
    (("gap", "separate path", "special", "phase", "share"),
     "Let me quantify the gap per scenario: how many microseconds each one must lose to reach "
     "the goal, and its share of the total.", CHECK_GAP),
    (("timestamp", "timed", "clock", "warm", "noise", "spread"),
     "Let me check what the evaluation actually measured before answering: the task's timing "
     "settings and the per-pair spread of the latest result.", CHECK_TIMING),
    (("latency", "launch", "chain", "microsecond", "smallest", "barely"),
     "The small scenarios are a few microseconds long; let me look at what the smallest ones "
     "cost against their bytes bound to see whether bandwidth even matters there.",
     CHECK_LATENCY),
    (("register", "spill", "compiler", "ptx", "sass", "occupancy"),
     "Let me ask the compiler instead of guessing: registers and spills per kernel from ptxas.",
     CHECK_REGISTERS),
    (("byte", "bandwidth", "dram", "bound", "roofline", "tb/s", "memory", "read every",
      "written"),
     "Checking it against the measured numbers rather than from memory: I compute the bytes "
     "each scenario must move (read x and w once, write y once) and divide by the measured "
     "times from the latest saved evaluation.", CHECK_BANDWIDTH),
    (("guard", "range", "tail", "lanes", "multiple", "edge", "odd"),
     "Checking which accesses are guarded: the vector path needs cols % 8 == 0 and 16-byte "
     "aligned pointers, and every vector index is compared against nvec.", CHECK_TAIL),
]
DEFAULT_ANSWER = ANSWERS[2][1], ANSWERS[2][2]

QUESTION_RE = re.compile(r"Question from [^:]*?: (.*?)\nAnswer it with a check", re.S)


def answer_for(question: str) -> tuple[str, str]:
    q = question.lower()
    for keys, text, cmd in ANSWERS:
        if any(k in q for k in keys):
            return text, cmd
    return DEFAULT_ANSWER


def step(text: str, *tools: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"text": text, "tools": list(tools)} if tools else {"text": text}


def write_candidate(version: str) -> tuple[str, dict[str, Any]]:
    return ("write_file", {"path": "candidate.cu", "content": KERNELS[version]()})


NOTES_V3 = """# Notes

## Task
RMSNorm forward, bf16 in/out, fp32 math; memory-bound: 2*(2*rows*cols + cols) bytes.

## Measured
- baseline: one block per row, scalar 2-byte loads, x read twice.
- V1 (16-byte vectors): wrong on every row. Cause: the cross-warp reduction read only
  warp_sums[0..kWarps/2). Fixed in V2.
- V2: correct, faster on large shapes, not on the smallest ones (latency-bound).
- V3: row cached in registers (x read once), warp per row for narrow rows, 8 rows per CTA.

## Next
- check the small shapes: a few microseconds, launch + one DRAM round trip.
"""


class ScriptedAgent:
    """A callable step source for FakeAnthropic: answers questions, else follows the plan.

    `on_step(i, body)` (optional) runs before plan step i is answered; record_demo uses it
    to append human questions to the inbox at scripted moments.
    """

    def __init__(self, on_step: Callable[[int, dict[str, Any]], None] | None = None,
                 chunk_delay: float = 0.0) -> None:
        self.on_step = on_step
        self.chunk_delay = chunk_delay
        self.i = 0
        self.answered = 0
        self.retries = 0
        self.plan = self._plan()

    def _plan(self) -> list[dict[str, Any]]:
        return [
            step("I'll start by reading the task definition and the baseline kernel.",
                 ("read_file", {"path": "task/task.toml"}),
                 ("read_file", {"path": "candidate.cu"})),
            step("The baseline uses one 256-thread block per row, scalar bf16 loads, a "
                 "shared-memory tree reduction and a second pass that re-reads x. Let me "
                 "measure it before changing anything.", ("evaluate", {})),
            step("Baseline measured. Writing down what I know before the first change.",
                 ("write_file", {"path": "NOTES.md", "content": (
                     "# Notes\n\n## Task\nRMSNorm forward, bf16, fp32 math. Memory-bound: "
                     "2*(2*rows*cols + cols) bytes per call.\n\n## Plan\n- 16-byte vector "
                     "loads/stores, warp-shuffle reduction.\n")})),
            step("First change: 16-byte vector loads and stores (8 bf16 per access) and a "
                 "warp-shuffle reduction instead of the shared-memory tree.",
                 write_candidate("v1"), ("evaluate", {})),
            step("Every scenario is wrong, and by a similar factor on every row, so the error "
                 "is in the scale, not in the elementwise part. The cross-warp reduction "
                 "indexes warp_sums with `lane < kWarps / 2`, so only half of the eight warp "
                 "partial sums enter the total: the mean of squares is too small and rstd too "
                 "large. Fixing the index bound to `lane < kWarps`.",
                 ("edit_file", {"path": "candidate.cu", "old_string": BUG_LINE,
                                "new_string": FIX_LINE}),
                 ("evaluate", {})),
            step("The vectorized kernel is correct now and faster on the large shapes. I think "
                 "this is close to the limit for this kernel; the remaining shapes are tiny."),
            step("The stop hook is right that the goal is not met on every scenario. The second "
                 "pass still re-reads x, and narrow rows waste most of a 256-thread block. "
                 "Next version: keep the row in registers so x is read from DRAM once, use one "
                 "warp per row (8 rows per CTA) for rows up to 2048 columns, and template the "
                 "vectors per thread.", write_candidate("v3"), ("evaluate", {})),
            step("Checking registers and spills of the templated kernels.",
                 ("bash", {"command": CHECK_REGISTERS})),
            step("The goal set only has column counts that are multiples of 8. Checking the "
                 "edge cases too (odd and tiny rows take the scalar path).",
                 ("evaluate", {"scenarios": "full"})),
            step("Updating my notes with what was measured.",
                 ("write_file", {"path": "NOTES.md", "content": NOTES_V3})),
            step("Re-measuring the goal set once more to see the run-to-run spread before I "
                 "stop.", ("evaluate", {})),
            step("V3 is correct on the goal set and the edge cases, and the re-measurement "
                 "agrees with the first one. Ending my turn so the goal can be checked."),
        ]

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        last = last_user_text(body)
        questions = QUESTION_RE.findall(last)
        if questions and self.answered < self._questions_seen(body):
            self.answered = self._questions_seen(body)
            texts, cmds = [], []
            for q in questions:
                text, cmd = answer_for(q)
                if cmd not in cmds:
                    texts.append(text)
                    cmds.append(cmd)
            return self._out(step("\n\n".join(texts), *(("bash", {"command": c}) for c in cmds)))
        if self.i >= len(self.plan):
            if "goal is not met" in last and self.retries < 1:
                self.retries += 1
                return self._out(step("The goal is still not met on every scenario. "
                                      "Re-measuring to separate noise from a real gap.",
                                      ("evaluate", {})))
            return self._out(step("I have nothing further to try right now."))
        if self.on_step:
            self.on_step(self.i, body)
        s = self.plan[self.i]
        self.i += 1
        return self._out(s)

    def _questions_seen(self, body: dict[str, Any]) -> int:
        n = 0
        for m in body.get("messages", []):
            if m.get("role") != "user" or isinstance(m.get("content"), str):
                continue
            for b in m.get("content") or []:
                if b.get("type") == "text" and "Question from" in b.get("text", ""):
                    n += 1
        return n

    def _out(self, s: dict[str, Any]) -> dict[str, Any]:
        s = dict(s)
        if self.chunk_delay:
            s["chunk_delay"] = self.chunk_delay
        return s


def write_kernels(dest: Path) -> dict[str, Path]:
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, fn in KERNELS.items():
        p = dest / f"{name}.cu"
        p.write_text(fn())
        out[name] = p
    return out

