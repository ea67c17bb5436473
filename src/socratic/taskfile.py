"""The one reader of task.toml (kernels/<task>/task.toml): `load_task` parses and checks
everything every part relies on, so the evaluator, the harness and the fake evaluator
report the same error for the same file, before anything starts.

Every problem is a TaskError (an InputError: one line, exit code 2) that names the file
and, where it can be found, the line: TOML syntax errors carry theirs, and a semantic
error points at the key it is about (or the table holding it).
"""

from __future__ import annotations

import itertools
import math
import random
import re
import secrets
import shlex
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from socratic.errors import InputError
from socratic.expr import ExprError, evaluate, k

# a table of a parsed task.toml (tomllib's type: values are TOML's strings, numbers, tables, arrays)
TomlTable: TypeAlias = dict[str, Any]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TASK_FILE = "task.toml"
MAX_TASK_BYTES = 1 << 20   # a task file is a page of TOML: anything larger is not one
MAX_GRID = 100_000         # combinations one grid of a set may expand to (before its `where`)
FIELD_TYPES = ("ptr", "i32", "u32", "i64", "u64", "f32")
DTYPES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4, "u8": 1}
ROLES = ("input", "output", "workspace")
INITS = ("normal", "uniform", "zeros")
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")  # a task name names session directories
# every top-level key some part reads: a misspelt one (`[goals]`) would silently fall back
# to a default (a goal of 1.0 that the unchanged baseline meets), so it is an error
TOP_KEYS = ("name", "description", "entry", "baseline", "default_set", "seeds", "id", "build",
            "reference", "params", "buffers", "defaults", "derived", "metrics", "goal", "sets",
            "comparisons", "banned", "bans", "distributions", "hidden")
TRANSFORMS = ("scale", "channels", "rows")
# a space evaluation (`socratic eval --space N [--seed S]`, `--scenarios space:N[@S]`): N
# scenarios drawn from the [hidden] space with seed S; each drawn id names its seed and place
# (`space-S-I-<id>`), so it can be run again alone
SPACE_RE = re.compile(r"^space:(\d+)(?:@(\d+))?$")
SPACE_ID_RE = re.compile(r"^space-(\d+)-(\d+)-(.+)$")
MAX_SPACE = 4096
MAX_TRIES = 200   # draws per hidden scenario before a space is taken to hold no more
BUILD_KEYS = ("command", "archs", "arch_specific")
REFERENCE_KEYS = ("source", "entry", "units", "unit_flops", "max_flops")
HIDDEN_KEYS = ("count", "fields", "where", "max_flops", "grid")
HIDDEN_FIELD_KEYS = ("choices", "min", "max", "scale", "equal_to", "p_equal")
SET_KEYS = ("scenarios", "grid")
PLACEHOLDERS = ("src", "out", "arch", "compute")   # what `build.command` may name
ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")          # an nvcc real architecture: sm_80, sm_90a
SUPPORT_RE = re.compile(r"^sm_(\d+)([af]?)(\+?)$")   # `[build] archs`: sm_90a, or sm_80+ (and newer)
DEFAULT_ARCHS = ("sm_80+",)


class TaskError(InputError):
    pass


@dataclass(frozen=True)
class BufferSpec:
    name: str
    role: str
    dtype: str
    shape: tuple[Any, ...] = ()        # expressions; workspace uses `bytes` instead
    bytes: Any = None
    init: str = "normal"
    mean: float = 0.0
    std: float = 1.0
    per_unit: Any = None               # outputs: elements per reference unit
    floor: float = 1e-3                # outputs: error floor of the pass rule


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str
    buffer: str | None = None
    value: Any = None


@dataclass(frozen=True)
class ReferenceSpec:
    source: Path
    entry: str
    units: Any
    unit_flops: Any
    max_flops: float


@dataclass(frozen=True)
class Scenario:
    id: str
    values: dict[str, Any]
    hidden: bool = False   # drawn from the task's [hidden] space for one evaluation


@dataclass(frozen=True)
class Transform:
    """How one input buffer departs from its own distribution: all of it times `scale`;
    `count` channels of every `period` elements times `factor`; each row of `row_length`
    elements times 2**e, e a whole number drawn per row within +-`spread`."""
    scale: float = 1.0
    period: Any = 0
    count: int = 0
    factor: float = 1.0
    row_length: Any = 0
    spread: int = 0


@dataclass(frozen=True)
class Distribution:
    """One input distribution every correctness check covers (`[[distributions]]`)."""
    name: str
    note: str = ""
    inputs: dict[str, Transform] = field(default_factory=dict)


DEFAULT_DISTRIBUTIONS = (Distribution("normal", "every input as its buffer declares"),)


@dataclass(frozen=True)
class HiddenField:
    name: str
    expr: Any = None                 # an expression over the fields drawn before it
    choices: tuple[Any, ...] = ()
    low: int = 0
    high: int = 0
    log: bool = False
    equal_to: str | None = None      # ... or, with probability p_equal, that field's value
    p_equal: float = 0.0


@dataclass(frozen=True)
class HiddenSpace:
    """Where hidden scenarios come from (`[hidden]`): fields drawn in order, kept when
    `where` holds and the `flops` metric is at most `max_flops`. `grid`: the two fields a
    coverage picture crosses (default: the first two fields drawn from choices)."""
    count: int
    fields: tuple[HiddenField, ...]
    where: str | None = None
    max_flops: float = 1e30
    grid: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpaceSpec:
    """`space:N` or `space:N@SEED`: N scenarios drawn from the [hidden] space."""
    n: int
    seed: int | None = None

    def label(self, seed: int) -> str:
        return f"space:{self.n}@{seed}"


def parse_space(spec: str | None) -> SpaceSpec | None:
    """The space evaluation a `--scenarios` value names, or None when it names none."""
    m = SPACE_RE.match((spec or "").strip())
    if not m:
        return None
    return SpaceSpec(int(m.group(1)), int(m.group(2)) if m.group(2) is not None else None)


def new_space_seed() -> int:
    """A seed for a space evaluation whose user gave none: six digits, easy to type again."""
    return 100000 + secrets.randbelow(900000)


