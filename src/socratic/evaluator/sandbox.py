"""Write protection for the evaluation worker (Linux Landlock, unprivileged).

A candidate runs inside the worker with the user's rights. Before its library is loaded
the worker gives up the right to write anywhere but /dev (the GPU driver's device files)
and the temporary directories, so a candidate cannot poison the build cache, the
evaluator's helper kernels or the baseline for later evaluations. Reads and execution stay
allowed everywhere. Where the kernel lacks Landlock this is a no-op and says so.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

from socratic.landlock import Policy, restrict_self

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446   # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_* rights that change the filesystem (reads, exec and device ioctls are
# not handled, so they stay allowed everywhere)
_WRITE_RIGHTS_V1 = sum(1 << b for b in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
_REFER, _TRUNCATE = 1 << 13, 1 << 14

WRITABLE = ("/dev", "/tmp", "/var/tmp")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def protect_files(writable: tuple[str, ...] = WRITABLE) -> str:
    """Forbid writes outside `writable` for this process and its children.
    Returns "landlock" when in force, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if abi < 1:
        return f"unavailable (landlock: {os.strerror(ctypes.get_errno())})"
    rights = _WRITE_RIGHTS_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(rights)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        return f"unavailable (landlock ruleset: {os.strerror(ctypes.get_errno())})"
    try:
        for path in writable:
            if not os.path.isdir(path):
                continue
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, fd)
                if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    return f"unavailable (landlock rule for {path}: {os.strerror(ctypes.get_errno())})"
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"unavailable (no_new_privs: {os.strerror(ctypes.get_errno())})"
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return f"unavailable (landlock restrict: {os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return "landlock"


# --- the candidate's launcher: no capabilities, no new processes, no reach into others ------

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_PR_SET_DUMPABLE, _PR_SET_PDEATHSIG = 4, 1
_CAP_VERSION_3 = 0x20080522
_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_CLONE_THREAD = 0x00010000
CANDIDATE_FILE_LIMIT = 8 << 20   # bytes: the most it may write to a file (its stdout and stderr)
# x86-64 system calls the launcher never needs: new processes and programs, and reaching
# into other processes (their memory, their file descriptors, their signals)
_DENIED_X86_64 = {"fork": 57, "vfork": 58, "execve": 59, "ptrace": 101, "tkill": 200,
                  "process_vm_readv": 310, "process_vm_writev": 311, "execveat": 322,
                  "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
                  "io_uring_register": 427, "pidfd_open": 434, "pidfd_getfd": 438,
                  # every socket: a path-named Unix socket is no file to Landlock, so a local
                  # one reaches any service that trusts the uid (tmux, the systemd user
                  # manager, D-Bus, docker.sock) and runs commands outside the sandbox; the
                  # driver's own connections are made before (its context is up)
                  "socket": 41,
                  # ... nor a pair of them: a datagram one sends to any path-named socket
                  # (journald, /dev/log, one an agent binds) once disconnected (red team, s27)
                  "socketpair": 53,
                  # leaving the judge's process group: its killpg would miss it
                  "setpgid": 109, "setsid": 112,
                  # SysV IPC objects and kernel keys outlive the process (and keyrings hold
                  # the user's keys): a channel to the next evaluation or to the user's things
                  "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66,
                  "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220,
                  "add_key": 248, "request_key": 249, "keyctl": 250}
_SYS_PRCTL = 157
_SYS_PRLIMIT64 = 302
_SCHED_SET = (142, 144, 203, 314)   # sched_setparam, sched_setscheduler, sched_setaffinity, sched_setattr
_PRIORITY_SET = ((141, 0), (251, 1))   # setpriority(PRIO_PROCESS), ioprio_set(IOPRIO_WHO_PROCESS)


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _seccomp_program(own_pid: int) -> list[tuple[int, int, int, int]]:
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, _AUDIT_ARCH_X86_64), (ret, 0, 0, _RET_ERRNO | _EPERM), (ld, 0, 0, 0),
            (0x35, 0, 1, 0x40000000), (ret, 0, 0, _RET_ERRNO | _EPERM)]   # x32 system calls
    for nr in sorted(_DENIED_X86_64.values()):
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, _RET_ERRNO | _EPERM)]
    prog += [(jeq, 0, 1, 435), (ret, 0, 0, _RET_ERRNO | _ENOSYS)]   # clone3: glibc falls back to clone
    # prctl: all but PR_SET_PDEATHSIG (set before the filter: it dies with the judge)
    prog += [(jeq, 0, 4, _SYS_PRCTL), (ld, 0, 0, 16), (jeq, 0, 1, _PR_SET_PDEATHSIG), (ret, 0, 0, _RET_ERRNO | _EPERM),
             (ret, 0, 0, _RET_ALLOW)]
    # clone: threads only
    prog += [(jeq, 0, 4, 56), (ld, 0, 0, 16), (jset, 1, 0, _CLONE_THREAD), (ret, 0, 0, _RET_ERRNO | _EPERM),
             (ret, 0, 0, _RET_ALLOW)]
    # kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo: this process only (Landlock
    # scopes signals only from ABI 6; sigqueue(3) reaches any process of the user below)
    for nr in (62, 234, 129, 297):
        prog += [(jeq, 0, 4, nr), (ld, 0, 0, 16), (jeq, 1, 0, own_pid), (ret, 0, 0, _RET_ERRNO | _EPERM),
                 (ret, 0, 0, _RET_ALLOW)]
    # another process's limits and scheduling (neither is Landlock's to stop; prlimit64 on
    # a process of the same user needs no capability: a CPU-time limit kills the judge):
    # its own only, pid 0 or its pid (threads use 0, as glibc does)
    for nr in (_SYS_PRLIMIT64, *_SCHED_SET):
        prog += [(jeq, 0, 5, nr), (ld, 0, 0, 16), (jeq, 2, 0, 0), (jeq, 1, 0, own_pid),
                 (ret, 0, 0, _RET_ERRNO | _EPERM), (ret, 0, 0, _RET_ALLOW)]
    for nr, which in _PRIORITY_SET:   # (which, who): a process, and that one itself
        prog += [(jeq, 0, 7, nr), (ld, 0, 0, 16), (jeq, 0, 3, which), (ld, 0, 0, 24), (jeq, 2, 0, 0),
                 (jeq, 1, 0, own_pid), (ret, 0, 0, _RET_ERRNO | _EPERM), (ret, 0, 0, _RET_ALLOW)]
    return prog + [(ret, 0, 0, _RET_ALLOW)]


