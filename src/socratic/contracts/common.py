"""The machinery every record shares: `Record` (checked construction from JSON, and
back), its checkers, and `ContractError`."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeVar, Union


class ContractError(ValueError):
    """A record does not match its declaration; the message names the field."""


R = TypeVar("R", bound="Record")  # typing.Self needs Python 3.11
_Check = Callable[[Any, str], Any]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _sub(where: str, name: str) -> str:
    """The place of a field: `eval.end event seq 4: summary.all_correct`."""
    return f"{where}.{name}" if ": " in where else f"{where}: {name}"


def _expect(what: str, value: Any, where: str) -> ContractError:
    return ContractError(f"{where}: expected {what}, got {type(value).__name__} {_short(value)}")


def _number(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _expect("a number", value, where)
    return value


def _integer(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _expect("an integer", value, where)
    return value


def _scalar(kind: type, what: str) -> _Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, kind):
            raise _expect(what, value, where)
        return value
    return check


def _checker(tp: Any) -> _Check:
    """A function that checks a JSON value against the annotation `tp` and returns it (nested
    records become their dataclasses)."""
    if tp is Any:
        return lambda value, where: value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _checker(args[0]) if len(args) == 1 else None
        if inner is None or len(args) == len(typing.get_args(tp)):
            raise TypeError(f"unsupported annotation {tp!r}: only `X | None` unions")
        return lambda value, where: None if value is None else inner(value, where)
    if origin is Literal and all(isinstance(a, str) for a in typing.get_args(tp)):
        # a vocabulary (socratic.contracts.vocab): checked as a string, not against the
        # list, so a newer version's value still reads (readers ignore what they do not know)
        return _scalar(str, "a string")
    if tp is bool:
        return _scalar(bool, "true or false")
    if tp is int:
        return _integer
    if tp is float:
        return _number
    if tp is str:
        return _scalar(str, "a string")
    if origin is list:
        item = _checker(typing.get_args(tp)[0])

        def check_list(value: Any, where: str) -> list[Any]:
            if not isinstance(value, (list, tuple)):
                raise _expect("a list", value, where)
            return [item(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return check_list
    if origin is dict:
        val = _checker(typing.get_args(tp)[1])

        def check_dict(value: Any, where: str) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise _expect("an object", value, where)
            out = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise _expect("string keys", k, where)
                out[k] = val(v, _sub(where, k))
            return out
        return check_dict
    if isinstance(tp, type) and issubclass(tp, Record):
        record = tp

        def check_record(value: Any, where: str) -> Record:
            if isinstance(value, record):  # built in code: checked like parsed JSON
                value = value.to_dict()
            return record.from_dict(value, where)
        return check_record
    raise TypeError(f"unsupported annotation {tp!r}")


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


@dataclass(kw_only=True)
class Record:
    """Base of every declared record: checked construction from JSON, and back."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # (name, checker, required, optional) per declared field, built once per class
    _SPEC: ClassVar[dict[type, list[tuple[str, _Check, bool, bool]]]] = {}
    _RESERVED: ClassVar[frozenset[str]] = frozenset()
    # fields with a default for records built in code that JSON must still carry
    _ALWAYS: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def _spec(cls) -> list[tuple[str, _Check, bool, bool]]:
        spec = Record._SPEC.get(cls)
        if spec is None:
            hints = typing.get_type_hints(cls)
            spec = []
            for f in fields(cls):
                if f.name == "extra":
                    continue
                required = (f.default is MISSING and f.default_factory is MISSING) \
                    or f.name in cls._ALWAYS
                spec.append((f.name, _checker(hints[f.name]), required,
                             f.default is None))
            Record._SPEC[cls] = spec
        return spec

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        """Check `data` (a parsed JSON object) against the declaration; ContractError names
        the first field that does not match."""
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise _expect("an object", data, where)
        kwargs: dict[str, Any] = {}
        names = set()
        for name, check, required, _ in cls._spec():
            names.add(name)
            if name in data:
                kwargs[name] = check(data[name], _sub(where, name))
            elif required:
                raise ContractError(f"{_sub(where, name)}: missing")
        extra = {k: v for k, v in data.items() if k not in names and k not in cls._RESERVED}
        return cls(**kwargs, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: declared fields in declaration order (optional ones only when
        set), then the extra keys."""
        out: dict[str, Any] = {}
        for name, _, _, optional in self._spec():
            value = getattr(self, name)
            if value is None and optional:
                continue
            out[name] = _dump(value)
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    def check(self: R) -> R:
        """Re-check a record built in code (writers): the dataclass does not check types."""
        return type(self).from_dict(self.to_dict())
