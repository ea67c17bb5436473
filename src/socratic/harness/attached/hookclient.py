"""The hook command an attached agent runs: a tiny client of the session server.

Written into the agent's hook settings by `socratic attach` as

    exec PYTHON -I -S -c "import hookclient from socratic/harness; main()" --flags -I --block WORD EVENT

`-I -S`: the standard library only, nothing from the working directory (an agent's
`json.py` cannot shadow a module) and no site-packages (no `.pth` file runs), so it starts
in a few milliseconds. It finds the session from the workspace marker, hands the agent's
payload to the session's server over a Unix socket (harness/attached/hookserver.py), prints the
answer and acknowledges it: the questions in an answer count as delivered only once it
was printed.

It never starts a server: socratic starts one, outside the agent's Landlock domain, before
it starts the agent (harness/attached/agentlaunch.py); a hook runs inside that domain, and a server
it started would write the record with whatever the agent put in its environment. When no
server can be reached it runs the hook in a process of its own (`PYTHON FLAGS -m socratic
hook EVENT`, with an allow-listed environment): an agent started by socratic cannot write
the session, so there the hook fails and a stop is refused; an agent started by hand (no
server) is served this way, unconfined. A stop that fails is refused, never let through.
Nothing here imports socratic.
"""

from __future__ import annotations

import _socket  # not `socket`: its enum import alone costs a hook 5 ms
import os
import sys
import time

MARKER = ".socratic-session"
PROTOCOL = "socratic-hook/1"

# The exchange, kept free of the json module (its import costs 10 ms):
#   request  "PROTOCOL\tKIND\tEVENT\tSTARTED\tLEN_PAYLOAD\tSCENARIOS\n", the payload
#   reply    "CODE\tACK\tLEN_STDOUT\tLEN_STDERR\n", stdout, stderr; CODE "fail": stdout
#            is the one line that says why (the client refuses a stop on it)
#   ack      "ack\n" once stdout is printed (when ACK is 1); the server closes when settled


def socket_dir() -> str:
    return f"/tmp/socratic-{os.getuid()}"


def socket_path(session: str) -> str:
    """The server's socket for a session: named by the session folder's device and inode
    (the same however the path is spelled; short enough for AF_UNIX)."""
    st = os.stat(session)
    return os.path.join(socket_dir(), f"{st.st_dev:x}-{st.st_ino:x}.sock")


