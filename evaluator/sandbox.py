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