@dataclass
class Task:
    name: str
    dir: Path
    path: Path
    entry: str
    baseline: Path
    build_template: str                # `build.command`, with {arch} and {compute} unfilled
    reference: ReferenceSpec
    fields: list[FieldSpec]
    buffers: list[BufferSpec]
    metrics: dict[str, Any]
    goal: dict[str, Any]               # {"min_speedup": float > 0, "against": str}
    sets: dict[str, list[Scenario]]
    default_set: str
    seeds: int = 3
    comparisons: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict, repr=False)  # the file as parsed
    distributions: tuple[Distribution, ...] = DEFAULT_DISTRIBUTIONS
    hidden: HiddenSpace | None = None
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    defaults: dict[str, Any] = field(default_factory=dict, repr=False)
    id_template: str | None = None
    archs: tuple[str, ...] = DEFAULT_ARCHS   # `[build] archs`: sm_90a exactly, or sm_80+
    arch_specific: bool = False              # build sm_90a / sm_100a rather than sm_90 / sm_100

    def command_for(self, arch: str) -> str:
        """The build command for one nvcc arch (`sm_90a`: {arch} sm_90a, {compute} compute_90a)."""
        return self.build_template.replace("{arch}", arch).replace("{compute}", "compute" + arch[2:])

    @property
    def build_command(self) -> str:
        """The build command for this machine's GPU (or, without one, the task's first arch)."""
        return self.command_for(self.default_arch())

    def supports(self, arch: str) -> bool:
        num = _arch_number(arch)
        for entry in self.archs:
            m = SUPPORT_RE.match(entry)
            if m and (num >= int(m.group(1)) if m.group(3) else num == int(m.group(1))):
                return True
        return False

    def fallback_arch(self) -> str:
        """The arch a machine without a GPU builds for: the task's first (sm_80+ → sm_80)."""
        m = SUPPORT_RE.match(self.archs[0])
        assert m is not None  # checked at load
        return f"sm_{m.group(1)}{m.group(2)}"

    def default_arch(self) -> str:
        from socratic.gpuinfo import arch_for_cc

        cc = _device_cc()
        arch = arch_for_cc(cc, self.arch_specific) if cc else None
        return arch if arch and self.supports(arch) else self.fallback_arch()

    def select_arch(self, requested: str | None = None) -> str:
        """The arch to build for: `requested` (--arch, or $SOCRATIC_ARCH), else the GPU's,
        else the task's first. One line (TaskError) for an arch the task does not support."""
        import os

        from socratic.gpuinfo import arch_for_cc, gpu_info

        if requested is None:   # `--arch ""` is a value (a bad one), not "not given"
            requested = os.environ.get("SOCRATIC_ARCH") or None
        if requested is not None:
            if not ARCH_RE.match(requested):
                raise TaskError(f"--arch {requested!r}: not an nvcc arch such as sm_80, sm_89, sm_90a, sm_100a")
            if not self.supports(requested):
                raise TaskError(f"{self.path}: task {self.name!r} builds for {self.arch_list()} only "
                                f"(got --arch {requested})")
            return requested
        cc = _device_cc()
        if cc is None:
            return self.fallback_arch()
        arch = arch_for_cc(cc, self.arch_specific)
        if not self.supports(arch):
            name = (gpu_info() or {}).get("name") or "this GPU"
            raise TaskError(f"{self.path}: task {self.name!r} runs on {self.arch_list()} only; "
                            f"{name} is {arch} (cc {cc[0]}.{cc[1]})")
        return arch

    def arch_list(self) -> str:
        names = {"sm_80": "A100", "sm_90": "Hopper", "sm_100": "Blackwell"}
        out = []
        for entry in self.archs:
            m = SUPPORT_RE.match(entry)
            family = names.get(f"sm_{m.group(1)}") if m else None
            out.append(entry + (f" ({family}{' and newer' if m and m.group(3) else ''})" if family else ""))
        return ", ".join(out)

    @property
    def outputs(self) -> list[BufferSpec]:
        return [b for b in self.buffers if b.role == "output"]

    @property
    def inputs(self) -> list[BufferSpec]:
        return [b for b in self.buffers if b.role == "input"]

    def all_scenarios(self) -> dict[str, Scenario]:
        merged: dict[str, Scenario] = {}
        for scenarios in self.sets.values():
            for sc in scenarios:
                merged.setdefault(sc.id, sc)
        return merged

    def select(self, spec: str | None) -> tuple[str, list[Scenario]]:
        """`SET`, `ID,ID,..` or `space:N[@SEED]` → (label, scenarios); a drawn id
        (`space-SEED-I-...`) is drawn again. Unknown names are a TaskError."""
        spec = spec or self.default_set
        if spec in self.sets:
            return spec, self.sets[spec]
        space = parse_space(spec)
        if space is not None:
            seed = space.seed if space.seed is not None else new_space_seed()
            return space.label(seed), self.draw_space(space.n, seed)
        every = self.all_scenarios()
        chosen = []
        for sid in (s.strip() for s in spec.split(",") if s.strip()):
            drawn = self.drawn_scenario(sid) if sid not in every else None
            if drawn is not None:
                chosen.append(drawn)
                continue
            if sid not in every:
                raise TaskError(
                    f"unknown scenario or set {sid!r} for task {self.name!r} "
                    f"(sets: {', '.join(self.sets)}; `socratic eval {shlex.quote(str(self.dir))} --list` shows ids)"
                )
            chosen.append(every[sid])
        if not chosen:
            raise TaskError(f"no scenarios named in {spec!r}")
        return ",".join(s.id for s in chosen), chosen

    def metric(self, name: str, scenario: Scenario) -> float:
        expr = self.metrics.get(name)
        return float(evaluate(expr, scenario.values)) if expr is not None else 0.0

    def scenario(self, values: dict[str, Any], sid: str | None = None, hidden: bool = False) -> Scenario:
        """A scenario from raw values: defaults, then the derived values, then its id."""
        full = {**self.defaults, **values}
        for key, expr in self.derived.items():
            if key not in values:
                full[key] = evaluate(expr, full)
        if sid is None:
            sid = _IdFormatter().format(self.id_template or "s", **full)
        return Scenario(id=str(sid), values=full, hidden=hidden)

    def draw_hidden(self, count: int, seed: int) -> list[Scenario]:
        """`count` scenarios from the [hidden] space, different for every seed; [] when
        the task declares none. Ids `hidden-N-<id>`: they are shown once evaluated."""
        return self._draw(count, seed, "hidden-")

    def draw_space(self, count: int, seed: int) -> list[Scenario]:
        """A space evaluation's scenarios: the same draw as `draw_hidden`, ids
        `space-SEED-N-<id>` (the first k of a seed's draws are the same for any count)."""
        if self.hidden is None:
            raise TaskError(f"task {self.name!r} declares no [hidden] space to draw scenarios from")
        if not 1 <= count <= MAX_SPACE:
            raise TaskError(f"a space evaluation draws 1 to {MAX_SPACE} scenarios (got {count})")
        return self._draw(count, seed, f"space-{seed}-")

    def drawn_scenario(self, sid: str) -> Scenario | None:
        """The scenario a space evaluation's id names, drawn again; None when `sid` is not
        such an id; TaskError when its seed and place draw another shape."""
        m = SPACE_ID_RE.match(sid)
        if m is None or self.hidden is None:
            return None
        seed, place = int(m.group(1)), int(m.group(2))
        drawn = self.draw_space(place, seed) if 1 <= place <= MAX_SPACE else []
        if len(drawn) < place or drawn[place - 1].id != sid:
            again = drawn[place - 1].id if len(drawn) >= place else "nothing"
            raise TaskError(f"scenario {sid!r}: draw {place} of seed {seed} is {again!r} "
                            f"(the task's [hidden] space changed?)")
        return drawn[place - 1]

    def _draw(self, count: int, seed: int, prefix: str) -> list[Scenario]:
        space = self.hidden
        if space is None or count <= 0:
            return []
        rng = random.Random(seed)
        out: list[Scenario] = []
        for _ in range(count * MAX_TRIES):
            if len(out) == count:
                break
            values: dict[str, Any] = {}
            try:   # a draw an expression cannot make is skipped, like one `where` refuses
                for f in space.fields:
                    values[f.name] = _draw(f, values, rng)
                sc = self.scenario(values)
                if space.where and not evaluate(space.where, sc.values):
                    continue
                if self.metric("flops", sc) > space.max_flops:
                    continue
            except (ExprError, TypeError, ValueError, ZeroDivisionError, KeyError):
                continue
            out.append(Scenario(id=f"{prefix}{len(out) + 1}-{sc.id}", values=sc.values, hidden=True))
        return out


