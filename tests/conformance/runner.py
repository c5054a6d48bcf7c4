"""Data-driven scenarios: YAML files in ``scenarios/``.

A scenario file::

    name: what it shows
    config: {knowledgeBase: {allowWrites: true}}   # optional, passed with --config
    engines: [sqlite]                                # optional: only on these storage engines
    files: {docs/a.md: "# A\\n"}                    # the workspace
    outside: {secret.md: "..."}                      # files next to (not inside) the workspace
    steps:
      - call: kb_list_files
        arguments: {request: {pathPrefix: docs}}
        expect:
          structured: {files: [{relativePath: docs/a.md}]}   # subset match
          save: {first: files.0.relativePath}                # for ${first} later
      - call: kb_list_files
        arguments: {request: {pathPrefix: ../x}}
        expect: {error: INVALID_PATH, messageExcludes: ["/tmp"]}
      - file: docs/a.md                                     # assert on the workspace
        equals: "# A\\n"                                   # (startsWith, sameAs or differsFrom: [paths])
      - pdf: docs/a.pdf                                     # what a PDF reader (poppler) reads back:
        text: [Title, "• item"]                             # these, in this order (white space folded)
        excludes: ["](", "file:"]                           # none of these
        pageSize: [419.5, 595.3]                            # points, to 0.5
        images: 1                                           # pictures drawn (pdfimages -list)
        ppi: [140, 151]                                     # each drawn at this resolution (x and y)
      - write: docs/a.md                                    # another program edits a file
        content: "# A changed\\n"
      - {rename: docs/a.md, to: docs/b.md}                  # ... renames one (folders made)
      - remove: docs/b.md                                   # ... deletes one
      - call: kb_status                                     # poll: repeat the call until
        until: 60                                           # `expect` holds (at most 60 s)
        expect: {structured: {indexing: {isRunning: false}}}

Binary files (images) are declared once as ``blobs`` and used by name::

    blobs: {chart: {image: {format: PNG, size: [3, 2]}}, page: {text: "<html>"}, big: {zeros: 1024}}
    files: {img/chart.png: {blob: chart}}
    steps:
      - call: kb_save_image
        arguments: {data: "${chart_b64}"}        # also ${chart_sha256}, ${chart_bytes}
      - {file: images/chart.png, blob: chart}    # byte-identical
      - {tree: images, equals: [images/chart.png]}   # every path under a folder ("" = all,
                                                     # the index folder left out): nothing left behind
      - call: kb_load_image
        arguments: {path: img/chart.png}
        expect:
          content: [{type: image, mimeType: image/png, data: {$base64Of: chart}}, {type: text}]
          json: {path: img/chart.png}            # the JSON of the last text block
          structured: null                       # content-only tools send no structuredContent

``{$image: {format: PNG, size: [w, h]}}`` matches base64 data that decodes to such an image.

Subset match: a dict matches when every expected key matches; a list matches
element-wise with the same length (``{$len: 3}`` checks only the length,
``{$contains: x}`` checks that some element matches x, ``{$regex: re}`` a
string); scalars compare equal. ``{$anchor: [logical, selfText, subtreeText]}``
expects the v2 anchor computed here, independently of the server, as
``logical~xxh64(selfText)~xxh64(subtreeText)`` (subtreeText defaults to
selfText); ``{$sha256: text}`` expects the SHA-256 hex of the UTF-8 text.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
import xxhash
import yaml

from .client import connect, write_files

SCENARIOS = Path(__file__).parent / "scenarios"


def load_scenarios() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(SCENARIOS.glob("*.yaml")):
        for i, scenario in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if scenario:
                out.append((f"{path.stem}[{i}]:{scenario.get('name', '')}", scenario))
    return out


def _xxh(text: str) -> str:
    return xxhash.xxh64_hexdigest(text.encode("utf-8"))


def make_blob(spec: dict[str, Any]) -> bytes:
    if "text" in spec:
        return str(spec["text"]).encode("utf-8")
    if "base64" in spec:
        return base64.b64decode(spec["base64"])
    if "zeros" in spec:
        return bytes(int(spec["zeros"]))
    from PIL import Image

    image = spec["image"]
    size = tuple(image.get("size", [3, 2]))
    frames = [Image.new("RGB", size, (30 * i % 256, 120, 200)) for i in range(int(image.get("frames", 1)))]
    out = io.BytesIO()
    if len(frames) > 1:
        frames[0].save(out, format=image["format"], save_all=True, append_images=frames[1:], duration=40)
    else:
        frames[0].save(out, format=image["format"])
    return out.getvalue() + bytes(int(image.get("pad", 0)))


def resolve_blobs(value: Any, blobs: dict[str, bytes]) -> Any:
    """``{blob: name}`` -> the bytes; ``{$base64Of: name}`` -> their base64 text."""
    if isinstance(value, dict) and set(value) == {"blob"}:
        return blobs[value["blob"]]
    if isinstance(value, dict) and set(value) == {"$base64Of"}:
        return base64.b64encode(blobs[value["$base64Of"]]).decode("ascii")
    if isinstance(value, dict):
        return {k: resolve_blobs(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_blobs(v, blobs) for v in value]
    return value


def tree(root: Path) -> list[str]:
    """Every file and folder under ``root`` (root-relative to the workspace), index folder left out."""
    workspace = root
    while workspace.name != "ws":
        workspace = workspace.parent
    if not root.exists():
        return []
    return sorted(
        p.relative_to(workspace).as_posix()
        for p in root.rglob("*")
        if ".local-vector-search-mcp" not in p.relative_to(workspace).parts
    )


def check_pdf(path: Path, step: dict[str, Any], where: str) -> None:
    """The ``pdf`` step: poppler's reading of the file (text, first page's size, pictures)."""
    if shutil.which("pdftotext") is None:
        pytest.skip("poppler-utils is not installed (tools/system-deps.sh)")

    def run(*args: str) -> str:
        return subprocess.run(args, capture_output=True, text=True, check=True, timeout=120).stdout

    text = " ".join(run("pdftotext", str(path), "-").split())
    pos = 0
    for needle in (" ".join(str(n).split()) for n in step.get("text", [])):
        found = text.find(needle, pos)
        assert found >= 0, f"{where}: {needle!r} missing or out of order after {text[pos : pos + 80]!r} in {text!r}"
        pos = found + len(needle)
    for needle in step.get("excludes", []):
        assert needle not in text, f"{where}: {needle!r} printed in {text!r}"
    if "pageSize" in step:
        size = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", run("pdfinfo", str(path)))
        assert size is not None, f"{where}: pdfinfo gave no page size"
        got = (float(size.group(1)), float(size.group(2)))
        want = step["pageSize"]
        assert abs(got[0] - want[0]) <= 0.5 and abs(got[1] - want[1]) <= 0.5, f"{where}: page {got}, expected {want}"
    if "images" in step:
        rows = [r.split() for r in run("pdfimages", "-list", str(path)).splitlines()[2:]]
        drawn = [r for r in rows if len(r) > 2 and r[2] == "image"]
        assert len(drawn) == step["images"], f"{where}: {len(drawn)} pictures drawn, expected {step['images']}"
    if "ppi" in step:
        low, high = step["ppi"]
        rows = [r.split() for r in run("pdfimages", "-list", str(path)).splitlines()[2:]]
        ppis = [(int(r[12]), int(r[13])) for r in rows if len(r) > 13 and r[2] == "image"]
        assert ppis and all(low <= x <= high and low <= y <= high for x, y in ppis), f"{where}: ppi {ppis}"


def block_dict(block: Any) -> dict[str, Any]:
    data: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def matches(expected: Any, actual: Any, where: str = "$") -> None:
    if isinstance(expected, dict) and "$image" in expected:
        from PIL import Image

        assert isinstance(actual, str), f"{where}: expected base64 image data, got {actual!r}"
        with Image.open(io.BytesIO(base64.b64decode(actual))) as image:
            want = expected["$image"]
            assert image.format == want["format"], f"{where}: image format {image.format}, expected {want['format']}"
            if "size" in want:
                assert list(image.size) == list(want["size"]), f"{where}: image size {image.size}"
        return
    if isinstance(expected, dict) and "$anchor" in expected:
        logical, own, *rest = expected["$anchor"]
        want = f"{logical}~{_xxh(own)}~{_xxh(rest[0] if rest else own)}"
        assert actual == want, f"{where}: expected anchor {want!r} (of {expected['$anchor']!r}), got {actual!r}"
        return
    if isinstance(expected, dict) and "$sha256" in expected:
        want = hashlib.sha256(expected["$sha256"].encode("utf-8")).hexdigest()
        assert actual == want, f"{where}: expected sha256 {want}, got {actual!r}"
        return
    if isinstance(expected, dict) and "$len" in expected:
        assert isinstance(actual, list | str) and len(actual) == expected["$len"], (
            f"{where}: expected length {expected['$len']}, got {actual!r}"
        )
        return
    if isinstance(expected, dict) and "$contains" in expected:
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        for item in actual:
            try:
                matches(expected["$contains"], item, where)
                return
            except AssertionError:
                continue
        raise AssertionError(f"{where}: no element matches {expected['$contains']!r} in {actual!r}")
    if isinstance(expected, dict) and "$regex" in expected:
        assert isinstance(actual, str) and re.search(expected["$regex"], actual), (
            f"{where}: {actual!r} does not match /{expected['$regex']}/"
        )
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: missing key {key!r} in {sorted(actual)}"
            matches(value, actual[key], f"{where}.{key}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(expected) == len(actual), f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            matches(e, a, f"{where}[{i}]")
        return
    assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"


def lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def substitute(value: Any, saved: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = re.fullmatch(r"\$\{(\w+)\}", value)
        if whole:
            return saved[whole.group(1)]
        return re.sub(r"\$\{(\w+)\}", lambda m: str(saved[m.group(1)]), value)
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    return value


async def run_scenario(
    command: list[str],
    scenario: dict[str, Any],
    tmp: Path,
    storage: dict[str, Any] | None = None,
    extra_env: dict[str, str] | None = None,
) -> None:
    """``storage`` merges into the scenario's ``storage`` config section (the engine under
    test); ``extra_env`` adds server environment variables (the database URL)."""
    workspace = tmp / "ws"
    workspace.mkdir()
    blobs = {name: make_blob(spec) for name, spec in (scenario.get("blobs") or {}).items()}
    write_files(workspace, resolve_blobs(scenario.get("files") or {}, blobs))
    write_files(tmp, scenario.get("outside") or {})
    for link, target in (scenario.get("symlinks") or {}).items():
        (workspace / link).parent.mkdir(parents=True, exist_ok=True)
        (workspace / link).symlink_to((tmp / target) if not target.startswith("/") else Path(target))
    saved: dict[str, Any] = {}
    for name, data in blobs.items():
        saved[f"{name}_b64"] = base64.b64encode(data).decode("ascii")
        saved[f"{name}_sha256"] = hashlib.sha256(data).hexdigest()
        saved[f"{name}_bytes"] = len(data)
    config = scenario.get("config")
    if storage:
        config = {**(config or {}), "storage": {**((config or {}).get("storage") or {}), **storage}}
    async with connect(command, workspace, config, scenario.get("args"), extra_env) as conn:
        for n, step in enumerate(scenario["steps"]):
            where = f"step {n}"
            if "write" in step:  # an edit made by another program
                write_files(workspace, {substitute(step["write"], saved): substitute(step["content"], saved)})
                continue
            if "remove" in step:  # another program deletes a file
                (workspace / substitute(step["remove"], saved)).unlink()
                continue
            if "rename" in step:  # another program renames a file (one rename, as a file manager does)
                old_path, new_path = (workspace / substitute(step[key], saved) for key in ("rename", "to"))
                new_path.parent.mkdir(parents=True, exist_ok=True)
                old_path.rename(new_path)
                continue
            if "file" in step:
                path = workspace / substitute(step["file"], saved)
                if step.get("exists") is False:
                    assert not path.exists(), f"{where}: {path.name} should not exist"
                    continue
                data = path.read_bytes()
                if "equals" in step:
                    assert data == substitute(step["equals"], saved).encode("utf-8"), f"{where}: {data!r}"
                if "startsWith" in step:
                    want = substitute(step["startsWith"], saved).encode("utf-8")
                    assert data.startswith(want), f"{where}: {data[:40]!r}"
                if "blob" in step:
                    assert data == blobs[step["blob"]], f"{where}: {path.name} differs from blob {step['blob']}"
                if "sameAs" in step:
                    other = workspace / substitute(step["sameAs"], saved)
                    assert data == other.read_bytes(), f"{where}: {path.name} differs from {other.name}"
                for name in step.get("differsFrom", []):
                    other = workspace / substitute(name, saved)
                    assert data != other.read_bytes(), f"{where}: {path.name} is the same as {other.name}"
                continue
            if "pdf" in step:
                check_pdf(workspace / substitute(step["pdf"], saved), step, where)
                continue
            if "tree" in step:
                found = tree(workspace / step["tree"] if step["tree"] else workspace)
                want = substitute(step["equals"], saved)
                assert found == want, f"{where}: expected {want}, found {found}"
                continue
            expect = resolve_blobs(substitute(step.get("expect", {}), saved), blobs)
            deadline = anyio.current_time() + float(step.get("until", 0))
            while True:
                result = await conn.call(
                    step["call"], resolve_blobs(substitute(step.get("arguments", {}), saved), blobs)
                )
                if not step.get("until") or anyio.current_time() > deadline:
                    break
                try:
                    if "error" in expect:
                        assert result.is_error and result.error["code"] == expect["error"]
                    else:
                        assert not result.is_error
                        matches(expect.get("structured", {}), result.structured)
                    break
                except AssertionError:
                    await anyio.sleep(0.2)
            if "error" in expect:
                err = result.error
                assert err["code"] == expect["error"], f"{where}: expected {expect['error']}, got {err}"
                for text in expect.get("messageContains", []):
                    assert text in err["message"], f"{where}: {text!r} not in {err['message']!r}"
                for text in expect.get("messageExcludes", []):
                    assert text not in err["message"], f"{where}: {text!r} leaked in {err['message']!r}"
                continue
            assert not result.is_error, f"{where}: unexpected error {result.texts}"
            if "structured" in expect:
                matches(expect["structured"], result.structured, where)
            if "content" in expect:
                matches(expect["content"], [block_dict(b) for b in result.blocks], f"{where}.content")
            wants_json = "json" in expect or result.structured is None
            payload = json.loads(result.texts[-1]) if wants_json and result.texts else None
            if "json" in expect:
                matches(expect["json"], payload, f"{where}.json")
            for name, dotted in (expect.get("save") or {}).items():
                saved[name] = lookup(result.structured if result.structured is not None else payload, dotted)
            for text in expect.get("excludes", []):
                assert all(text not in t for t in result.texts), f"{where}: {text!r} appeared in the result"
