"""Safe arithmetic expressions for task.toml (shapes, formulas, derived values).

Only numbers, strings, names from the scenario, arithmetic, comparisons, boolean logic,
conditional expressions and a few functions: no attribute access, no indexing, no calls
to anything else. A task file is data, not code.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any


def k(n: Any) -> str:
    """Readable size for ids: 8192 → '8k', 1000 → '1000', 1048576 → '1m'."""
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}m"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10}k"
    return str(n)


FUNCTIONS: dict[str, Any] = {
    "min": min, "max": max, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt,
    "int": int, "float": float, "str": str, "k": k, "abs": abs, "log2": math.log2,
}

# an expression's values are whatever the task file and the scenario hold (numbers, strings)
_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}


class ExprError(ValueError):
    pass


def evaluate(source: Any, names: Mapping[str, Any]) -> Any:
    """Value of `source` (an expression string, or a plain number passed through)."""
    if isinstance(source, (int, float, bool)):
        return source
    if not isinstance(source, str):
        raise ExprError(f"expected an expression, got {source!r}")
    try:
        tree = _parse(source)
    except SyntaxError as exc:
        raise ExprError(f"bad expression {source!r}: {exc.msg}") from None
    try:
        return _eval(tree.body, names)
    except ZeroDivisionError:
        raise ExprError(f"division by zero in {source!r}") from None


@functools.lru_cache(maxsize=4096)
def _parse(source: str) -> ast.Expression:
    """A task's few expressions, parsed once: the judge evaluates the same shapes for every
    buffer of every timed pair (the trees are only read)."""
    return ast.parse(source, mode="eval")


def _eval(node: ast.AST, names: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise ExprError(f"unknown name {node.id!r}")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, names)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Not):
            return not value
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, names) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _CMPOPS:
                break
            right = _eval(comparator, names)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        else:
            return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = FUNCTIONS.get(node.func.id)
        if fn is None:
            raise ExprError(f"unknown function {node.func.id!r}")
        return fn(*(_eval(a, names) for a in node.args))
    raise ExprError(f"unsupported syntax: {ast.dump(node)[:60]}")
