"""The session server: one long-lived process per attached session (on this host) that keeps
the campaign loaded between hooks and answers them over a Unix socket; the hook command
is a tiny client (hookclient.py).

- Started by socratic before the agent (harness/attached/agentlaunch.py), outside the agent's
  Landlock domain and with an allow-listed environment, never by a hook; a second one
  started at the same moment sees the first one's lock and exits. Held (`--held`): it
  serves until its launcher closes its stdin (the launcher writes `agent PID` lines there:
  the agents it started). Otherwise it exits when the campaign has ended and nothing is in
  flight, or after IDLE_S without a request.
- The campaign (harness/attached/attached_campaign.py) is loaded once and changed in memory; each request is
  answered under the session's writer lock, as a hook process is, and its state is saved
  before the answer goes out, so that the files always hold what a restart needs. A
  writer other than the server (a hook that could not reach it) is noticed by the files
  it changed, and the campaign is loaded again from them.
- One request at a time changes the campaign, but an evaluation (`./evaluate`, a stop that
  needs one, an evaluation the engineer asked for) and a hook waiting for the engineer
  let go of it while they wait: the other hooks are answered meanwhile.
- The questions and notes an answer carries count as delivered when the client says it
  printed the answer (`ack`); a client that dies first leaves them due.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from socratic.errors import InputError
from socratic.harness.attached import agentspec
from socratic.harness.attached.attached_campaign import HOOK_STATE, AttachedCampaign, check_set
from socratic.harness.attached.hookclient import (
    PROTOCOL,
    private_dir,
    recv_exactly,
    recv_line,
    socket_dir,
    socket_path,
)
from socratic.harness.attached.hooks import answer, evaluate_on, one_line
from socratic.harness.core.inbox import Taken

# a server with no request for this long exits (the next hook starts one again)
IDLE_S = float(os.environ.get("SOCRATIC_HOOK_SERVER_IDLE_S") or 1800)
ACK_WAIT_S = 10.0       # how long an answer waits for the client's word that it printed it
INBOX_POLL_S = 1.0      # the engineer's commands are read this often between hooks


class HookServer:
    def __init__(self, session_dir: Path, held: bool = False) -> None:
        self.dir = session_dir
        self.held_by_launcher = held          # serves until its launcher lets go (stdin)
        self.launcher_gone = False
        self.agents: set[int] = set()         # the pids of the agents its launcher started
        self.lock = threading.Lock()          # whoever holds it changes the campaign
        self.local = threading.local()        # the request this thread answers
        self.camp = AttachedCampaign(session_dir, server=self)
        self.spec = agentspec.load(self.camp.settings.agent)
        if not self.spec.has_hooks:
            raise InputError(f"{session_dir}: a campaign by hand (--agent {self.spec.name}) "
                             f"has no hooks to serve")
        with self.lock, self.camp.log.locked():
            self.camp.load()
            self.stamp = self.files()
        # as a campaign does: every event flushed, fsync'd at most once a second (and at the
        # end, and when idle: `sync`), not twice per hook
        self.camp.log.log.fsync_every_s = 1.0
        self.in_flight = 0
        self.last_request = time.monotonic()
        self.inbox_size = self.size(self.camp.session.inbox)

    # ------------------------------------------------------------------ the campaign's lock
    @contextmanager
    def outside(self) -> Iterator[None]:
        """Let the other hooks in while this one waits (it holds the lock)."""
        self.lock.release()
        try:
            yield
        finally:
            self.lock.acquire()

    @contextmanager
    def inside(self) -> Iterator[None]:
        """Take the campaign back for a moment (from outside())."""
        with self.lock:
            yield

    def caller_alive(self) -> bool:
        """Whether the client of this thread's request still waits (it sends nothing until
        the answer, so a readable socket means it hung up)."""
        conn = getattr(self.local, "conn", None)
        if conn is None:
            return True
        try:
            readable, _, _ = select.select([conn], [], [], 0)
            return not readable or conn.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    # ------------------------------------------------------------------ files
    @staticmethod
    def size(path: Path) -> int:
        try:
            return path.stat().st_size
        except OSError:
            return -1

    def files(self) -> tuple[tuple[int, int], ...]:
        """What the session's state files look like after our own writes."""
        out = []
        s = self.camp.session
        for p in (s.events, s.state_file, s.dir / HOOK_STATE):
            try:
                st = p.stat()
                out.append((st.st_size, st.st_mtime_ns))
            except OSError:
                out.append((-1, 0))
        return tuple(out)

    @contextmanager
    def held(self) -> Iterator[AttachedCampaign]:
        """The campaign, under the session's writer lock; loaded again first when another
        writer changed its files; saved afterwards."""
        camp = self.camp
        with camp.log.locked():
            if self.in_flight <= 1 and self.files() != self.stamp:
                camp.load()  # a hook that could not reach us wrote the session
            try:
                yield camp
                camp.save()
            except BaseException:
                # what is in memory may differ from the files now (a full disk): the next
                # request loads the campaign again from them
                self.stamp = ()
                with suppress(OSError):
                    camp.save()
                raise
            self.stamp = self.files()

    # ------------------------------------------------------------------ requests
    def handle(self, conn: socket.socket) -> None:
        self.local.conn = conn
        req = read_request(conn)
        if req is None:
            return
        taken: list[Taken] = []
        with self.lock:
            self.in_flight += 1
            self.last_request = time.monotonic()
            try:
                code, out, taken = self.reply(req)
                err = ""
            except Exception as exc:
                code, out, err = "fail", one_line(exc), ""
        try:
            data, errb = out.encode("utf-8"), err.encode("utf-8")
            conn.sendall(f"{code}\t{int(bool(taken))}\t{len(data)}\t{len(errb)}\n".encode()
                         + data + errb)
            printed = bool(taken) and _wait_ack(conn)
        except OSError:
            printed = False
        with self.lock:
            try:
                if taken:
                    with self.held() as camp:
                        camp.settle(taken, printed)
            except Exception as exc:
                print(f"socratic hook serve: settling an answer: {one_line(exc)}",
                      file=sys.stderr)
            finally:
                self.in_flight -= 1

    def reply(self, req: Request) -> tuple[str, str, list[Taken]]:
        """(exit code, stdout, what the answer carries) for one request (under self.lock)."""
        if req.kind == "evaluate":
            set_name = req.scenarios or None
            check_set(self.dir, set_name)
            with self.held() as camp:
                return "0", evaluate_on(camp, set_name) + "\n", []
        try:
            payload = json.loads(req.payload) if req.payload.strip() else {}
        except ValueError:
            raise InputError(f"hook {req.event}: stdin is not JSON "
                             f"({req.payload[:80].decode('utf-8', 'replace')!r})") from None
        if not isinstance(payload, dict):
            raise InputError(f"hook {req.event}: stdin is not a JSON object")
        with self.held() as camp:
            out, taken = answer(camp, req.event, payload, req.started, self.spec)
        return "0", json.dumps(out, ensure_ascii=False) + "\n", taken

    def poll_inbox(self) -> None:
        """The engineer's commands (a stop, a pause) are logged when typed, not at the next
        hook: the inbox is read whenever it grows."""
        size = self.size(self.camp.session.inbox)
        if size == self.inbox_size:
            return
        if not self.lock.acquire(timeout=0.05):
            return  # a hook is being answered: it reads the inbox itself
        try:
            self.inbox_size = size
            if self.camp.ended is None:
                with self.held() as camp:
                    camp.engine.poll_inbox()
        finally:
            self.lock.release()

    def sync(self) -> None:
        """fsync the log when it has events newer than the last fsync (between hooks)."""
        with suppress(OSError):
            self.camp.log.log.sync_if_behind()

    def done(self) -> bool:
        with self.lock:
            if self.in_flight:
                return False
            gone = not self.camp.session.events.exists()  # the session was deleted
            if self.held_by_launcher:  # the agent may go on after an end (a prompt resumes)
                return gone or self.launcher_gone
            ended = self.camp.ended is not None
            return ended or gone or time.monotonic() - self.last_request > IDLE_S

    def read_launcher(self) -> None:
        """Its launcher's lines (`agent PID`), or its end (EOF: the server winds down)."""
        if not self.held_by_launcher or self.launcher_gone:
            return
        try:
            readable, _, _ = select.select([sys.stdin.buffer], [], [], 0)
            if not readable:
                return
            data = os.read(sys.stdin.fileno(), 4096)
        except (OSError, ValueError):
            data = b""
        if not data:
            self.launcher_gone = True
            return
        for line in data.decode("ascii", "replace").splitlines():
            word, _, pid = line.partition(" ")
            if word == "agent" and pid.strip().isdigit():
                self.agents.add(int(pid))


