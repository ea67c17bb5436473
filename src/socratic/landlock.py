"""Linux Landlock, unprivileged confinement of this process and its children.

One builder for every confined process socratic starts: the candidate's launcher and the
judge (evaluator.sandbox) and the agent (harness). Landlock is an allow-list: a right that
is handled is denied everywhere except beneath the paths given it; a right that is not
handled stays allowed everywhere. So a policy names what it restricts (`reads`,
`writes`, `tcp`) and where each restricted right is still granted.

Where the kernel lacks Landlock (or a feature of the policy) `restrict_self` says so and
enforces what it can; callers record that answer (a campaign's `confined: false`).
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446   # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_CHANGE_TREE = sum(1 << b for b in range(4, 13))   # remove, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
READ = EXECUTE | READ_FILE | READ_DIR
# rights that apply to a file (not a folder): a rule on a file may grant only these
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
# LANDLOCK_ACCESS_NET_*
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
# LANDLOCK_SCOPE_*
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


# the system's folders every confined process of socratic's may read (programs, libraries,
# /etc, /proc): the agent's domain and the build's add their own to these
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys")


def abi_version() -> int:
    """The kernel's Landlock ABI (0 where it has none or it is disabled)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(abi))


@dataclass(frozen=True)
class Policy:
    """What a confined process may still do. `None` leaves that kind of access unrestricted."""

    read: tuple[str, ...] | None = None          # read and execute beneath these; None: reads unrestricted
    write: tuple[str, ...] = ()                  # create, change and remove beneath these (reads too)
    connect_tcp: tuple[int, ...] | None = None   # TCP ports it may connect to; None: unrestricted
    bind_tcp: tuple[int, ...] | None = ()        # TCP ports it may bind; () none, None unrestricted
    scope_signals: bool = False                  # no signals to processes outside the domain (ABI 6)
    scope_abstract_unix: bool = False            # no abstract unix sockets outside the domain (ABI 6)
    writable_files: tuple[str, ...] = field(default=())   # single files (device nodes) opened for writing


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _write_rights(abi: int) -> int:
    return WRITE_FILE | _CHANGE_TREE | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)


def _existing(paths: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for p in paths:
        real = os.path.realpath(p)
        if real not in seen and os.path.exists(real):
            seen.add(real)
            out.append(real)
    return out


def restrict_self(policy: Policy) -> dict[str, str]:
    """Confine this process (and what it starts) to `policy`. Returns what is in force, one
    entry a kind ("files", "network", "scope"): "landlock" or why not."""
    abi = abi_version()
    if abi < 1:
        why = "unavailable (no Landlock in this kernel)"
        return {"files": why, "network": why, "scope": why}
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    write = _write_rights(abi)
    handled_fs = write | (READ if policy.read is not None else 0)
    want_net = policy.connect_tcp is not None or policy.bind_tcp is not None
    handled_net = 0
    if abi >= 4 and want_net:
        handled_net = (CONNECT_TCP if policy.connect_tcp is not None else 0) | \
            (BIND_TCP if policy.bind_tcp is not None else 0)
    scoped = 0
    if abi >= 6:
        scoped = (SCOPE_SIGNAL if policy.scope_signals else 0) | \
            (SCOPE_ABSTRACT_UNIX_SOCKET if policy.scope_abstract_unix else 0)
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    size = ctypes.sizeof(attr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        why = f"unavailable (landlock ruleset: {os.strerror(ctypes.get_errno())})"
        return {"files": why, "network": why, "scope": why}

    def add_path(path: str, rights: int) -> str | None:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= _FILE_RIGHTS
            rule = _PathBeneathAttr(rights & handled_fs, fd)
            if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                            ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                return f"unavailable (landlock rule for {path}: {os.strerror(ctypes.get_errno())})"
        finally:
            os.close(fd)
        return None

    try:
        read = READ if policy.read is not None else 0
        for path in _existing(policy.read or ()):
            if (bad := add_path(path, read)):
                return {"files": bad, "network": bad, "scope": bad}
        for path in _existing(policy.write):
            if (bad := add_path(path, read | write)):
                return {"files": bad, "network": bad, "scope": bad}
        for path in _existing(policy.writable_files):
            if (bad := add_path(path, read | WRITE_FILE | (TRUNCATE if abi >= 3 else 0))):
                return {"files": bad, "network": bad, "scope": bad}
        if handled_net:
            for access, ports in ((CONNECT_TCP, policy.connect_tcp), (BIND_TCP, policy.bind_tcp)):
                for port in ports or ():
                    rule = _NetPortAttr(access, port)
                    if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),
                                    ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                        why = f"unavailable (landlock port {port}: {os.strerror(ctypes.get_errno())})"
                        return {"files": why, "network": why, "scope": why}
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            why = f"unavailable (no_new_privs: {os.strerror(ctypes.get_errno())})"
            return {"files": why, "network": why, "scope": why}
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            why = f"unavailable (landlock restrict: {os.strerror(ctypes.get_errno())})"
            return {"files": why, "network": why, "scope": why}
    finally:
        os.close(ruleset)
    out = {"files": "landlock"}
    if want_net:
        out["network"] = "landlock" if handled_net else f"unrestricted (Landlock ABI {abi} < 4)"
    if policy.scope_signals or policy.scope_abstract_unix:
        out["scope"] = "landlock" if scoped else f"unrestricted (Landlock ABI {abi} < 6)"
    return out