def _arch_number(arch: str) -> int:
    m = ARCH_RE.match(arch)
    return int(m.group(1)) if m else -1


_CC: list[tuple[int, int] | None] = []


def _device_cc() -> tuple[int, int] | None:
    """This machine's GPU, asked once per process (a driver call or nvidia-smi)."""
    if not _CC:
        from socratic.gpuinfo import device_cc

        _CC.append(device_cc())
    return _CC[0]


def _draw(f: HiddenField, values: dict[str, Any], rng: random.Random) -> Any:
    if f.equal_to is not None and rng.random() < f.p_equal:
        return values[f.equal_to]
    if f.expr is not None:
        return evaluate(f.expr, values)
    if f.choices:
        return rng.choice(f.choices)
    if f.log:
        return int(round(math.exp(rng.uniform(math.log(f.low), math.log(f.high)))))
    return rng.randint(f.low, f.high)


_HEADER = re.compile(r"^\[\[?\s*([^\]]+?)\s*\]\]?")
_ASSIGN = re.compile(r"^([A-Za-z0-9_.\-\"' ]+?)\s*=")


def _norm(key: str) -> str:
    return ".".join(p.strip().strip("\"'") for p in key.split("."))


class KeyLines:
    """Where each key of a TOML text is: `line("goal.min_speedup")`, `line("buffers[2].role")`;
    a key that is not written gives the line of the nearest table holding it."""

    def __init__(self, text: str) -> None:
        self.lines: dict[str, int] = {}
        table, counts = "", dict[str, int]()
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            m = _HEADER.match(line)
            if m:
                table = _norm(m.group(1))
                if line.startswith("[["):
                    counts[table] = counts.get(table, -1) + 1
                    self._note(table, no)
                    table = f"{table}[{counts[table]}]"
                self._note(table, no)
                continue
            m = _ASSIGN.match(line)
            if m:
                self._note(f"{table}.{_norm(m.group(1))}" if table else _norm(m.group(1)), no)

    def _note(self, path: str, no: int) -> None:
        parts = path.split(".")
        for i in range(1, len(parts) + 1):  # a dotted key or table names its parents too
            self.lines.setdefault(".".join(parts[:i]), no)

    def line(self, path: str) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", path) if re.search(r"[.\[]", path) else ""
        return None


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def _writes(line: str, key: str, value: Any) -> bool:
    """Whether `line` writes `key = value`, or `value` in the list `key = [...]`."""
    v = re.escape(_toml_value(value))
    return re.search(rf"(?<![\w.]){re.escape(key)}\s*=\s*(\[[^\]]*?(?<![\w.\-+]))?{v}(?![\w.])",
                     line) is not None


def _named(expr: Any) -> set[str]:
    """The names an expression (or an id template) reads."""
    return set(re.findall(r"[A-Za-z_]\w*", expr)) if isinstance(expr, str) else set()


def _written(raw: TomlTable, names: set[str]) -> str:
    """`rows = -3, cols = 1`: the values of a scenario that an error concerns."""
    shown = {k_: v for k_, v in raw.items() if k_ in names and k_ != "id"} or \
        {k_: v for k_, v in raw.items() if k_ != "id"}
    return ", ".join(f"{k_} = {_toml_value(v)}" for k_, v in shown.items())


class _Loader:
    def __init__(self, path: Path):
        self.path = path
        try:
            with path.open("rb") as f:
                raw = f.read(MAX_TASK_BYTES + 1)
            if len(raw) > MAX_TASK_BYTES:
                raise TaskError(f"{path}: larger than {MAX_TASK_BYTES >> 20} MiB: not a task file")
            self.text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            self.data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
            where = f"{path}:{m.group(1)}" if m else str(path)
            raise TaskError(f"{where}: malformed TOML: {str(exc).split(' (at line')[0]}") from None
        self.keys = KeyLines(self.text)
        # where each scenario came from: its set and the values written for it
        self.origins: dict[str, tuple[str, TomlTable]] = {}

    def value_line(self, set_name: str, raw: TomlTable, names: Any = ()) -> int | None:
        """The line of set `set_name` that writes the values `raw` (a scenario of its
        list, or a grid's lists holding them): those of `names` that `raw` has, else all."""
        start = self.keys.line(f"sets.{set_name}")
        if start is None:
            return None
        keys = [k_ for k_ in raw if k_ in set(names) and k_ != "id"] or \
            [k_ for k_ in raw if k_ != "id"]
        lines = self.text.splitlines()
        for i in range(start - 1, len(lines)):
            if i > start - 1 and _HEADER.match(lines[i].strip()):
                break
            if keys and all(_writes(lines[i], k_, raw[k_]) for k_ in keys):
                return i + 1
        return start

    def fail_at(self, message: str, line: int | None) -> TaskError:
        return TaskError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def fail(self, message: str, key: str | None = None, near: str | None = None) -> TaskError:
        """A TaskError at the line of `key` (a dotted path), or of the first line from there
        on that contains `near`."""
        line = self.keys.line(key) if key else None
        if near is not None:
            lines = self.text.splitlines()
            start = (line or 1) - 1
            line = next((i + 1 for i in range(start, len(lines)) if near in lines[i]), line)
        return TaskError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def need(self, table: TomlTable, key: str, kind: type | tuple[type, ...], ctx: str) -> Any:
        if key not in table:
            raise self.fail(f"missing required key `{ctx}{key}`", ctx.rstrip(".") or None)
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.fail(f"`{ctx}{key}` has the wrong type ({type(value).__name__})", ctx + key)
        return value

    def number(self, table: TomlTable, key: str, default: float, ctx: str = "", *,
               low: float = -math.inf, whole: bool = False, owner: str = "",
               at: str | None = None) -> float:
        """An optional number (a whole one with `whole`) of at least `low`; `owner` names
        what holds it in the message (`buffer 'y': `floor` ...`). `at`: the table's dotted
        path when it is an inline table `ctx` cannot reach (its line, then the key's)."""
        value: Any = table.get(key, default)
        typed = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
        if not typed or not math.isfinite(value) or value < low:
            kind = "a whole number" if whole else "a number"
            bound = "" if low == -math.inf else f" >= {low:g}"
            what = f"{owner}: `{key}`" if owner else f"`{ctx}{key}`"
            if at is not None:
                raise self.fail(f"{what} must be {kind}{bound} (got {value!r})", at, f"{key} =")
            raise self.fail(f"{what} must be {kind}{bound} (got {value!r})", ctx + key)
        checked: float = value
        return checked

    def text_key(self, table: TomlTable, key: str, ctx: str = "") -> str:
        value: str = self.need(table, key, str, ctx)
        if not value:
            raise self.fail(f"`{ctx}{key}` must be a non-empty string", ctx + key)
        return value


def is_task_own_file(rel: Path) -> bool:
    """Whether a file at `rel` (relative to the task folder) is one of the task's own files,
    those a campaign copies into the session and the workspace: not a dotfile, not a cache."""
    return "__pycache__" not in rel.parts and not rel.name.startswith(".")


def _own_file(ld: _Loader, task_dir: Path, value: str, key: str, what: str) -> Path:
    """A file task.toml names: one of the task folder's own files (a campaign copies those,
    and nothing outside the folder, into the agent's workspace and the session)."""
    rel = Path(value)
    if rel.is_absolute() or ".." in rel.parts:
        raise ld.fail(f"`{key}` must be a path inside the task folder, without `..` (got {value!r})", key)
    if not is_task_own_file(rel):
        raise ld.fail(f"`{key}` names a file a campaign does not copy (a dotfile or under __pycache__: "
                      f"got {value!r})", key)
    path = task_dir / rel
    try:
        if not path.is_file():
            raise ld.fail(f"{what} {value!r} " + ("is not a regular file" if path.exists() else
                                                   f"not found in {task_dir}"), key)
    except OSError as exc:   # a name too long, a folder it may not enter
        raise ld.fail(f"{what} {value[:80]!r}: cannot read ({exc.strerror or exc})", key) from None
    return path


def load_task(task_dir: Path | str) -> Task:
    task_dir = Path(task_dir)
    if task_dir.is_file():
        raise TaskError(f"{task_dir}: a file, not a task directory (give the folder that "
                        f"holds {TASK_FILE}, or its {TASK_FILE})")
    if not task_dir.is_dir():
        raise TaskError(f"{task_dir}: no such task directory")
    path = task_dir / TASK_FILE
    if not path.is_file():
        raise TaskError(f"{path}: not a regular file (a pipe, a device or a folder)" if path.exists() else
                        f"{path}: missing task file (a task directory holds {TASK_FILE})")
    ld = _Loader(path)
    d = ld.data

    name = ld.text_key(d, "name")
    if not NAME_RE.match(name):
        raise ld.fail(f"`name` must be letters, digits and _ . - (it names session directories; "
                      f"got {name!r})", "name")
    entry = ld.text_key(d, "entry")
    baseline = _own_file(ld, task_dir, ld.text_key(d, "baseline"), "baseline", "baseline file")
    default = ld.text_key(d, "default_set") if "default_set" in d else None
    goal = _goal(ld, d.get("goal", {}))

    build = ld.need(d, "build", dict, "")
    command, archs, arch_specific = _build(ld, build)

    ref = ld.need(d, "reference", dict, "")
    _known_keys(ld, ref, REFERENCE_KEYS, "", "reference", prefix="reference.")
    reference = ReferenceSpec(
        source=_own_file(ld, task_dir, ld.text_key(ref, "source", "reference."), "reference.source",
                         "reference source"),
        entry=ld.need(ref, "entry", str, "reference."),
        units=ld.need(ref, "units", (str, int), "reference."),
        unit_flops=ref.get("unit_flops", 1),
        max_flops=float(ld.number(ref, "max_flops", 4e11, "reference.", low=1)),
    )

    buffers = [_buffer(ld, b, i) for i, b in enumerate(ld.need(d, "buffers", list, ""))]
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        raise ld.fail("duplicate buffer names", "buffers")
    if not any(b.role == "output" for b in buffers):
        raise ld.fail("no buffer has role = \"output\"", "buffers")

    params = ld.need(d, "params", dict, "")
    fields = [_field(ld, f, names) for f in ld.need(params, "fields", list, "params.")]

    _check_shapes(ld, d)
    metrics = d.get("metrics", {})
    derived = d.get("derived", {})
    defaults = d.get("defaults", {})
    id_template = d.get("id", None)
    if id_template is not None and not isinstance(id_template, str):
        raise ld.fail(f"`id` must be a template string such as \"r{{rows}}\" (got {id_template!r})",
                      "id")
    seeds = int(ld.number(d, "seeds", 3, low=1, whole=True))

    sets_table = ld.need(d, "sets", dict, "")
    sets: dict[str, list[Scenario]] = {}
    for set_name, spec in sets_table.items():
        sets[set_name] = _expand_set(ld, set_name, spec, defaults, derived, id_template)
    for set_name, scenarios in sets.items():
        ids = [s.id for s in scenarios]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ld.fail(f"set {set_name!r} has duplicate scenario ids: {', '.join(dupes[:5])}",
                          f"sets.{set_name}")
    if not sets:
        raise ld.fail("`sets` names no scenario set", "sets")
    default_set = default if default is not None else next(iter(sets))
    if default_set not in sets:
        raise ld.fail(f"`default_set` {default_set!r} names no set (sets: {', '.join(sets)})",
                      "default_set")

    task = Task(
        name=name, dir=task_dir, path=path, entry=entry, baseline=baseline,
        build_template=command, reference=reference, fields=fields, buffers=buffers,
        metrics=metrics, goal=goal, sets=sets, default_set=default_set,
        seeds=seeds, comparisons=d.get("comparisons", {}), data=d,
        distributions=_distributions(ld, d.get("distributions"), buffers),
        hidden=_hidden(ld, d.get("hidden")), derived=derived, defaults=defaults, id_template=id_template,
        archs=archs, arch_specific=arch_specific,
    )
    _check_expressions(ld, task)
    _check_hidden(ld, task)
    for key in d:  # last: a known key's own problem is the better message
        if key not in TOP_KEYS:
            import difflib

            close = difflib.get_close_matches(key, TOP_KEYS, n=1)
            hint = f"did you mean `{close[0]}`?" if close else f"known: {', '.join(TOP_KEYS)}"
            raise ld.fail(f"unknown key `{key}` ({hint})", key)
    return task


def _check_shapes(ld: _Loader, d: TomlTable) -> None:
    """The optional top-level keys other parts read as they are: a table given as a number
    (`derived = 5`) or a list holding a number (`banned`) would crash them later (the
    comparisons only on a GPU node), so their types are checked here."""
    for key in ("defaults", "derived", "metrics", "comparisons"):
        if key in d and not isinstance(d[key], dict):
            raise ld.fail(f"`{key}` must be a table (got {d[key]!r})"[:200], key)
    comps = d.get("comparisons", {})
    names = comps.get("names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ld.fail(f"`comparisons.names` must be a list of names (got {names!r})", "comparisons.names")
    for key in ("banned", "bans"):   # the agent's instructions list them
        banned = d.get(key, [])
        if not isinstance(banned, list) or not all(isinstance(b, str) for b in banned):
            raise ld.fail(f"`{key}` must be a list of library names (got {banned!r})", key)
    if not isinstance(d.get("description", ""), str):
        raise ld.fail(f"`description` must be a string (got {d['description']!r})", "description")


def _build(ld: _Loader, build: TomlTable) -> tuple[str, tuple[str, ...], bool]:
    """[build]: command (with {src} and {out}; {arch} and {compute} for the GPU's arch),
    archs (what the task runs on) and arch_specific (the `a` builds of Hopper and later)."""
    command = ld.need(build, "command", str, "build.")
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(command) if f is not None}
    except ValueError as exc:
        raise ld.fail(f"`build.command`: {exc} (placeholders: {{src}}, {{out}}, {{arch}}, {{compute}})",
                      "build.command") from None
    for unknown in sorted(names - set(PLACEHOLDERS)):
        raise ld.fail(f"`build.command`: unknown placeholder {{{unknown}}} (known: {{src}}, {{out}}, "
                      f"{{arch}}, {{compute}})", "build.command")
    for placeholder in ("src", "out"):
        if placeholder not in names:
            raise ld.fail(f"`build.command` lacks {{{placeholder}}}", "build.command")
    try:
        shlex.split(command)  # the builder splits it so
    except ValueError as exc:
        raise ld.fail(f"`build.command` is not shell words ({exc})", "build.command") from None
    archs = build.get("archs", list(DEFAULT_ARCHS))
    if isinstance(archs, str):
        archs = [archs]
    if not isinstance(archs, list) or not archs or not all(
            isinstance(a, str) and SUPPORT_RE.match(a) for a in archs):
        raise ld.fail(f"`build.archs` must be a list such as [\"sm_90a\"] or [\"sm_80+\"] (got {archs!r})",
                      "build.archs")
    specific = build.get("arch_specific", False)
    if not isinstance(specific, bool):
        raise ld.fail(f"`build.arch_specific` must be true or false (got {specific!r})", "build.arch_specific")
    for key in build:
        if key not in BUILD_KEYS:
            raise ld.fail(f"unknown key `build.{key}` (known: {', '.join(BUILD_KEYS)})", f"build.{key}")
    return command, tuple(archs), specific


def _distributions(ld: _Loader, raw: Any, buffers: list[BufferSpec]) -> tuple[Distribution, ...]:
    if raw is None:
        return DEFAULT_DISTRIBUTIONS
    if not isinstance(raw, list) or not raw:
        raise ld.fail("`distributions` must be a list of tables ([[distributions]])", "distributions")
    inputs = {b.name for b in buffers if b.role == "input"}
    out = []
    for i, d in enumerate(raw):
        where = f"distributions[{i}]"   # its errors at its own lines, not the first one's
        if not isinstance(d, dict):
            raise ld.fail(f"{where} must be a table", "distributions")
        name = ld.text_key(d, "name", f"{where}.")
        transforms = {}
        raw_inputs = d.get("inputs") or {}
        if not isinstance(raw_inputs, dict):
            raise ld.fail(f"distribution {name!r}: `inputs` must be a table of input buffers "
                          f"(got {raw_inputs!r})", where, "inputs")
        for buf, t in raw_inputs.items():
            if buf not in inputs:
                raise ld.fail(f"distribution {name!r}: {buf!r} is not an input buffer "
                              f"(inputs: {', '.join(sorted(inputs))})", where, f"{buf} =")
            if not isinstance(t, dict) or set(t) - set(TRANSFORMS):
                raise ld.fail(f"distribution {name!r}, input {buf!r}: a table of {', '.join(TRANSFORMS)}",
                              where, f"{buf} =")
            transforms[buf] = _transform(ld, t, f"distribution {name!r}, input {buf!r}", where)
        out.append(Distribution(name=name, note=str(d.get("note", "")), inputs=transforms))
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise ld.fail("duplicate distribution names", "distributions")
    return tuple(out)


def _transform(ld: _Loader, t: TomlTable, owner: str, at: str) -> Transform:
    """One input's reshaping: `channels` and `rows` are tables of numbers (a wrong type
    is one line here, not a crash when the GPU worker fills the input). `at`: the
    distribution's dotted path (its inline tables have no key path of their own)."""
    parts: dict[str, TomlTable] = {}
    for key in ("channels", "rows"):
        part = t.get(key) or {}
        if not isinstance(part, dict):
            raise ld.fail(f"{owner}: `{key}` must be a table (got {part!r})", at, f"{key} =")
        parts[key] = part
    ch, rows = parts["channels"], parts["rows"]
    return Transform(
        scale=float(ld.number(t, "scale", 1.0, owner=owner, at=at)),
        period=ch.get("period", 0),
        count=int(ld.number(ch, "count", 0, whole=True, low=0, owner=owner, at=at)),
        factor=float(ld.number(ch, "factor", 1.0, owner=owner, at=at)),
        row_length=rows.get("length", 0),
        spread=int(ld.number(rows, "log2_spread", 0, whole=True, low=0, owner=owner, at=at)))


def _hidden(ld: _Loader, raw: Any) -> HiddenSpace | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), dict) or not raw["fields"]:
        raise ld.fail("`[hidden]` needs `count` and a `[hidden.fields]` table", "hidden")
    _known_keys(ld, raw, HIDDEN_KEYS, "", "hidden", prefix="hidden.")
    fields = []
    for name, spec in raw["fields"].items():
        owner = f"hidden field {name!r}"
        if isinstance(spec, (str, int, float)) and not isinstance(spec, bool):
            fields.append(HiddenField(name, expr=spec))
            continue
        if not isinstance(spec, dict):
            raise ld.fail(f"{owner}: an expression or a table (choices, or min and max)", "hidden.fields", name)
        _known_keys(ld, spec, HIDDEN_FIELD_KEYS, f"{owner}:", "hidden.fields", name)
        equal = spec.get("equal_to")
        if equal is not None and equal not in {f.name for f in fields}:
            raise ld.fail(f"{owner}: equal_to names {equal!r}, which is not drawn before it", "hidden.fields", name)
        p_equal = float(ld.number(spec, "p_equal", 0.5 if equal else 0.0, f"hidden.fields.{name}.",
                                  low=0, owner=owner))
        if "choices" in spec:
            if not isinstance(spec["choices"], list) or not spec["choices"]:
                raise ld.fail(f"{owner}: `choices` must be a non-empty list", "hidden.fields", name)
            fields.append(HiddenField(name, choices=tuple(spec["choices"]), equal_to=equal, p_equal=p_equal))
            continue
        at = f"hidden.fields.{name}."   # the field's line (its inline table)
        low = int(ld.number(spec, "min", 1, at, whole=True, owner=owner))
        high = int(ld.number(spec, "max", low, at, whole=True, low=low, owner=owner))
        scale = spec.get("scale", "linear")
        if scale not in ("linear", "log"):   # else a typo would draw linearly, unsaid
            raise ld.fail(f"{owner}: `scale` must be \"linear\" or \"log\" (got {scale!r})",
                          "hidden.fields", name)
        log = scale == "log"
        if log and low < 1:
            raise ld.fail(f"{owner}: a log scale needs min >= 1", "hidden.fields", name)
        fields.append(HiddenField(name, low=low, high=high, log=log, equal_to=equal, p_equal=p_equal))
    names = [f.name for f in fields]
    # default: two fields, those drawn from choices first (none where the space has one field)
    ordered = [f.name for f in fields if f.choices] + [f.name for f in fields if not f.choices]
    grid = raw.get("grid", ordered[:2] if len(ordered) >= 2 else [])
    if not isinstance(grid, list) or len(grid) not in (0, 2) or any(g not in names for g in grid):
        raise ld.fail(f"`hidden.grid` must name two hidden fields (fields: {', '.join(names)}; "
                      f"got {grid!r})", "hidden.grid")
    # "hidden." puts each error at its key's line (the message names the owner)
    return HiddenSpace(count=int(ld.number(raw, "count", 4, "hidden.", low=0, whole=True,
                                           owner="[hidden]")),
                       fields=tuple(fields), where=raw.get("where"),
                       max_flops=float(ld.number(raw, "max_flops", 1e30, "hidden.", low=1,
                                                 owner="[hidden]")),
                       grid=tuple(grid))


