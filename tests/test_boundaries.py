"""The parts' import rules (docs/ARCHITECTURE.md, "Import rules"; pyproject.toml's
[tool.importlinter]) hold, and a crossing breaks them.

The check runs on a copy of the checkout's src/ (the Python files only), so a crossing can be
written into a module without touching the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "pyproject.toml"


def package_copy(dest: Path) -> Path:
    """The Python files under src/ (socratic and its test doubles), as `dest/socratic/...`."""
    src = REPO / "src"
    for f in src.rglob("*.py"):
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, out)
    return dest


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")
    return subprocess.run([sys.executable, "-c", code, str(CONFIG)], cwd=tree,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
                          capture_output=True, text=True, timeout=300)


def test_the_parts_keep_their_import_rules(tmp_path):
    r = lint_imports(package_copy(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 broken" in r.stdout


@pytest.mark.parametrize("module, line, broken", [
    # the harness never imports the TUI (the layers), nor another part's internals
    ("harness/cli/__init__.py", "from socratic.tui.app import run_watch",
     "socratic.harness.cli -> socratic.tui.app"),
    ("tui/widgets/question_picker.py", "from socratic.bank.model import by_group",
     "socratic.tui.widgets.question_picker -> socratic.bank.model"),
    # the shipped code never imports the test doubles
    ("harness/api/tools.py", "from socratic_doubles import fakeeval",
     "socratic.harness.api.tools -> socratic_doubles"),
    # the harness's subpackages in layers: the engine never imports the API loop, core
    # nothing above it, the attached agents not campaigns by hand (a cycle through cli)
    ("harness/engine/engine.py", "from socratic.harness.api.tools import Tools",
     "socratic.harness.engine.engine -> socratic.harness.api.tools"),
    ("harness/core/session.py", "def _f():\n    from socratic.harness.engine import triggers",
     "socratic.harness.core.session -> socratic.harness.engine.triggers"),
    ("harness/attached/attach.py", "from socratic.harness.manual import manual",
     "socratic.harness.attached.attach -> socratic.harness.manual.manual"),
    # the shared layer imports no part, even inside a function
    ("eventlog.py", "def _f():\n    from socratic.bank import load_bank",
     "socratic.eventlog -> socratic.bank"),
])
def test_a_crossing_breaks_them(tmp_path, module, line, broken):
    tree = package_copy(tmp_path)
    target = tree / "socratic" / module
    target.write_text(target.read_text() + f"\n\n{line}\n")
    r = lint_imports(tree)
    assert r.returncode == 1, r.stdout
    assert broken in r.stdout, r.stdout


def test_registering_the_verbs_loads_no_part_behind_its_api():
    # every `socratic ...` and every hook builds the parser: the parts' public APIs load
    # on first use (socratic.lazyexports), not when their cli module is imported
    code = ("import sys, socratic.cli; socratic.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith('socratic.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    for heavy in ("socratic.report.model", "socratic.report.figures", "socratic.fleet.status",
                  "socratic.fleet.folder", "socratic.bank.loader", "socratic.tui.app"):
        assert f"'{heavy}'" not in loaded, loaded


def test_the_public_apis_name_what_they_load():
    import socratic.bank
    import socratic.fleet
    import socratic.harness
    import socratic.report

    for part in (socratic.bank, socratic.fleet, socratic.harness, socratic.report):
        for name in part.__all__:
            assert getattr(part, name) is not None, (part.__name__, name)
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            part.nope  # noqa: B018


def test_the_fleet_takes_the_run_options_from_the_run_verb():
    from socratic.cli import build_parser
    from socratic.harness import run_options

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    run = sub.choices["run"]
    assert set(run_options()) == {a.dest for a in run._actions if a.option_strings}


def test_the_harness_subpackages_import_one_another_without_cycles():
    """Whatever subpackages harness/ has (the layers contract names today's), no chain of
    imports leads from one back to itself."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("socratic", cache_dir=None)
    subs = sorted(m for m in graph.find_children("socratic.harness")
                  if graph.find_children(m))
    assert {"socratic.harness.core", "socratic.harness.engine", "socratic.harness.api",
            "socratic.harness.attached", "socratic.harness.manual",
            "socratic.harness.cli"} <= set(subs), subs
    def sub_of(module: str) -> str | None:
        return next((s for s in subs if module == s or module.startswith(s + ".")), None)

    edges: dict[str, set[str]] = {s: set() for s in subs}
    for m in graph.find_descendants("socratic.harness"):
        a = sub_of(m)
        for imported in graph.find_modules_directly_imported_by(m):
            b = sub_of(imported)
            if a and b and a != b:
                edges[a].add(b)
    seen: dict[str, int] = {}   # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(edges[node]):
            assert seen.get(nxt) != 1, "import cycle: " + " -> ".join([*path, node, nxt])
            if nxt not in seen:
                visit(nxt, [*path, node])
        seen[node] = 2

    for s in subs:
        if s not in seen:
            visit(s, [])
