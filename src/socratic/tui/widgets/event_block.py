"""One-line-ish transcript blocks: campaign start/end, evaluations, triggers, questions,
stop-hook verdicts, problems and control actions. Symbols and words carry the meaning; style
only emphasises it."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from socratic.contracts import number_runs
from socratic.tui import format as fmt
from socratic.tui.state import Block, EvalPoint


def render_block(b: Block) -> Text:
    t = Text()
    stamp = f"[{fmt.elapsed(b.t)}] "
    t.append(stamp, style="dim")
    if b.kind == "start":
        t.append("▶ campaign start ", style="bold")
        t.append(b.text)
        goal = b.get("goal")
        if goal is not None:
            t.append(f"  goal ≥{goal:.2f}× vs {b.get('against') or 'baseline'}")
    elif b.kind == "end":
        t.append("■ campaign end", style="bold")
        if b.text:
            t.append(f": {b.text}")
        if b.detail:   # an end that is no result (hooks_silent, agent_exited)
            t.append(f"  ! {b.detail}", style="bold reverse")
    elif b.kind == "eval":
        point: EvalPoint | None = b.get("point")
        t.append(f"◆ eval {b.title}", style="bold")
        source = b.get("source")
        tags = [x for x in (b.get("set"), "imported" if source == "import" else source) if x]
        if tags:
            t.append(f" ({', '.join(tags)})", style="dim")
        if not b.done:
            t.append("  running…", style="dim italic")
        elif point is not None:
            if point.all_correct is False:
                t.append("  ✗ INCORRECT", style="bold reverse")
            elif point.all_correct:
                t.append("  ✓ correct")
            if point.shows():
                t.append(f"  geomean {fmt.speedup(point.geomean)}  min {fmt.speedup(point.min)}")
                if point.worst:
                    t.append(f"  worst {point.worst}", style="dim")
            for name, val in point.comparisons:
                if point.shows(name):
                    t.append(f"  vs {name} {fmt.speedup(val)}", style="dim")
            if point.retracted:
                t.append(f"  ↺ retracted ({point.retracted})", style="bold")
        if b.get("error"):
            t.append(f"  error: {b.get('error')}", style="bold")
        waited = b.get("gpu_wait_s")
        if b.duration is not None and b.get("source") != "import":  # timed elsewhere
            t.append(f"  ({fmt.duration(b.duration)}"
                     + (f", {fmt.duration(waited)} waiting for the GPU" if waited and waited >= 0.05
                        else "") + ")", style="dim")
    elif b.kind == "trigger":
        t.append(f"⚑ trigger {b.title}", style="bold")
        if b.text:
            t.append(f": {b.text}")
        sugg = b.get("suggestions") or ()
        if sugg:
            t.append(f"  ({len(sugg)} suggested: {', '.join(sugg[:3])})", style="dim")
    elif b.kind == "question":
        src = b.title or "human"
        t.append(f"? question [{src}", style="bold reverse")
        if b.detail:
            t.append(f" @ {b.detail}", style="bold reverse")
        t.append("]", style="bold reverse")
        bid = b.get("bank_id")
        if bid:
            t.append(f" {bid}", style="dim")
        t.append("\n  " + b.text, style="bold")
    elif b.kind == "stophook":
        if b.ok:
            t.append("✓ stop hook: goal met, stop accepted", style="bold")
        else:
            t.append("✗ stop hook: goal NOT met, stop rejected", style="bold reverse")
            failing = b.get("failing") or ()
            for sid, correct, spd, goal in failing[:6]:
                what = "incorrect" if correct is False else f"{fmt.speedup(spd)} < {fmt.speedup(goal)}"
                t.append(f"\n  · {sid}: {what}")
            if len(failing) > 6:
                t.append(f"\n  · … {len(failing) - 6} more")
        if b.text:
            t.append(f"\n  {b.text}", style="dim")
    elif b.kind == "retract":
        what = "the comparisons of " if b.title == "comparisons" else ""
        t.append(f"↺ retracted {what}evaluation(s) {number_runs(b.get('evals') or ())}",
                 style="bold")
        if b.text:
            t.append(f": {b.text}")
    elif b.kind == "problem":
        t.append(f"⚠ problem in {b.title}", style="bold")
        if b.text:
            t.append(f": {b.text}")
    elif b.kind == "control":
        t.append(f"⏵ control: {b.title}", style="bold")
        if b.text:
            t.append(f" ({b.text})", style="dim")
    else:
        t.append(f"{b.kind}: {b.text}")
    return t


class EventBlock(Static):
    DEFAULT_CSS = """
    EventBlock { height: auto; padding: 0 1; }
    EventBlock.-question { margin: 1 0 0 0; }
    EventBlock.-stophook { margin: 0 0 0 0; }
    """

    def __init__(self, block: Block) -> None:
        super().__init__(render_block(block), classes=f"-{block.kind}")
        self.block = block

    def set_block(self, block: Block) -> None:
        self.block = block
        self.update(render_block(block))

    def copy_text(self) -> str:
        return render_block(self.block).plain