def goal_choices(data: dict[str, Any]) -> list[str]:
    """What a goal may be judged against: the baseline, or a comparison the task names."""
    comps = data.get("comparisons")
    names = comps.get("names") if isinstance(comps, dict) else None
    return ["baseline", *(str(n) for n in names or [] if isinstance(names, list))]


def _goal(ld: _Loader, goal: Any) -> dict[str, Any]:
    """[goal]: min_speedup (a positive number, default 1), against (default baseline: the
    baseline or one of the task's [comparisons] names) and hidden (true: the speed rule
    holds on the hidden scenarios drawn in each evaluation too; default false)."""
    if not isinstance(goal, dict):
        raise ld.fail(f"`goal` must be a table (got {goal!r})", "goal")
    ms = goal.get("min_speedup", 1.0)
    if (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms)
            or ms <= 0):
        raise ld.fail(f"`goal.min_speedup` must be a positive number (got {ms!r})",
                      "goal.min_speedup")
    against = goal.get("against", "baseline")
    choices = goal_choices(ld.data)
    if not isinstance(against, str) or against not in choices:
        raise ld.fail(f"`goal.against` must be {' or '.join(repr(c) for c in choices)} (the "
                      f"baseline or one of [comparisons] names; got {against!r})", "goal.against")
    hidden = goal.get("hidden", False)
    if not isinstance(hidden, bool):
        raise ld.fail(f"`goal.hidden` must be true or false (got {hidden!r})", "goal.hidden")
    unknown = sorted(set(goal) - {"min_speedup", "against", "hidden"})
    if unknown:
        raise ld.fail(f"unknown key `goal.{unknown[0]}` (known: min_speedup, against, hidden)",
                      f"goal.{unknown[0]}")
    return {**goal, "min_speedup": float(ms), "against": against, "hidden": hidden}


