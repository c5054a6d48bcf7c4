"""Compile spec/ into generated/ and docs/reference/.

    python tools/generate.py            write the output in place
    python tools/generate.py --check    regenerate into a temporary folder and
                                        fail (exit 1) on any difference

Outputs, all byte-stable (no timestamps, sorted where order is not given):

``generated/`` holds one importable package, ``lvsm_contract`` (installed as a
top-level package, found by mypy through ``mypy_path``), so the contract is
checked by ``mypy --strict`` like the code written against it:

* ``lvsm_contract/schemas/<tool>.input.json`` / ``.output.json`` and
  ``lvsm_contract/schemas/config.json``: self-contained JSON Schemas (draft
  2020-12, every used ``$defs`` entry copied in; an output schema has every
  definition but a recursive one inlined instead), checked against the
  meta-schema with ``jsonschema``;
* ``lvsm_contract/models.py`` and ``lvsm_contract/config.py``: pydantic v2
  models made by datamodel-code-generator;
* ``lvsm_contract/registry.py``: the MCP registration table (jinja2);
* ``lvsm_contract/handlers.py``: the typed signature every tool's handler must
  have (jinja2), checked by mypy where ``handlers/__init__.py`` binds them;
* ``lvsm_contract/cli.py``: one ``call <tool>`` subcommand per tool (jinja2);
* ``docs/reference/{tools,errors,configuration}.md`` (jinja2).
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import jinja2
import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
TEMPLATES = Path(__file__).resolve().parent / "templates"
HEADER = "generated from spec/ by tools/generate.py, do not edit"
PACKAGE = "generated/lvsm_contract"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
ENVELOPES = {"request", "flat", "none"}
TOOLSETS = {"kb", "chunks"}  # server.toolsets; a tool without `toolset` belongs to kb
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


class SpecError(Exception):
    """The spec is inconsistent; the message names the file and the problem."""


# --------------------------------------------------------------------------- loading


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        data = yaml.safe_load(f)
    _no_split_text(data, path)
    return data


def _no_split_text(node: Any, path: Path) -> None:
    """An unquoted text holding ", " inside a flow mapping (``{description: a, b.}``) is split by
    YAML into a description ``a`` and a key ``b.`` with the value null, which then reaches the
    published schemas as a keyword; refuse such a key (a spaced key with no value)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str) and " " in key and value is None:
                raise SpecError(f"{path.name}: {key!r} became a key: quote the text it belongs to")
            _no_split_text(value, path)
    elif isinstance(node, list):
        for item in node:
            _no_split_text(item, path)


def load_spec() -> dict[str, Any]:
    index = load_yaml(SPEC / "spec.yaml")
    errors = load_yaml(SPEC / "errors.yaml")["codes"]
    shared_defs: dict[str, Any] = load_yaml(SPEC / "defs.yaml")["$defs"]
    config = load_yaml(SPEC / "config.yaml")
    codes = {e["code"] for e in errors}
    defs = dict(shared_defs)
    tools = []
    for name in index["tools"]:
        path = SPEC / "tools" / f"{name}.yaml"
        if not path.exists():
            raise SpecError(f"spec/spec.yaml lists {name} but {path.relative_to(ROOT)} is missing")
        tool = load_yaml(path)
        check_tool(tool, name, codes)
        for def_name, schema in (tool.get("defs") or {}).items():
            if def_name in defs:
                raise SpecError(f"{path.name}: definition {def_name} is already defined elsewhere")
            defs[def_name] = schema
        tools.append(tool)
    listed = set(index["tools"])
    for path in sorted((SPEC / "tools").glob("*.yaml")):
        if path.stem not in listed:
            raise SpecError(f"{path.relative_to(ROOT)} is not listed in spec/spec.yaml")
    return {"index": index, "errors": errors, "defs": defs, "config": config, "tools": tools}


