"""An agent's structured output: does a value match its `output_schema` (the JSON Schema subset
`config.check_output_schema` accepts: types, properties, required, items, enum, additionalProperties false)."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, (object,)))


def output_problem(schema: dict[str, Any], value: Any, where: str = "output") -> str | None:
    """Why `value` does not match `schema` (None: it does)."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if kinds and not any(_is(value, k) for k in kinds):
        return f"{where} is not of type {' or '.join(kinds)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is not one of {schema['enum']!r}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return f"{where} has no {name!r}"
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                return f"{where} has unexpected {extra[0]!r}"
        for name, sub in properties.items():
            if name in value and (problem := output_problem(sub, value[name], f"{where}.{name}")) is not None:
                return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            if (problem := output_problem(schema["items"], item, f"{where}[{i}]")) is not None:
                return problem
    for key in ("anyOf", "oneOf"):
        if key in schema and all(output_problem(s, value, where) is not None for s in schema[key]):
            return f"{where} matches none of its `{key}` schemas"
    for sub in schema.get("allOf", []):
        if (problem := output_problem(sub, value, where)) is not None:
            return problem
    return None
