"""Where a bench evaluation's judge time goes (issue 39's cost): `socratic eval` run in this
process with its worker started under cProfile (research only: the worker's command is
patched here, and the runner waits for the worker to exit before it kills it, so the profile
is written). Prints the worker's functions by cumulative and by own time.

    python research/judge_cost/profile.py OUTDIR -- flash_attn_fwd --scenarios bench --hidden 0 --no-compare
"""
import glob
import io
import os
import pstats
import shutil
import subprocess
import sys
import tempfile


def main() -> int:
    out, rest = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    os.makedirs(out, exist_ok=True)
    # the worker writes only under /dev, /tmp and /var/tmp once its sandbox closes (session 28:
    # profiles aimed at $OUT were never written), so they go to /tmp and are copied to `out`
    spool = tempfile.mkdtemp(prefix="judge_profile.", dir="/tmp")
    from socratic.evaluator import runner

    real = runner.isolated_python

    def profiled(*args: str) -> list[str]:
        if args == ("-m", "socratic.evaluator.worker"):
            return [sys.executable, "-I", "-m", "cProfile", "-o",
                    os.path.join(spool, f"worker.{os.getpid()}.{len(glob.glob(spool + '/worker.*'))}.prof"),
                    "-m", "socratic.evaluator.worker"]
        return real(*args)

    runner.isolated_python = profiled
    kill = runner._Worker.kill

    def kill_after_exit(self: "runner._Worker") -> None:
        try:
            self.proc.wait(timeout=30)   # its profile is written as it exits
        except subprocess.TimeoutExpired:
            pass
        kill(self)

    runner._Worker.kill = kill_after_exit
    from socratic.cli import main as cli
    rc = 0
    try:
        rc = cli(["eval", *rest]) or 0
    except SystemExit as exc:
        rc = int(exc.code or 0)
    profiles = sorted(glob.glob(spool + "/worker.*.prof"))
    if not profiles:
        print(f"profile.py: the worker wrote no profile under {spool}", file=sys.stderr)
    for path in profiles:
        shutil.copy(path, out)
        for key, n in (("cumulative", 45), ("tottime", 30)):
            buf = io.StringIO()
            pstats.Stats(path, stream=buf).strip_dirs().sort_stats(key).print_stats(n)
            text = buf.getvalue()
            print(text[text.find("   ncalls"):])
    return rc


if __name__ == "__main__":
    sys.exit(main())
