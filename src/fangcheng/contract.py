"""JSON input read through msgspec shapes, with errors in the contracts' own words: the
bottom layer, which the scoring input, records and the protocol's frames all read through.

Each contract's input (the `score` situation, a game record) is a msgspec `Struct`: types,
ranges, lengths, required and unknown keys are checked in C, and the same definition
gives the published JSON Schema. msgspec reports ``Expected `int` >= 1 - at `$.base```;
`decode` and `convert` turn that into the contracts' form, ``dealer: 4 is out of range
(0..3)``: the field path without ``$``, the problem in words, and at most `QUOTE_LIMIT`
characters of the offending value. What a shape cannot say (tile counts, seats that must
differ, a meld's tiles) each contract checks afterwards, with the same kind of path.

Two field annotations feed the messages: ``Meta(extra={"expected": ...})`` names what a
field holds (``tile notation (a string)``), ``Meta(extra={"noun": ...})`` what its items
or values are called (``seats``, ``a meld kind``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeVar

import msgspec
import msgspec.inspect as mi

__all__ = [
    "QUOTE_LIMIT",
    "TOO_DEEP",
    "about",
    "convert",
    "decode",
    "explain",
    "json_schema",
    "quote",
]

T = TypeVar("T")

#: The most characters of a bad value an error message repeats.
QUOTE_LIMIT: Final = 80
#: Said of JSON nested past what the decoder recurses into (Python's recursion limit,
#: about 1,000 levels; no contract nests more than six).
TOO_DEEP: Final = "nested too deeply (no contract nests more than six levels)"

_MESSAGE: Final = re.compile(
    r"(?P<problem>.*?)(?: - at `(?P<path>[^`]*)`(?: in `(?P<dict>[^`]*)`)?)?", re.DOTALL
)
_STEP: Final = re.compile(r"\.(\w+)|\[(\d+)\]")
_NAME: Final = re.compile(r"\w{1,40}")
_FIELD: Final = re.compile(
    r"Object (missing required|contains unknown) field `(?P<name>.*)`", re.DOTALL
)
_RANGE: Final = re.compile(r"Expected `\w+` [<>]=? ")
_LENGTH: Final = re.compile(r"Expected `(array|object|str)` of length ")
_GOT: Final = re.compile(r"Expected `[^`]*`, got `(?P<got>\w+)`")
_BYTE: Final = re.compile(r"\(byte (\d+)\)")
# msgspec's names of JSON types, as the messages name Python's
_JSON_NAMES: Final = {"array": "list", "object": "dict"}
_TYPE_WORDS: Final[dict[type, str]] = {
    mi.IntType: "an integer",
    mi.FloatType: "a number",
    mi.BoolType: "true or false",
    mi.StrType: "a string",
    mi.NoneType: "null",
    mi.ListType: "a list",
    mi.VarTupleType: "a list",
    mi.TupleType: "a list",
    mi.StructType: "an object",
    mi.DictType: "an object",
}
_NUMBERS: Final = ("zero", "one", "two", "three", "four", "five", "six")
_UNKNOWN: Final = object()  # the value at a path when the input could not be read back


def about(description: str) -> msgspec.Meta:
    """A field's description in the published JSON Schema."""
    return msgspec.Meta(description=description)


