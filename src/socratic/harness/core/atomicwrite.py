"""Files replaced whole: written to a temporary file beside them, then renamed over them,
so that a reader (or a crash, or a full disk) never sees a half-written file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any, fsync: bool = True) -> None:
    """Write through a temporary file and rename: a reader (or a full disk) never sees a
    half-written file, and a failed write leaves the old one and no temporary behind."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # it names the file
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """`data` written through a temporary file beside `path` and a rename (not synced), with
    permissions `mode` when given (set before the rename: `path` never has others); a failed
    write leaves no temporary behind."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        if mode is not None:
            tmp.chmod(mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
