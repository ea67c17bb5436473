"""Sessions attached before the harness moved into subpackages (issue 44) name this folder in
their hook commands and ./evaluate (`sys.path.append(HARNESS); import hookclient`): the
client is attached/hookclient.py now, loaded here under its own name. Standard library only,
like the client (it runs under `python -I -S`)."""

from __future__ import annotations

import importlib.util
import os
import sys

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attached", "hookclient.py")
_spec = importlib.util.spec_from_file_location("hookclient", _PATH)
assert _spec is not None and _spec.loader is not None
_client = importlib.util.module_from_spec(_spec)
sys.modules["hookclient"] = _client
_spec.loader.exec_module(_client)
main = _client.main