def decode(raw: bytes | str, type_: type[T], error: Callable[[str], Exception], root: str) -> T:
    """JSON text as ``type_``; any problem (not UTF-8, not JSON, too deep, wrong shape) is
    raised as ``error(message)``, ``root`` naming the whole document in messages."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")  # whole, so that bad bytes anywhere read the same
        except UnicodeDecodeError as exc:
            bad = exc.object[exc.start]
            raise error(f"the text is not UTF-8: byte 0x{bad:02x} at offset {exc.start}") from None
    try:
        return msgspec.json.decode(raw, type=type_)
    except msgspec.ValidationError as exc:
        raise error(explain(exc, _untyped(raw), type_, root)) from None
    except msgspec.DecodeError as exc:
        raise error(f"the text is not JSON: {_located(str(exc), raw)}") from None
    except RecursionError:
        raise error(TOO_DEEP) from None


def convert(data: object, type_: type[T], error: Callable[[str], Exception], root: str) -> T:
    """Parsed JSON (dicts, lists, str, int, float, bool, None) as ``type_``, strictly (a bool
    is no integer, nor is 1.0); problems are raised as ``error(message)``."""
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as exc:
        raise error(explain(exc, data, type_, root)) from None
    except RecursionError:
        raise error(TOO_DEEP) from None


def explain(exc: msgspec.ValidationError, data: object, type_: type[Any], root: str) -> str:
    """msgspec's message as ``path: problem``; ``data`` is the input (for the bad value)."""
    match = _MESSAGE.fullmatch(str(exc))
    assert match is not None  # the pattern matches any text
    problem = match["problem"]
    if match["dict"] is not None:  # a key of a mapping (only from `convert`)
        return f"{_path(_steps(match['dict']), root)}: a key is not a string"
    steps = _steps(match["path"] or "$")
    node, value = _walk(mi.type_info(type_), data, steps)
    field = _FIELD.match(problem)
    if field is not None:
        path = _path([*steps, field["name"]], root)
        if problem.startswith("Object missing"):
            return f"{path}: missing"
        bare = _bare(node)
        members = map(_bare, bare.types) if isinstance(bare, mi.UnionType) else (bare,)
        struct = next((t for t in members if isinstance(t, mi.StructType)), None)
        names = [f.encode_name for f in struct.fields] if struct is not None else []
        return f"{path}: unknown key; valid: {', '.join(sorted(names))}"
    return f"{_path(steps, root)}: {_problem(problem, node, value)}"


