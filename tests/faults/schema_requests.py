"""Hypothesis strategies for tool requests, built from each tool's published JSON Schema.

``hypothesis-jsonschema`` would be the obvious choice, but its last release
(0.23.1) calls a Hypothesis internal that no longer exists (``many.more``) and
fails on every schema with the Hypothesis this project pins. Our schemas use a
small subset (objects with ``additionalProperties: false``, strings with
length, pattern or enum, bounded integers, arrays, booleans, ``$ref``), so a
direct translation is short and exact.

Random strings almost never name a real file or pointer, so a request would
only ever exercise NOT_FOUND. ``hints`` maps a property name (``path``,
``pointer``, ``expectedSourceHash``...) to values taken from the live
workspace, mixed with schema-random ones: the generated requests then really
read, edit, move and delete.

:func:`mutated` turns a valid request into an invalid one: a wrong type, a
dropped required field, an unknown field, an out-of-range number, a string
over its limit.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Schema = dict[str, Any]
MAX_TEXT = 300  # generated strings stay short: the bounds tests cover the big inputs

JSON_GARBAGE: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)

ODD_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("\x00\n\r\t\\/~|*\"'`<>#"),
    max_size=40,
)


def _resolve(schema: Schema, defs: dict[str, Schema]) -> Schema:
    while "$ref" in schema:
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**defs[schema["$ref"].rsplit("/", 1)[-1]], **extra}
    return schema


def _string(schema: Schema) -> st.SearchStrategy[str]:
    if "enum" in schema:
        options = [o for o in schema["enum"] if isinstance(o, str)]
        # The contract folds enum case (Hybrid -> hybrid), so cased variants are valid too.
        return st.sampled_from(options) | st.sampled_from(options).map(str.upper)
    low = schema.get("minLength", 0)
    high = min(schema.get("maxLength", MAX_TEXT), max(low, MAX_TEXT))
    if "pattern" in schema:
        return st.from_regex(schema["pattern"]).filter(lambda s: low <= len(s) <= high)
    return st.text(min_size=low, max_size=high) | ODD_TEXT.filter(lambda s: low <= len(s) <= high)


def from_schema(schema: Schema, defs: dict[str, Schema], hints: dict[str, st.SearchStrategy[Any]]) -> Any:
    """A strategy of values valid for ``schema`` (a ``SearchStrategy``)."""
    schema = _resolve(schema, defs)
    kind = schema.get("type")
    if "enum" in schema and kind is None:
        return st.sampled_from(schema["enum"])
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        low = schema.get("minimum", -(2**31))
        high = schema.get("maximum", low + 10_000)
        return st.integers(min_value=low, max_value=high)
    if kind == "number":
        return st.floats(min_value=schema.get("minimum"), max_value=schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", 4), low + 4)
        return st.lists(from_schema(schema.get("items", {}), defs, hints), min_size=low, max_size=high)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if not props:  # a map with free keys (e.g. valuesByColumn)
            values = schema.get("additionalProperties")
            value = from_schema(values, defs, hints) if isinstance(values, dict) else JSON_GARBAGE
            return st.dictionaries(hints.get("column", st.text(max_size=10)), value, max_size=3)
        required = set(schema.get("required", []))

        def field(name: str, sub: Schema) -> Any:
            generated = from_schema(sub, defs, hints)
            return hints[name] | generated if name in hints else generated

        return st.fixed_dictionaries(
            {name: field(name, sub) for name, sub in props.items() if name in required},
            optional={name: field(name, sub) for name, sub in props.items() if name not in required},
        )
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}, defs, hints) for k in kind])
    return JSON_GARBAGE


def requests(schema: Schema, hints: dict[str, st.SearchStrategy[Any]]) -> Any:
    """Valid arguments for a tool whose input schema is ``schema``."""
    return from_schema(schema, schema.get("$defs", {}), hints)


@st.composite
def mutated(draw: st.DrawFn, schema: Schema, hints: dict[str, st.SearchStrategy[Any]]) -> Any:
    """A valid request with one thing broken (or, rarely, no JSON object at all)."""
    value = draw(requests(schema, hints))
    how = draw(st.sampled_from(["replace", "drop", "add", "whole", "overlong", "number"]))
    if how == "whole":
        return draw(JSON_GARBAGE)
    containers = list(_containers(value))
    if not containers:
        return draw(JSON_GARBAGE)
    box, key = draw(st.sampled_from(containers))
    if how == "drop" and isinstance(box, dict):
        del box[key]
    elif how == "add" and isinstance(box, dict):
        box[draw(st.text(min_size=1, max_size=12))] = draw(JSON_GARBAGE)
    elif how == "overlong":
        box[key] = "x" * draw(st.sampled_from([513, 1025, 70_000, 1_048_577]))
    elif how == "number":
        box[key] = draw(st.sampled_from([-1, 0, 2**31, 2**63, -(2**63), 10**30, 1.5, float("nan")]))
    else:
        box[key] = draw(JSON_GARBAGE)
    return value


def _containers(value: Any) -> Any:
    """Every (container, key) pair in a JSON value, parents before children."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield value, key
            yield from _containers(child)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield value, index
            yield from _containers(child)
