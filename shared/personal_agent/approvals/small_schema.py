"""The small JSON Schema an `ask_user` form may use, checked here without a library: the API function's layer has
no JSON Schema validator (`jsonschema` comes only with the `mcp` SDK, pruned there), and a form is small on purpose.

Keywords: `type` (one or a list), `enum`, `const`, `properties`, `required`, `additionalProperties` (a boolean),
`items`, `minItems`/`maxItems`, `minLength`/`maxLength`, `minimum`/`maximum`, `exclusiveMinimum`/`exclusiveMaximum`,
and the annotations `title`, `description`, `default`, `examples`, `format`. Anything else (`$ref`, `pattern`,
`oneOf`, ...) is refused when the form is made, so an answer is never checked against a rule that is not checked."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "format"})
KEYWORDS = ANNOTATIONS | {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
}  # fmt: skip
MAX_DEPTH = 6
_BOUNDS: tuple[tuple[str, Callable[[Any, Any], bool], str], ...] = (
    ("minimum", operator.ge, "number"),
    ("maximum", operator.le, "number"),
    ("exclusiveMinimum", operator.gt, "number"),
    ("exclusiveMaximum", operator.lt, "number"),
    ("minLength", operator.ge, "string"),
    ("maxLength", operator.le, "string"),
    ("minItems", operator.ge, "array"),
    ("maxItems", operator.le, "array"),
)


def schema_problem(schema: Any, where: str = "schema", depth: int = 0) -> str | None:
    """What makes `schema` unusable as a form (None: nothing)."""
    if not isinstance(schema, dict):
        return f"`{where}` must be an object"
    if depth > MAX_DEPTH:
        return f"`{where}` nests deeper than {MAX_DEPTH} levels"
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        return f"`{where}` uses {unknown[0]!r}, which a question's form does not support"
    kinds = schema.get("type", [])
    if any(k not in TYPES for k in (kinds if isinstance(kinds, list) else [kinds])):
        return f"`{where}.type` must be one of {sorted(TYPES)}"
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        return f"`{where}.enum` must be a non-empty list"
    if not isinstance(schema.get("required", []), list) or not isinstance(schema.get("properties", {}), dict):
        return f"`{where}.required` must be a list and `{where}.properties` an object"
    if not isinstance(schema.get("additionalProperties", True), bool):
        return f"`{where}.additionalProperties` must be true or false"
    for name, sub in schema.get("properties", {}).items():
        if problem := schema_problem(sub, f"{where}.properties.{name}", depth + 1):
            return problem
    if "items" in schema:
        return schema_problem(schema["items"], f"{where}.items", depth + 1)
    return None


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "unknown"


def _type_error(schema: dict[str, Any], value: Any) -> str | None:
    kinds = schema.get("type")
    if kinds is None:
        return None
    wanted = kinds if isinstance(kinds, list) else [kinds]
    have = _type_of(value)
    if have in wanted or (have == "integer" and "number" in wanted):
        return None
    if have == "number" and "integer" in wanted and float(value).is_integer():
        return None
    return f"must be {' or '.join(wanted)}"


def _bounds_error(schema: dict[str, Any], value: Any) -> str | None:
    kind = _type_of(value)
    group = "number" if kind == "integer" else kind
    measured = len(value) if group in ("string", "array") else value
    for key, holds, applies in _BOUNDS:
        if applies == group and key in schema and not holds(measured, schema[key]):
            return f"must be within {key} {schema[key]}"
    return None


def first_error(schema: dict[str, Any], value: Any, path: str = "") -> str | None:
    """The first way `value` does not fit `schema`, as `path: what` (None: it fits)."""
    where = path or "the answer"
    error = _type_error(schema, value)
    if error is None and "enum" in schema and value not in schema["enum"]:
        error = f"must be one of {schema['enum']}"
    if error is None and "const" in schema and value != schema["const"]:
        error = f"must be {schema['const']!r}"
    error = error or _bounds_error(schema, value)
    if error:
        return f"{where} {error}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return f"{path or 'the answer'} is missing {name!r}"
        for name, item in value.items():
            if name in properties:
                if found := first_error(properties[name], item, f"{path}/{name}".lstrip("/")):
                    return found
            elif schema.get("additionalProperties") is False:
                return f"{where} has {name!r}, which the form does not ask for"
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            if found := first_error(schema["items"], item, f"{path}/{i}".lstrip("/")):
                return found
    return None