def _buffer(ld: _Loader, b: Any, i: int) -> BufferSpec:
    where = f"buffers[{i}]"
    if not isinstance(b, dict):
        raise ld.fail("each [[buffers]] entry must be a table", where)
    name = ld.need(b, "name", str, "buffers.")
    role = b.get("role")
    if role not in ROLES:
        raise ld.fail(f"buffer {name!r}: role must be one of {', '.join(ROLES)}", f"{where}.role")
    dtype = b.get("dtype", "u8" if role == "workspace" else None)
    if dtype not in DTYPES:
        raise ld.fail(f"buffer {name!r}: dtype must be one of {', '.join(DTYPES)}", f"{where}.dtype")
    init = b.get("init", "normal")
    if init not in INITS:
        raise ld.fail(f"buffer {name!r}: init must be one of {', '.join(INITS)}", f"{where}.init")
    if role == "workspace":
        if "bytes" not in b:
            raise ld.fail(f"workspace buffer {name!r} needs bytes", where)
    elif not isinstance(b.get("shape"), list):
        raise ld.fail(f"buffer {name!r} needs a shape list", f"{where}.shape")
    if role == "output" and "per_unit" not in b:
        raise ld.fail(f"output buffer {name!r} needs per_unit (elements per reference unit)", where)
    return BufferSpec(
        name=name, role=role, dtype=dtype, shape=tuple(b.get("shape", ())), bytes=b.get("bytes"),
        init=init, mean=float(ld.number(b, "mean", 0.0, f"{where}.", owner=f"buffer {name!r}")),
        std=float(ld.number(b, "std", 1.0, f"{where}.", low=0, owner=f"buffer {name!r}")),
        per_unit=b.get("per_unit"),
        floor=float(ld.number(b, "floor", 1e-3, f"{where}.", low=0, owner=f"buffer {name!r}")),
    )