def check_tool(tool: dict[str, Any], name: str, codes: set[str]) -> None:
    where = f"spec/tools/{name}.yaml"
    if tool.get("name") != name:
        raise SpecError(f"{where}: name must be {name!r}")
    for key in ("title", "description", "annotations", "envelope", "errors"):
        if key not in tool:
            raise SpecError(f"{where}: missing {key!r}")
    if tool.get("toolset", "kb") not in TOOLSETS:
        raise SpecError(f"{where}: toolset must be one of {sorted(TOOLSETS)}")
    if tool["envelope"] not in ENVELOPES:
        raise SpecError(f"{where}: envelope must be one of {sorted(ENVELOPES)}")
    if tool["envelope"] != "none" and "input" not in tool:
        raise SpecError(f"{where}: envelope {tool['envelope']!r} needs an input schema")
    if "output" not in tool:
        raise SpecError(f"{where}: missing 'output' (use null for content-only tools)")
    if tool["output"] is None and not tool.get("content"):
        raise SpecError(f"{where}: a content-only tool must describe its blocks under 'content'")
    for key in ANNOTATION_KEYS:
        if not isinstance(tool["annotations"].get(key), bool):
            raise SpecError(f"{where}: annotations.{key} must be a boolean")
    for err in tool["errors"]:
        if err.get("code") not in codes:
            raise SpecError(f"{where}: unknown error code {err.get('code')!r} (see spec/errors.yaml)")
        if not err.get("when"):
            raise SpecError(f"{where}: error {err['code']} needs a 'when'")


# --------------------------------------------------------------------------- schemas


REF = re.compile(r"^#/\$defs/([A-Za-z0-9_]+)$")