@dataclass
class Request:
    kind: str           # hook | evaluate
    event: str
    started: float      # when the client started, on this process's monotonic clock
    payload: bytes
    scenarios: str


def read_request(conn: socket.socket) -> Request | None:
    """The client's request (hookclient.py says the format); None if it is not one."""
    try:
        line, buf = recv_line(conn)
        proto, kind, event, started, size, scenarios = line.decode().split("\t")
        payload, _ = recv_exactly(conn, int(size), buf)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if proto != PROTOCOL or kind not in ("hook", "evaluate"):
        return None
    return Request(kind, event, _monotonic(started), payload, scenarios)


def _monotonic(started: str) -> float:
    """The client's wall-clock start as this process's monotonic clock."""
    now = time.monotonic()
    try:
        wall = float(started)
    except ValueError:
        return now
    return now - max(0.0, time.time() - wall)


def _wait_ack(conn: socket.socket) -> bool:
    conn.settimeout(ACK_WAIT_S)
    try:
        return conn.recv(16).strip() == b"ack"
    except OSError:
        return False
    finally:
        conn.settimeout(None)


def serve(session_dir: Path, held: bool = False) -> int:
    """`socratic hook serve --session DIR [--held]`: run the session's server until the
    campaign ends or it is idle (held: until its launcher closes its stdin). Exit 0 also
    when another server already serves the session."""
    session_dir = session_dir.resolve()
    if not (session_dir / "events.jsonl").exists() and not (session_dir / "config.json").exists():
        raise InputError(f"{session_dir}: no campaign session there")
    if not private_dir(socket_dir()):
        raise InputError(f"{socket_dir()}: not a private folder of this user; no server")
    path = socket_path(str(session_dir))
    lock_path = path[:-len(".sock")] + ".lock"
    lock = open(lock_path, "a")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server has it
    try:
        os.unlink(path)  # a dead server's socket
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    bound = os.stat(path).st_ino
    listener.listen(64)
    listener.settimeout(INBOX_POLL_S if not held else 0.2)
    server: HookServer | None = None
    try:
        server = HookServer(session_dir, held=held)
        print(f"socratic hook serve: pid {os.getpid()} serving {session_dir} on {path}",
              file=sys.stderr)
        while not server.done():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                server.read_launcher()
                server.poll_inbox()
                server.sync()
                continue
            conn.settimeout(None)
            threading.Thread(target=_answer, args=(server, conn), daemon=True).start()
    finally:
        if server is not None:
            server.sync()
        try:
            if os.stat(path).st_ino == bound:  # not a successor's
                os.unlink(path)
        except OSError:
            pass
        listener.close()
        with suppress(OSError):
            os.unlink(lock_path)  # still held: a server starting now makes a new one
    # let the last answers' threads finish writing
    deadline = time.monotonic() + 5
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    return 0


def _answer(server: HookServer, conn: socket.socket) -> None:
    with conn:
        try:
            server.handle(conn)
        except Exception as exc:
            print(f"socratic hook serve: {one_line(exc)}", file=sys.stderr)