def _field(ld: _Loader, f: Any, buffer_names: list[str]) -> FieldSpec:
    if not isinstance(f, dict) or "name" not in f:
        raise ld.fail("each params.fields entry needs a name", "params.fields")
    spec = FieldSpec(name=f["name"], type=f.get("type", ""), buffer=f.get("buffer"), value=f.get("value"))
    near = f'"{spec.name}"'
    if spec.type not in FIELD_TYPES:
        raise ld.fail(f"field {spec.name!r}: type must be one of {', '.join(FIELD_TYPES)}",
                      "params.fields", near)
    if spec.type == "ptr" and spec.buffer not in buffer_names:
        raise ld.fail(f"field {spec.name!r}: buffer {spec.buffer!r} is not a declared buffer",
                      "params.fields", near)
    if spec.type != "ptr" and spec.value is None:
        raise ld.fail(f"field {spec.name!r} needs a value expression", "params.fields", near)
    return spec


class _IdFormatter(string.Formatter):
    """`{seqlen_q:k}` formats a size the readable way (8192 → 8k)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "k":
            return k(value)
        text: str = super().format_field(value, format_spec)
        return text


def _scenario(ld: _Loader, set_name: str, raw: TomlTable, defaults: TomlTable, derived: TomlTable,
              id_template: str | None) -> Scenario:
    values = {**defaults, **{key: v for key, v in raw.items() if key != "id"}}
    for key, expr in derived.items():
        if key in raw:
            continue
        try:
            values[key] = evaluate(expr, values)
        except (ExprError, TypeError, ValueError) as exc:
            names = _named(expr)
            if not names & (set(raw) - {"id"}):   # wrong whatever the scenario writes
                raise ld.fail(f"set {set_name!r}: derived {key!r}: {exc} (scenario {raw})",
                              f"derived.{key}") from None
            raise ld.fail_at(f"set {set_name!r} ({_written(raw, names)}): derived {key!r}: "
                             f"{exc}", ld.value_line(set_name, raw, names)) from None
    sid = raw.get("id")
    if sid is None:
        if not id_template:
            raise ld.fail(f"set {set_name!r}: a scenario has no id and the task has no id template",
                          f"sets.{set_name}")
        try:
            sid = _IdFormatter().format(id_template, **values)
        except (KeyError, ValueError, IndexError) as exc:
            names = _named(id_template)
            if isinstance(exc, KeyError) or not names & (set(raw) - {"id"}):
                raise ld.fail(f"id template {id_template!r}: {exc}", "id") from None
            raise ld.fail_at(f"set {set_name!r} ({_written(raw, names)}): id template "
                             f"{id_template!r}: {exc}", ld.value_line(set_name, raw, names)) \
                from None
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+\-]*", str(sid)):
        raise ld.fail(f"set {set_name!r}: scenario id {sid!r} is not a plain word",
                      f"sets.{set_name}", str(sid))
    ld.origins.setdefault(str(sid), (set_name, raw))
    return Scenario(id=str(sid), values=values)


def _expand_set(ld: _Loader, set_name: str, spec: Any, defaults: TomlTable, derived: TomlTable,
                id_template: str | None) -> list[Scenario]:
    if not isinstance(spec, dict):
        raise ld.fail(f"[sets.{set_name}] must be a table", f"sets.{set_name}")
    _known_keys(ld, spec, SET_KEYS, f"set {set_name!r}:", f"sets.{set_name}", prefix=f"sets.{set_name}.")
    out: list[Scenario] = []
    for raw in _tables(ld, spec, "scenarios", set_name):
        out.append(_scenario(ld, set_name, raw, defaults, derived, id_template))
    for grid in _tables(ld, spec, "grid", set_name):
        grid = dict(grid)
        where = grid.pop("where", None)  # optional filter expression over each combination
        keys = list(grid)
        axes = [v if isinstance(v, list) else [v] for v in grid.values()]
        if math.prod(len(a) for a in axes) > MAX_GRID:
            raise ld.fail(f"set {set_name!r}: a grid of {math.prod(len(a) for a in axes):,} combinations "
                          f"(at most {MAX_GRID:,})", f"sets.{set_name}")
        for combo in itertools.product(*axes):
            raw = dict(zip(keys, combo, strict=True))
            sc = _scenario(ld, set_name, raw, defaults, derived, id_template)
            try:
                kept = where is None or evaluate(where, sc.values)
            except (ExprError, TypeError) as exc:
                raise ld.fail(f"set {set_name!r}: grid `where`: {exc}", f"sets.{set_name}",
                              "where") from None
            if kept:
                out.append(sc)
    if not out:
        raise ld.fail(f"set {set_name!r} is empty", f"sets.{set_name}")
    return out


def _tables(ld: _Loader, spec: TomlTable, key: str, set_name: str) -> list[TomlTable]:
    """A set's `scenarios` or `grid`: a list of tables (anything else is one line)."""
    items = spec.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ld.fail(f"set {set_name!r}: `{key}` must be a list of inline tables "
                      f"(got {items!r})"[:200], f"sets.{set_name}.{key}")
    return items


