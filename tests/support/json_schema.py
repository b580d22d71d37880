"""A small JSON Schema validator for fxoracle's own schemas (`checker/schemas/*.json`): the
keywords they use (`type`, `enum`, `properties`, `required`, `additionalProperties`, `items`,
local `$ref`), nothing more. `errors(instance, schema)` lists where `instance` breaks `schema`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TYPES: Mapping[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}  # fmt: skip
KNOWN = {"$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum",
         "properties", "required", "additionalProperties", "items"}  # fmt: skip


def errors(instance: Any, schema: Mapping[str, Any]) -> list[str]:
    """Where `instance` breaks `schema` (the root, whose `$defs` every `$ref` names)."""
    return _check(instance, schema, schema, "$")


def _check(value: Any, rule: Mapping[str, Any], root: Mapping[str, Any], at: str) -> list[str]:
    unknown = set(rule) - KNOWN
    assert not unknown, f"{at}: keywords this validator does not know: {sorted(unknown)}"
    if "$ref" in rule:
        name = str(rule["$ref"]).removeprefix("#/$defs/")
        return _check(value, root["$defs"][name], root, at)
    if "type" in rule and not _typed(value, rule["type"]):
        return [f"{at}: {type(value).__name__} is not {rule['type']}"]
    if "enum" in rule and value not in rule["enum"]:
        return [f"{at}: {value!r} is not one of {rule['enum']}"]
    if isinstance(value, dict):
        return _object(value, rule, root, at)
    if isinstance(value, list) and "items" in rule:
        return [
            e for i, v in enumerate(value) for e in _check(v, rule["items"], root, f"{at}[{i}]")
        ]
    return []


def _typed(value: Any, kinds: str | list[str]) -> bool:
    names = [kinds] if isinstance(kinds, str) else kinds
    is_bool = isinstance(value, bool)
    return any(isinstance(value, TYPES[n]) and (n == "boolean" or not is_bool) for n in names)


def _object(value: dict[str, Any], rule: Mapping[str, Any], root: Mapping[str, Any],
            at: str) -> list[str]:  # fmt: skip
    found = [f"{at}: no {k!r}" for k in rule.get("required", ()) if k not in value]
    properties: Mapping[str, Any] = rule.get("properties", {})
    extra = rule.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            found += _check(item, properties[key], root, f"{at}.{key}")
        elif extra is False:
            found.append(f"{at}: unexpected {key!r}")
        elif isinstance(extra, dict):
            found += _check(item, extra, root, f"{at}.{key}")
    return found