def json_schema(type_: type[Any]) -> dict[str, Any]:
    """The JSON Schema of a shape, its descriptions (docstrings too) on one line each."""

    def tidy(node: object) -> object:
        if isinstance(node, dict):
            return {
                key: " ".join(value.split())
                if isinstance(value, str) and key == "description"
                else tidy(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [tidy(item) for item in node]
        return node

    result: dict[str, Any] = tidy(msgspec.json.schema(type_))  # type: ignore[assignment]
    return result


def quote(value: object) -> str:
    """A short readable form of a scalar: its repr, cut to `QUOTE_LIMIT` characters."""
    if isinstance(value, int) and value.bit_length() > 200:  # repr may refuse 4,300 digits
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"


# --- inside ------------------------------------------------------------------------------


def _untyped(text: str) -> object:
    """The document as plain values, to quote from; `_UNKNOWN` if even that fails."""
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _UNKNOWN


def _located(message: str, text: str) -> str:
    """A decode error with its byte offset given as a line and column."""
    message = message.removeprefix("JSON is malformed: ")
    offset = _BYTE.search(message)
    if offset is None:
        return message
    before = text.encode("utf-8")[: int(offset[1])].decode("utf-8", errors="replace")
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return f"{message[: offset.start()].rstrip()} at line {line}, column {column}"


def _steps(where: str) -> list[str | int]:
    """``$.seats[2].from`` as ``["seats", 2, "from"]``."""
    return [int(index) if index else name for name, index in _STEP.findall(where)]


def _path(steps: list[str | int], root: str) -> str:
    if not steps:
        return root
    text = "".join(
        f"[{s}]" if isinstance(s, int) else f".{s}" if _NAME.fullmatch(s) else f"[{quote(s)}]"
        for s in steps
    )
    return text.removeprefix(".")


def _bare(node: mi.Type) -> mi.Type:
    while isinstance(node, mi.Metadata):
        node = node.type
    return node


def _extra(node: mi.Type, key: str) -> str | None:
    while isinstance(node, mi.Metadata):
        if node.extra and key in node.extra:
            return str(node.extra[key])
        node = node.type
    return None


def _walk(node: mi.Type, value: object, steps: list[str | int]) -> tuple[mi.Type, object]:
    """The type and the value at ``steps`` (a missing value is `_UNKNOWN`)."""
    for step in steps:
        node = _child(node, step)
        if isinstance(step, int):
            ok = isinstance(value, list) and 0 <= step < len(value)
            value = value[step] if ok else _UNKNOWN  # type: ignore[index]
        else:
            value = value.get(step, _UNKNOWN) if isinstance(value, dict) else _UNKNOWN
    return node, value


def _child(node: mi.Type, step: str | int) -> mi.Type:
    node = _bare(node)
    members = [*map(_bare, node.types)] if isinstance(node, mi.UnionType) else [node]
    for member in members:  # of a union, the first member that has such a child
        if isinstance(member, mi.StructType) and isinstance(step, str):
            found = [f.type for f in member.fields if f.encode_name == step]
            if found:
                return found[0]
        if isinstance(member, mi.DictType) and isinstance(step, str):
            return member.value_type
        if isinstance(member, mi.ListType | mi.VarTupleType) and isinstance(step, int):
            return member.item_type
        if (
            isinstance(member, mi.TupleType)
            and isinstance(step, int)
            and step < len(member.item_types)
        ):
            return member.item_types[step]
    return mi.AnyType()


def _problem(problem: str, node: mi.Type, value: object) -> str:
    known = value is not _UNKNOWN
    got = _GOT.match(problem)
    if got is not None:
        name = _type_name(value) if known else _JSON_NAMES.get(got["got"], got["got"])
        shown = f" {quote(value)}" if known and isinstance(value, str | int | float) else ""
        return f"expected {_expected(node)}, got {name}{shown}"
    bare = _bare(node)
    number = _number_type(bare)
    if _RANGE.match(problem) and number is not None:
        return f"{quote(value) + ' is ' if known else ''}out of range ({_span(number)})"
    if _LENGTH.match(problem) and isinstance(bare, mi.StrType) and bare.max_length is not None:
        size = f"{len(value)} characters" if isinstance(value, str) else "too long"
        return f"{size}; at most {bare.max_length}"
    if _LENGTH.match(problem) and isinstance(bare, mi.ListType) and isinstance(value, list):
        noun = _extra(node, "noun") or "items"
        low, high = bare.min_length, bare.max_length
        if low == high and low is not None:
            return f"expected {_number(low)} {noun}, got {len(value)}"
        if high is not None and len(value) > high:
            return f"{len(value)} {noun}; at most {_number(high)}"
        return f"{len(value)} {noun}; at least {_number(low or 0)}"
    if problem.startswith("Invalid enum value"):
        what = _extra(node, "noun")
        valid = ", ".join(str(v) for v in _choices(bare))
        shown = quote(value) if known else problem.removeprefix("Invalid enum value ")
        return f"{shown}{f' is not {what}' if what else ''}; valid: {valid}"
    if problem in ("Integer value out of range", "Number out of range"):
        span = f" ({_span(number)})" if number is not None and _span(number) else ""
        return f"a number out of range{span}"
    return problem[:1].lower() + problem[1:]


def _number_type(node: mi.Type) -> mi.IntType | mi.FloatType | None:
    """The integer or number type of a field (of ``int | None`` too), if it has one."""
    members = node.types if isinstance(node, mi.UnionType) else (node,)
    return next((t for t in map(_bare, members) if isinstance(t, mi.IntType | mi.FloatType)), None)


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _expected(node: mi.Type) -> str:
    """What a field holds, in words: ``an integer``, ``tile notation (a string)``."""
    named = _extra(node, "expected")
    if named is not None:
        return named
    node = _bare(node)
    if isinstance(node, mi.UnionType):
        words = [_expected(t) for t in node.types]
        if "a number" in words and "an integer" in words:  # an integer is a number
            words.remove("an integer")
        return " or ".join(words)
    if isinstance(node, mi.EnumType | mi.LiteralType):
        return "one of " + ", ".join(str(v) for v in _choices(node))
    return _TYPE_WORDS.get(type(node), "a value of another type")


def _choices(node: mi.Type) -> list[object]:
    if isinstance(node, mi.EnumType):
        return [member.value for member in node.cls]
    if isinstance(node, mi.LiteralType):
        return list(node.values)
    return []


def _span(node: mi.IntType | mi.FloatType) -> str:
    low = node.ge if node.ge is not None else node.gt
    high = node.le if node.le is not None else node.lt
    if node.ge is not None and node.le is not None:
        return f"{node.ge}..{node.le}"
    parts = []
    if low is not None:
        parts.append(f"{'≥' if node.ge is not None else '>'} {low}")
    if high is not None:
        parts.append(f"{'≤' if node.le is not None else '<'} {high}")
    return " and ".join(parts)


def _number(n: int) -> str:
    return _NUMBERS[n] if n < len(_NUMBERS) else str(n)