def private_dir(path: str) -> bool:
    """The socket folder exists, is ours and no one else's (made here if missing)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.getuid() \
        and not st.st_mode & 0o077


def marker_session(text: str) -> str | None:
    """The session path in a workspace marker (`{"session": "...", ...}` as attach writes
    it), read without the json module unless the value holds an escape."""
    key = '"session": "'
    i = text.find(key)
    if i >= 0:
        j = text.find('"', i + len(key))
        value = text[i + len(key):j] if j > 0 else ""
        if value and "\\" not in value:
            return value
    import json

    try:
        session = json.loads(text)["session"]
    except (ValueError, KeyError, TypeError):
        return None
    return session if isinstance(session, str) else None


def find_session(starts: list[str | None]) -> str | None:
    env = os.environ.get("SOCRATIC_SESSION")
    if env:
        return env
    for start in starts:
        if not start:
            continue
        d = os.path.realpath(start)
        while True:
            marker = os.path.join(d, MARKER)
            if os.path.isfile(marker):
                try:
                    with open(marker, encoding="utf-8") as fh:
                        return marker_session(fh.read())
                except OSError:
                    return None  # the full command reports the damaged marker
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None


def payload_cwd(payload: bytes) -> str | None:
    import json

    try:
        cwd = json.loads(payload).get("cwd")
    except (ValueError, AttributeError):
        return None
    return cwd if isinstance(cwd, str) else None


def connect(path: str) -> _socket.socket | None:
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None


def recv_line(s: _socket.socket) -> tuple[bytes, bytes]:
    """(the first line, what came after it); OSError if the peer hangs up first."""
    buf = b""
    while b"\n" not in buf:
        b = s.recv(1 << 16)
        if not b:
            raise OSError("the peer hung up")
        buf += b
    line, rest = buf.split(b"\n", 1)
    return line, rest


def recv_exactly(s: _socket.socket, n: int, buf: bytes) -> tuple[bytes, bytes]:
    while len(buf) < n:
        b = s.recv(1 << 16)
        if not b:
            raise OSError("the server hung up")
        buf += b
    return buf[:n], buf[n:]


def ask(s: _socket.socket, head: str, body: bytes) -> tuple[str, bool, bytes, bytes] | None:
    """One exchange with the server: (code, ack, stdout, stderr); None when it broke off
    (the server died)."""
    try:
        s.sendall(head.encode("utf-8") + b"\n" + body)
        line, buf = recv_line(s)
        code, ack, n_out, n_err = line.decode().split("\t")
        out, buf = recv_exactly(s, int(n_out), buf)
        err, _ = recv_exactly(s, int(n_err), buf)
    except (OSError, ValueError):
        return None
    return code, ack == "1", out, err


# the environment socratic's own Python processes get: socratic/pyproc.py's allow-list,
# repeated here (this client imports nothing of socratic; a test keeps the two equal)
KEEP_EXACT = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ",
    "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
    "CC", "CXX", "SSH_AUTH_SOCK",
})
KEEP_PREFIXES = ("LC_", "SOCRATIC_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE_", "CODEX_")
DROP_PREFIXES = ("PYTHON", "LD_", "DYLD_")


def clean_env(session: str | None) -> dict[str, str]:
    """The hook process's environment: no PYTHONPATH, no LD_PRELOAD, nothing not listed
    (the evaluator it may start inherits it); the session named, so that its working
    directory need not be the workspace."""
    env = {k: v for k, v in os.environ.items()
           if (k in KEEP_EXACT or k.startswith(KEEP_PREFIXES)) and not k.startswith(DROP_PREFIXES)}
    env.setdefault("PATH", os.defpath)
    if session:
        env["SOCRATIC_SESSION"] = session
    return env


def fallback(argv: list[str], flags: list[str], payload: bytes | None, event: str,
             block: str, session: str | None = None) -> int:
    """The hook in a process of its own (no server): socratic's full command, isolated
    (`-I` where socratic imports so, an allow-listed environment, the session folder as
    its working directory once the session is known)."""
    import subprocess

    cmd = [sys.executable, *flags, "-m", "socratic", "hook", *argv]
    env = clean_env(session)
    cwd = session if session and os.path.isdir(session) else None
    if payload is None:  # ./evaluate: nothing on stdin, its output is the table
        try:
            if cwd:
                os.chdir(cwd)
            os.execve(sys.executable, cmd, env)
        except OSError as exc:
            print(f"socratic: error: cannot run {sys.executable}: {exc}", file=sys.stderr)
            return 1
    try:
        done = subprocess.run(cmd, input=payload, stdout=subprocess.PIPE, check=False, env=env,
                              cwd=cwd)
        out, code = done.stdout, done.returncode
    except OSError as exc:
        out, code = b"", 1
        print(f"socratic: error: cannot run {sys.executable}: {exc}", file=sys.stderr)
    if event == "stop" and not _is_answer(out):
        return refuse_stop(block, f"the stop hook exited {code} with no answer")
    sys.stdout.buffer.write(out)
    return code


def _is_answer(out: bytes) -> bool:
    import json

    try:
        return isinstance(json.loads(out), dict)
    except ValueError:
        return False


def refuse_stop(block: str, why: str) -> int:
    """Fail closed: a stop socratic could not judge is refused, with a reason to act on."""
    import json

    print(json.dumps({"decision": block, "reason": (
        f"socratic could not judge this stop ({why}). The goal is unchecked, so the stop is "
        f"refused: carry on with the task, and stop again later.")}))
    print(f"socratic: error: {why} (the stop was refused)", file=sys.stderr)
    return 0


def parse_args(argv: list[str]) -> tuple[list[str], str, list[str]]:
    """(python flags, block word, the rest: EVENT and its options)."""
    flags: list[str] = []
    block = "block"
    while len(argv) >= 2 and argv[0] in ("--flags", "--block"):
        if argv[0] == "--flags":
            flags = argv[1].split()
        else:
            block = argv[1]
        argv = argv[2:]
    return flags, block, argv


def main(argv: list[str]) -> int:
    flags, block, rest = parse_args(argv)
    if not rest:
        print("socratic: error: hookclient: no hook event given", file=sys.stderr)
        return 1
    event = rest[0]
    started = time.time()
    payload: bytes | None = None
    if event == "evaluate":  # ./evaluate --session S [--scenarios SET]
        opts = dict(zip(rest[1::2], rest[2::2], strict=False))
        session = opts.get("--session")
        scenarios = opts.get("--scenarios", "")
        kind, body = "evaluate", b""
        if set(opts) - {"--session", "--scenarios"} or len(rest) % 2 == 0 or not session \
                or "\t" in scenarios or "\n" in scenarios:
            return fallback(rest, flags, None, event, block)  # let the full command say why
    else:
        payload = body = sys.stdin.buffer.read()
        kind, scenarios = "hook", ""
        # the project dirs the agents name and our own cwd first: reading the payload's
        # cwd costs the json import
        session = find_session([os.environ.get("CLAUDE_PROJECT_DIR"),
                                os.environ.get("GEMINI_PROJECT_DIR"), os.getcwd()]) \
            or find_session([payload_cwd(payload)])
        if session is None:
            return fallback(rest, flags, payload, event, block)  # its one-line error
    session = os.path.abspath(session)
    if os.environ.get("SOCRATIC_HOOK_SERVER") == "0":  # asked for: every hook on its own
        return fallback(rest, flags, payload, event, block, session)
    try:
        path = socket_path(session)
    except OSError:
        return fallback(rest, flags, payload, event, block, session)
    s = connect(path) if os.path.exists(path) else None
    if s is None:
        return fallback(rest, flags, payload, event, block, session)
    try:
        head = "\t".join([PROTOCOL, kind, event, repr(started), str(len(body)), scenarios])
        reply = ask(s, head, body)
        if reply is None:  # the server went away mid-answer
            return fallback(rest, flags, payload, event, block, session)
        code, ack, out, err = reply
        if code == "fail":
            why = out.decode("utf-8", "replace")
            if event == "stop":
                return refuse_stop(block, why)
            print(f"socratic: error: {why}", file=sys.stderr)
            return 1
        try:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
            sys.stderr.buffer.write(err)
        except OSError:
            return 1  # the agent is gone: no ack, so what it carried is due again
        if ack:
            try:
                s.sendall(b"ack\n")
                s.recv(16)  # the server has settled it when it closes
            except OSError:
                pass
        return int(code) if code.lstrip("-").isdigit() else 1
    finally:
        s.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