def _known_keys(ld: _Loader, table: TomlTable, known: tuple[str, ...], owner: str, key: str,
                near: str | None = None, prefix: str = "") -> None:
    """A misspelt key (`max_flop`, `scenario`) would be ignored and its default used
    unsaid, so a key the loader does not read is an error, like a top-level one."""
    for name in table:
        if name not in known:
            what = f"{owner} unknown key `{prefix}{name}`".strip()
            raise ld.fail(f"{what} (known: {', '.join(known)})", key, near or name)


def _scenario_fail(ld: _Loader, sid: str, message: str, key: str, expr: Any) -> TaskError:
    """An expression that fails on a value a scenario writes: at the line that writes it
    (the value is what is wrong, not the expression), the expression's line named too."""
    origin = ld.origins.get(sid)
    at = ld.keys.line(key)
    names = _named(expr)
    if origin is None or not names & (set(origin[1]) - {"id"}):
        # a value of [defaults], or an expression that is wrong for every scenario
        return ld.fail(f"{message} (scenario {sid})", key,
                       str(expr) if isinstance(expr, str) else None)
    set_name, raw = origin
    return ld.fail_at(f"set {set_name!r}, scenario {sid} ({_written(raw, names)}): {message}"
                      + (f" (`{key}` at line {at})" if at else ""),
                      ld.value_line(set_name, raw, names))