# of /dev, what a library may read besides the GPU's device files (_device_files): not
# /dev/shm (what another process left there), nor a terminal (/dev/pts: what the user types)
DEV_READS = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full")


def launcher_reads(library: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What the candidate's process may read once confined: the system's libraries and
    the driver's files, the CUDA toolkit, this Python and its packages, and the
    candidate's own build folder; not the user's files, the build cache's other entries,
    the session, /etc beyond the loader's cache, nor anything under /tmp, /dev/shm or
    /dev/pts."""
    py = {sys.prefix, sys.base_prefix, sys.exec_prefix, *[p for p in sys.path if p and os.path.isdir(p)]}
    cuda = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    return tuple(p for p in (
        "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/proc", "/sys", *DEV_READS,
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nvidia", "/etc/localtime",
        os.path.dirname(os.path.realpath(library)), *sorted(py), *cuda, *extra) if p)



def _device_files() -> tuple[str, ...]:
    """The GPU's device files (the driver opens them read-write) and /dev/null: the only
    files the candidate's process may write."""
    names = [n for n in os.listdir("/dev") if n.startswith("nvidia")] if os.path.isdir("/dev") else []
    caps = ["/dev/nvidia-caps/" + n for n in os.listdir("/dev/nvidia-caps")] if os.path.isdir("/dev/nvidia-caps") else []
    return tuple(["/dev/" + n for n in names if not os.path.isdir("/dev/" + n)] + caps + ["/dev/null"])


def confine_launcher(library: str = "", extra_reads: tuple[str, ...] = ()) -> dict[str, str]:
    """Everything the candidate's launcher gives up before the candidate's library loads:
    reads but the system's and its own files, writes but the GPU's device files (so
    nothing it writes outlives it, /dev/shm included), TCP (Landlock, which also keeps it
    from reading or tracing processes outside its domain: the judge, the harness); every
    capability; new processes, programs, signals to others, leaving the judge's process
    group or its parent-death signal, sockets (local ones included), io_uring, SysV IPC,
    kernel keys, other processes' limits and scheduling (seccomp); more than CANDIDATE_FILE_LIMIT bytes in a file and core dumps
    (rlimits). Each entry says what is in force or why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)   # dies with the judge
    # its stdout and stderr are a file of the judge's, which Landlock does not guard once
    # open: capped (no disk filled); no core dump (a core_pattern helper would keep its memory)
    for limit, size in ((resource.RLIMIT_FSIZE, CANDIDATE_FILE_LIMIT), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (size, size))
    got = restrict_self(Policy(read=launcher_reads(library, extra_reads), writable_files=_device_files(),
                               connect_tcp=(), bind_tcp=(), scope_signals=True, scope_abstract_unix=True))
    out = {"files": got["files"], "network": got.get("network", "")}

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc.syscall.restype = ctypes.c_long
    data = (Data * 2)()
    out["capabilities"] = "dropped" if libc.syscall(126, ctypes.byref(Header(_CAP_VERSION_3, 0)), data) == 0 \
        else f"kept ({os.strerror(ctypes.get_errno())})"
    if os.uname().machine != "x86_64":
        out["processes"] = f"unrestricted (no seccomp filter for {os.uname().machine})"
        return out
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    prog = _seccomp_program(os.getpid())
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        out["processes"] = f"unrestricted (seccomp: {os.strerror(ctypes.get_errno())})"
    else:
        out["processes"] = "seccomp"
    return out


def hide_memory() -> None:
    """Make this process non-dumpable: another process of the same user that is not
    root cannot read its memory or descriptors, even where Landlock is unavailable."""
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