def refs_in(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            m = REF.match(ref)
            if not m:
                raise SpecError(f"unsupported $ref {ref!r}: only '#/$defs/Name' is allowed")
            found.append(m.group(1))
        for value in node.values():
            found.extend(refs_in(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(refs_in(value))
    return found


def self_contained(schema: dict[str, Any], defs: dict[str, Any], title: str) -> dict[str, Any]:
    """Return ``schema`` with every definition it uses (transitively) under ``$defs``."""
    used: dict[str, Any] = {}
    pending = refs_in(schema)
    while pending:
        name = pending.pop()
        if name in used:
            continue
        if name not in defs:
            raise SpecError(f"{title}: $ref to unknown definition {name!r}")
        used[name] = copy.deepcopy(defs[name])
        pending.extend(refs_in(used[name]))
    out: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "$comment": HEADER, "title": title}
    out.update(copy.deepcopy(schema))
    if used:
        out["$defs"] = {name: used[name] for name in sorted(used)}
    jsonschema.Draft202012Validator.check_schema(out)
    return out


# Keywords that only describe: beside a `$ref` they can be merged into the inlined definition
# without changing what validates (any other sibling keyword is kept beside it under `allOf`).
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)


def recursive_defs(defs: dict[str, Any]) -> set[str]:
    """The definitions that reach themselves through ``$ref``s (the outline's nested headings)."""
    edges = {name: set(refs_in(schema)) for name, schema in defs.items()}
    found = set()
    for start in defs:
        seen: set[str] = set()
        pending = list(edges[start])
        while pending:
            name = pending.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen and name in edges:
                seen.add(name)
                pending.extend(edges[name])
    return found


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (self-contained, see :func:`self_contained`) with every ``$ref`` to a definition that
    is not recursive replaced by the definition itself (decision 970): the same instances validate,
    but a validator no longer resolves a reference at every entry of a long array (the MCP Python
    SDK's client validates every result, half of its time in those lookups). A recursive definition
    stays under ``$defs``, referenced, its own body inlined likewise. The definition's name becomes
    the inlined schema's ``title`` when it has none; a description beside the ``$ref`` wins over
    the definition's own; a validating keyword beside it is kept, the definition then under ``allOf``."""
    defs: dict[str, Any] = schema.get("$defs", {})
    kept = recursive_defs(defs)

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: inline(v) for k, v in node.items() if k != "$defs"}
        ref = out.get("$ref")
        if not isinstance(ref, str):
            return out
        name = REF.match(ref).group(1)  # type: ignore[union-attr]  # refs_in checked every $ref
        if name in kept:
            return out
        siblings = {k: v for k, v in out.items() if k != "$ref"}
        target = inline(copy.deepcopy(defs[name]))
        if "title" not in target:
            target = {"title": name, **target}
        if set(siblings) <= _ANNOTATIONS:
            return {**target, **siblings}
        return {**siblings, "allOf": [target]}

    out = inline(schema)
    if kept:
        out["$defs"] = {name: inline(defs[name]) for name in sorted(kept)}
    jsonschema.Draft202012Validator.check_schema(out)
    return out


def has_required(schema: dict[str, Any]) -> bool:
    return bool(schema.get("required"))


def pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def tool_schemas(tool: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    name = tool["name"]
    envelope = tool["envelope"]
    if envelope == "none":
        arguments: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    elif envelope == "flat":
        arguments = copy.deepcopy(tool["input"])
    else:
        request = copy.deepcopy(tool["input"])
        request.setdefault("title", f"{pascal(name)}Request")
        # `request` may be omitted when nothing in it is required, so `{}` works
        # for kb_list_files and friends (spec/decisions.md).
        arguments = {
            "type": "object",
            "properties": {"request": {"$ref": f"#/$defs/{pascal(name)}Request"}},
            "additionalProperties": False,
        }
        if has_required(request):
            arguments["required"] = ["request"]
        defs = {**defs, f"{pascal(name)}Request": request}
    input_schema = self_contained(arguments, defs, f"{pascal(name)}Arguments")
    output_schema = None
    if tool["output"] is not None:
        output = copy.deepcopy(tool["output"])
        # MCP requires an outputSchema of type object at the top: inline a top-level $ref.
        while "$ref" in output:
            target = REF.match(output.pop("$ref"))
            if not target or target.group(1) not in defs:
                raise SpecError(f"{name}: bad top-level output $ref")
            output = {**copy.deepcopy(defs[target.group(1)]), **output}
        if output.get("type") != "object":
            raise SpecError(f"{name}: the output schema must be an object")
        output_schema = self_contained(output, defs, f"{pascal(name)}Result")
    return input_schema, output_schema


def request_model(tool: dict[str, Any]) -> str | None:
    """The model a tool's handler receives: the request inside the envelope, the flat
    arguments, or nothing for a tool without arguments."""
    return {"request": f"{pascal(tool['name'])}Request", "flat": f"{pascal(tool['name'])}Arguments"}.get(
        tool["envelope"]
    )


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- models


def combined_models_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """One schema whose $defs hold every tool's arguments, request and result."""
    defs = dict(spec["defs"])
    for tool in spec["tools"]:
        name = pascal(tool["name"])
        input_schema, output_schema = tool_schemas(tool, spec["defs"])
        for schema, title in ((input_schema, f"{name}Arguments"), (output_schema, f"{name}Result")):
            if schema is None:
                continue
            body = {k: v for k, v in schema.items() if k not in ("$schema", "$comment", "$defs")}
            body["title"] = title
            defs.update(schema.get("$defs", {}))
            defs[title] = body
    # Scalar definitions (paths, globs, hashes) become plain constrained `str` fields
    # instead of RootModel wrappers that handlers would have to unwrap.
    scalars = {name: d for name, d in defs.items() if d.get("type") != "object" and "properties" not in d}
    defs = {name: inline_scalars(d, scalars) for name, d in defs.items() if name not in scalars}
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "Models",
        "type": "object",
        "properties": {},
        "$defs": {name: defs[name] for name in sorted(defs)},
    }


_ITEM_CONSTRAINTS = ("minLength", "maxLength", "pattern", "minimum", "maximum", "description")


def inline_scalars(node: Any, scalars: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        items = node.get("items")
        if node.get("type") == "array" and isinstance(items, dict):
            # Constrained scalar items would become RootModel classes; the models keep plain
            # scalars (handlers validate them, e.g. globs) while the published schema keeps all.
            item = inline_scalars(items, scalars)
            if item.get("type") in ("string", "integer", "number") and "enum" not in item:
                item = {k: v for k, v in item.items() if k not in _ITEM_CONSTRAINTS}
            return {**{k: inline_scalars(v, scalars) for k, v in node.items() if k != "items"}, "items": item}
        branches = node.get("anyOf")
        if isinstance(branches, list):
            return _scalar_union({k: inline_scalars(v, scalars) for k, v in node.items()})
        ref = node.get("$ref")
        if isinstance(ref, str):
            m = REF.match(ref)
            if m and m.group(1) in scalars:
                merged = {**inline_scalars(scalars[m.group(1)], scalars)}
                merged.update({k: inline_scalars(v, scalars) for k, v in node.items() if k != "$ref"})
                return merged
        return {k: inline_scalars(v, scalars) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_scalars(v, scalars) for v in node]
    return node


def _is_plain_scalar(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") in ("string", "integer", "number") and "enum" not in node


def _scalar_union(node: dict[str, Any]) -> dict[str, Any]:
    """Unions with constrained scalar branches would become RootModel classes that handlers must
    wrap and unwrap (``SourceHash("…")``); the models get plain (nullable) scalars instead.

    ``anyOf: [constrained scalar, null]`` becomes one nullable scalar that keeps its constraints;
    in other unions (``"document"`` or an anchor) the scalar branch keeps only its type. The
    published JSON Schemas keep every constraint.
    """
    branches = node["anyOf"]
    scalars = [b for b in branches if _is_plain_scalar(b)]
    nulls = [b for b in branches if b == {"type": "null"}]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if len(scalars) == 1 and len(nulls) == 1 and len(branches) == 2:
        scalar = {k: v for k, v in scalars[0].items() if k != "description"}
        return {**scalar, **rest, "type": [scalar["type"], "null"]}
    if not scalars:
        return node
    keep = ("type", "title")
    return {
        **rest,
        "anyOf": [{k: v for k, v in b.items() if k in keep} if _is_plain_scalar(b) else b for b in branches],
    }


def run_codegen(schema: dict[str, Any], out: Path, class_name: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "schema.json"
        src.write_text(dump_json(schema), encoding="utf-8")
        cmd = [
            str(Path(sys.executable).parent / "datamodel-codegen"),
            "--input",
            str(src),
            "--input-file-type",
            "jsonschema",
            "--output",
            str(out),
            "--output-model-type",
            "pydantic_v2.BaseModel",
            "--target-python-version",
            "3.11",
            "--use-annotated",
            "--field-constraints",
            "--strict-nullable",
            "--use-standard-collections",
            "--use-union-operator",
            "--snake-case-field",
            "--allow-population-by-field-name",
            "--use-title-as-name",
            "--collapse-root-models",
            "--use-schema-description",
            "--use-field-description",
            "--deserialize-default-values",
            "enum",
            "--enum-field-as-literal",
            "all",
            "--disable-timestamp",
            "--formatters",
            "builtin",
            "--custom-file-header",
            f"# {HEADER}\n# ruff: noqa",
        ]
        if class_name:
            cmd += ["--class-name", class_name]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise SpecError(f"datamodel-codegen failed:\n{result.stderr}")
    out.write_text(_typed_object_defaults(out.read_text(encoding="utf-8")), encoding="utf-8", newline="\n")


# `section: Annotated[SectionConfig, Field(...)] = {}` is what datamodel-codegen makes of an
# object default; pydantic validates it, but mypy --strict rightly refuses a dict for a model.
_OBJECT_DEFAULT = re.compile(r"(: Annotated\[\s*([A-Z]\w*),[^\[\]]*?\]) = \{\}")


def _typed_object_defaults(text: str) -> str:
    return _OBJECT_DEFAULT.sub(lambda m: f"{m.group(1)} = Field(default_factory={m.group(2)})", text)


# --------------------------------------------------------------------------- rendering


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["pyrepr"] = repr
    env.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["pascal"] = pascal
    env.filters["oneline"] = lambda s: " ".join(str(s).split())
    env.filters["mdcell"] = lambda s: " ".join(str(s).split()).replace("|", "\\|")
    return env


def cli_options(tool: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """Shell options for the scalar fields of a tool's request (complex ones go through --json)."""
    if tool["envelope"] == "none":
        return []
    options = []
    schema = tool["input"]
    required = set(schema.get("required", []))
    for prop, sub in schema.get("properties", {}).items():
        resolved = dict(sub)
        while "$ref" in resolved:
            target = defs[REF.match(resolved["$ref"]).group(1)]  # type: ignore[union-attr]
            resolved = {**target, **{k: v for k, v in resolved.items() if k != "$ref"}}
        kind = resolved.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        option = {
            "prop": prop,
            "flag": "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", prop).lower(),
            "metavar": re.sub(r"(?<!^)(?=[A-Z])", "_", prop).upper(),
            "required": prop in required,
            "help": " ".join(str(resolved.get("description", "")).split()),
            "choices": resolved.get("enum"),
        }
        if kind in ("string", "integer", "number", "boolean"):
            option["kind"] = kind
        elif kind == "array" and _item_type(resolved.get("items", {}), defs) in ("string", "integer"):
            option["kind"] = "array"
            option["item"] = _item_type(resolved["items"], defs)
        else:
            continue  # objects and arrays of objects: --json
        options.append(option)
    return options


def json_only_fields(tool: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    """Request fields no option stands for (objects, lists of objects or numbers): ``--json`` only."""
    if tool["envelope"] == "none":
        return []
    offered = {o["prop"] for o in cli_options(tool, defs)}
    return [prop for prop in tool["input"].get("properties", {}) if prop not in offered]


def _item_type(items: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The JSON type of an array's items, through ``$ref`` (``includeGlobs: [Glob]`` is an array of strings)."""
    while "$ref" in items:
        items = defs[REF.match(items["$ref"]).group(1)]  # type: ignore[union-attr]
    return items.get("type")


def field_rows(tool: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, str]]:
    """The request table of the reference docs: type, default and bounds of each field."""
    if tool["envelope"] == "none":
        return []
    schema = tool["input"]
    required = set(schema.get("required", []))
    rows = []
    for prop, sub in schema.get("properties", {}).items():
        resolved = dict(sub)
        while "$ref" in resolved:
            target = defs[REF.match(resolved.pop("$ref")).group(1)]  # type: ignore[union-attr]
            resolved = {**target, **resolved}
        kind = resolved.get("type", "object" if "properties" in resolved else "")
        if isinstance(kind, list):
            kind = " or ".join(kind)
        if kind == "array" and isinstance(resolved.get("items"), dict):
            item = resolved["items"]
            item_kind = item.get("type") or REF.match(item.get("$ref", "#/$defs/?")).group(1)  # type: ignore[union-attr]
            kind = f"array of {item_kind}"
        if "enum" in resolved:
            kind = " / ".join(f"`{v}`" for v in resolved["enum"])
        bounds = []
        for key, sign in (
            ("minimum", ">="),
            ("maximum", "<="),
            ("minLength", "length >="),
            ("maxLength", "length <="),
            ("minItems", "items >="),
            ("maxItems", "items <="),
        ):
            if key in resolved:
                bounds.append(f"{sign} {resolved[key]}")
        rows.append(
            {
                "name": prop,
                "required": "yes" if prop in required else "no",
                "type": str(kind),
                "default": f"`{json.dumps(resolved['default'], ensure_ascii=False)}`" if "default" in resolved else "",
                "bounds": ", ".join(bounds),
                "description": str(resolved.get("description", "")),
            }
        )
    return rows


def generate(out_root: Path) -> list[Path]:
    spec = load_spec()
    env = environment()
    written: list[Path] = []

    def write(rel: str, text: str) -> None:
        path = out_root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)

    tools = []
    for tool in spec["tools"]:
        input_schema, output_schema = tool_schemas(tool, spec["defs"])
        write(f"{PACKAGE}/schemas/{tool['name']}.input.json", dump_json(input_schema))
        if output_schema is not None:
            # published with its definitions inlined (decision 970); the models keep the named form
            output_schema = inline_defs(output_schema)
            write(f"{PACKAGE}/schemas/{tool['name']}.output.json", dump_json(output_schema))
        tools.append(
            {
                **tool,
                "class": pascal(tool["name"]),
                "input_schema": input_schema,
                "output_schema": output_schema,
                "options": cli_options(tool, spec["defs"]),
                "json_only": json_only_fields(tool, spec["defs"]),
                "fields": field_rows(tool, spec["defs"]),
                "error_codes": tuple(dict.fromkeys(e["code"] for e in tool["errors"])),
                "request_required": tool["envelope"] == "request" and has_required(tool["input"]),
                "request_model": request_model(tool),
                "result_model": f"{pascal(tool['name'])}Result" if output_schema is not None else None,
            }
        )

    config_schema = {"$schema": JSON_SCHEMA_DIALECT, "$comment": HEADER}
    config_schema.update({k: v for k, v in copy.deepcopy(spec["config"]).items() if k != "$schema"})
    jsonschema.Draft202012Validator.check_schema(config_schema)
    write(f"{PACKAGE}/schemas/config.json", dump_json(config_schema))

    models = out_root / PACKAGE / "models.py"
    models.parent.mkdir(parents=True, exist_ok=True)
    run_codegen(combined_models_schema(spec), models)
    written.append(models)
    config_models = out_root / PACKAGE / "config.py"
    run_codegen(config_schema, config_models)
    written.append(config_models)

    handler_models = sorted({m for t in tools for m in (t["request_model"], t["result_model"]) if m})
    context = {
        "header": HEADER,
        "tools": tools,
        "errors": spec["errors"],
        "index": spec["index"],
        "handler_models": handler_models,
    }
    write(f"{PACKAGE}/__init__.py", env.get_template("init.py.j2").render(context))
    write(f"{PACKAGE}/py.typed", "")  # PEP 561: installed copies are type-checked too
    write(f"{PACKAGE}/registry.py", env.get_template("registry.py.j2").render(context))
    write(f"{PACKAGE}/cli.py", env.get_template("cli.py.j2").render(context))
    write(f"{PACKAGE}/handlers.py", env.get_template("handlers.py.j2").render(context))
    write(f"{PACKAGE}/content.py", env.get_template("content.py.j2").render(context))
    write("docs/reference/tools.md", env.get_template("tools.md.j2").render(context))
    write("docs/reference/errors.md", env.get_template("errors.md.j2").render(context))
    write(
        "docs/reference/configuration.md",
        env.get_template("configuration.md.j2").render({**context, "sections": config_sections(config_schema)}),
    )
    return written


def config_sections(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """One table per top-level section, one row per setting. A setting that is itself a section
    (`export.pdf`) is not a row: its own settings are, under their dotted names
    (`export.pdf.cjkFont`), so every key a file may hold is documented (decision 1076)."""

    def target(prop: dict[str, Any]) -> dict[str, Any] | None:
        ref = prop.get("$ref")
        return schema["$defs"][REF.match(ref).group(1)] if ref else None  # type: ignore[union-attr]

    def rows(section: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
        out = []
        for name, sub in section["properties"].items():
            nested = target(sub)
            if nested is not None and nested.get("type") == "object":
                out.extend(rows(nested, f"{prefix}{name}."))
                continue
            kind = sub.get("type", "")
            if isinstance(kind, list):
                kind = " or ".join(kind)
            if "enum" in sub:
                kind = " / ".join(f"`{v}`" for v in sub["enum"])
            bounds = []
            for bound, sign in (
                ("minimum", ">="),
                ("exclusiveMinimum", ">"),
                ("maximum", "<="),
                ("minItems", "items >="),
            ):
                if bound in sub:
                    bounds.append(f"{sign} {sub[bound]}")
            out.append(
                {
                    "name": prefix + name,
                    "type": kind,
                    "default": json.dumps(sub.get("default"), ensure_ascii=False),
                    "bounds": ", ".join(bounds),
                    "description": sub.get("description", ""),
                }
            )
        return out

    sections = []
    for key, prop in schema["properties"].items():
        section = target(prop)
        assert section is not None, f"config section {key} is not a $ref"
        sections.append({"key": key, "rows": rows(section, "")})
    return sections


# --------------------------------------------------------------------------- entry point


OUTPUTS = ("generated", "docs/reference")


def check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        generated = generate(Path(tmp))
        expected = {p.relative_to(tmp).as_posix(): p for p in generated}
        actual = {
            p.relative_to(ROOT).as_posix(): p
            for folder in OUTPUTS
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        problems = []
        for rel in sorted(expected.keys() | actual.keys()):
            if rel not in actual:
                problems.append(f"missing: {rel}")
            elif rel not in expected:
                problems.append(f"not generated (stale or hand-made): {rel}")
            else:
                new = expected[rel].read_text(encoding="utf-8")
                old = actual[rel].read_text(encoding="utf-8")
                if new != old:
                    diff = difflib.unified_diff(
                        old.splitlines(), new.splitlines(), f"committed/{rel}", f"regenerated/{rel}", lineterm="", n=1
                    )
                    problems.append(f"differs: {rel}\n" + "\n".join(list(diff)[:20]))
    if problems:
        print("generated output does not match spec/ (run `make generate`):", file=sys.stderr)
        for problem in problems:
            print("  " + problem, file=sys.stderr)
        return 1
    print(f"generated output matches spec/ ({len(expected)} files)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if the committed output is stale")
    args = parser.parse_args()
    try:
        if args.check:
            return check()
        with tempfile.TemporaryDirectory() as tmp:
            files = generate(Path(tmp))
            for folder in OUTPUTS:
                target = ROOT / folder
                if target.exists():
                    shutil.rmtree(target)
            for path in files:
                rel = path.relative_to(tmp)
                (ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, ROOT / rel)
        print(f"wrote {len(files)} files")
        return 0
    except (SpecError, jsonschema.SchemaError) as exc:
        print(f"spec error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