def _check_hidden(ld: _Loader, task: Task) -> None:
    """A [hidden] space that draws nothing (a `where` or a field's expression naming no
    field, or a typo in either) would silently leave every evaluation without hidden
    scenarios and the goal's hidden rule vacuous: an error at load instead."""
    space = task.hidden
    if space is None or task._draw(1, 0, "check-"):
        return
    rng = random.Random(0)
    values: dict[str, Any] = {}
    try:   # the first draw again, uncaught: what stops every draw
        for f in space.fields:
            values[f.name] = _draw(f, values, rng)
        sc = task.scenario(values)
        if space.where:
            evaluate(space.where, sc.values)
    except (ExprError, TypeError, ValueError, ZeroDivisionError, KeyError) as exc:
        raise ld.fail(f"[hidden]: no scenario can be drawn: {exc}", "hidden") from None
    raise ld.fail(f"[hidden]: no scenario can be drawn: none of {MAX_TRIES} draws meets "
                  f"`where` and `max_flops`", "hidden")


def _check_expressions(ld: _Loader, task: Task) -> None:
    """Evaluate every expression of every scenario once, so errors surface at load."""
    for sc in task.all_scenarios().values():
        exprs: list[tuple[str, str, Any]] = [
            ("reference.units", "reference.units", task.reference.units),
            ("reference.unit_flops", "reference.unit_flops", task.reference.unit_flops)]
        exprs += [(f"metrics.{k_}", f"metrics.{k_}", v) for k_, v in task.metrics.items()]
        for i, b in enumerate(task.buffers):
            exprs += [(f"buffer {b.name} shape", f"buffers[{i}].shape", s) for s in b.shape]
            if b.bytes is not None:
                exprs.append((f"buffer {b.name} bytes", f"buffers[{i}].bytes", b.bytes))
            if b.per_unit is not None:
                exprs.append((f"buffer {b.name} per_unit", f"buffers[{i}].per_unit", b.per_unit))
        exprs += [(f"field {f.name}", "params.fields", f.value) for f in task.fields
                  if f.value is not None]
        for label, key, expr in exprs:
            try:
                value = evaluate(expr, sc.values)
            except (ExprError, TypeError, ValueError) as exc:
                raise _scenario_fail(ld, sc.id, f"{label}: {exc}", key, expr) from None
            # a text where the struct holds a number fails only when the GPU worker packs it
            if label.startswith("field ") and not isinstance(value, (int, float)):
                raise _scenario_fail(ld, sc.id, f"{label}: {expr!r} is {value!r}, not a "
                                     f"number", key, expr)
            # a size below zero would reach the GPU worker as an allocation error
            if " shape" in label or " bytes" in label:
                if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                    raise _scenario_fail(ld, sc.id, f"{label}: {expr!r} is {value!r}, not a "
                                         f"size", key, expr)
