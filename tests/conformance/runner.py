"""Data-driven scenarios: YAML files in ``scenarios/``.

A scenario file::

    name: what it shows
    config: {knowledgeBase: {allowWrites: true}}   # optional, passed with --config
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
        equals: "# A\\n"                                   # (or startsWith: "%PDF-")
      - listing: docs                                       # exactly these names in docs/
        names: [a.md]
      - write: docs/a.md                                    # another program edits a file
        content: "# A changed\\n"
      - call: kb_status                                     # poll: repeat the call until
        until: 60                                           # `expect` holds (at most 60 s)
        expect: {structured: {indexing: {isRunning: false}}}

Subset match: a dict matches when every expected key matches; a list matches
element-wise with the same length (``{$len: 3}`` checks only the length,
``{$contains: x}`` checks that some element matches x, ``{$regex: re}`` a
string); scalars compare equal. ``{$anchor: [logical, selfText, subtreeText]}``
expects the v2 anchor computed here, independently of the server, as
``logical~xxh64(selfText)~xxh64(subtreeText)`` (subtreeText defaults to
selfText); ``{$sha256: text}`` expects the SHA-256 hex of the UTF-8 text.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import anyio
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


def matches(expected: Any, actual: Any, where: str = "$") -> None:
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


async def run_scenario(command: list[str], scenario: dict[str, Any], tmp: Path) -> None:
    workspace = tmp / "ws"
    workspace.mkdir()
    write_files(workspace, scenario.get("files") or {})
    write_files(tmp, scenario.get("outside") or {})
    for link, target in (scenario.get("symlinks") or {}).items():
        (workspace / link).parent.mkdir(parents=True, exist_ok=True)
        (workspace / link).symlink_to((tmp / target) if not target.startswith("/") else Path(target))
    saved: dict[str, Any] = {}
    async with connect(command, workspace, scenario.get("config"), scenario.get("args")) as conn:
        for n, step in enumerate(scenario["steps"]):
            where = f"step {n}"
            if "write" in step:  # an edit made by another program
                write_files(workspace, {substitute(step["write"], saved): substitute(step["content"], saved)})
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
                continue
            if "listing" in step:  # the exact names in a folder: nothing left behind
                folder = workspace / substitute(step["listing"], saved) if step["listing"] else workspace
                names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
                assert names == sorted(step["names"]), f"{where}: {folder.name}/ holds {names}"
                continue
            expect = substitute(step.get("expect", {}), saved)
            deadline = anyio.current_time() + float(step.get("until", 0))
            while True:
                result = await conn.call(step["call"], substitute(step.get("arguments", {}), saved))
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
            for name, dotted in (expect.get("save") or {}).items():
                saved[name] = lookup(result.structured, dotted)
            for text in expect.get("excludes", []):
                assert all(text not in t for t in result.texts), f"{where}: {text!r} appeared in the result"
