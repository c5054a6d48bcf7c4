"""The editing promises swept over real Markdown (session 35, decisions 1091-1093).

The earlier sweeps (H40, H55, session 34's element edits) drove generated documents; this one
takes real pages (the shared corpora, the blind sets' cached docs) and, through the handlers an
MCP call reaches (``dispatch.invoke``: kb_read, kb_outline, kb_patch, kb_edit_table), edits every
element a page has and checks what the contract promises:

1. ``replace`` of an element with its own source (a list item's first own segment; also
   ``replace_subtree`` of a list item and ``replace_section`` of a heading with their ranges)
   leaves the file byte-identical, but for ``replace_section``'s documented blank line before the
   next heading (upstream-contract.md §5.2);
2. ``insert_after`` and ``insert_before`` of a paragraph (a sibling item beside a list item) and a
   ``delete`` of what was inserted leave the file as it was: byte-identical beside a list item, and
   with the blank line(s) the insertion put at the element's end or start otherwise (a ``delete``
   keeps the blank lines around its span, §5.2 and decisions 405, 1066);
3. a stale anchor (its self hash, or for a Subtree-scoped operation its subtree hash, changed) is a
   CONFLICT and the file stays byte-identical;
4. every GFM table: an update of every cell to its own source, a rename and a realignment to what
   they are, a row inserted then deleted (at the end and at the top), a column inserted then
   deleted: byte-identical (a column round trip re-renders the table's lines, §6: only their
   bytes may change, and nothing outside the table);
5. after every edit that wrote, the elements it did not touch still read by the anchors read
   before it (their neighbours always, a sample of the rest).

Every divergence is recorded with the file, the anchor, the check and the server's message;
nothing is asserted here (``tests/handlers/test_real_corpus_edits.py`` asserts a small sample,
``bench/sweep_real_edits.py`` runs hundreds of files a corpus).
"""

from __future__ import annotations

import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.markdown import ElementKind, parse_document, table_source
from local_vector_search_mcp.markdown.table_edit import escape_cell_text
from local_vector_search_mcp.markdown.tables import renders_alike
from local_vector_search_mcp.workspace import Workspace

MARKER = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])(?=[ \t]|$)")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SEED_TEXT = "Kq inserted paragraph {token}."


@dataclass
class Divergence:
    check: str
    kind: str
    path: str
    pointer: str
    detail: str
    snippet: str = ""

    def line(self) -> str:
        snippet = self.snippet if len(self.snippet) <= 300 else self.snippet[:300] + "..."
        return f"[{self.check}] {self.kind} {self.path} {self.pointer}: {self.detail}\n    {snippet!r}"


@dataclass
class Tally:
    files: int = 0
    elements: Counter[str] = field(default_factory=Counter)
    tables: int = 0
    edits: Counter[str] = field(default_factory=Counter)
    reads: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    divergences: list[Divergence] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.files += other.files
        self.elements.update(other.elements)
        self.tables += other.tables
        self.edits.update(other.edits)
        self.reads += other.reads
        self.skipped.update(other.skipped)
        self.divergences.extend(other.divergences)

    def summary(self) -> dict[str, Any]:
        by_check = Counter(f"{d.check}:{d.kind}" for d in self.divergences)
        return {
            "files": self.files,
            "elements": sum(self.elements.values()),
            "elementsByKind": dict(sorted(self.elements.items())),
            "tables": self.tables,
            "edits": dict(sorted(self.edits.items())),
            "reads": self.reads,
            "skipped": dict(sorted(self.skipped.items())),
            "divergences": len(self.divergences),
            "divergencesByCheck": dict(sorted(by_check.items())),
        }


def forge(digest: str) -> str:
    """``digest`` with its first hex digit changed: a hash no element of the page has."""
    return format(int(digest[0], 16) ^ 1, "x") + digest[1:]


def split_anchor(anchor: str) -> tuple[str, str, str]:
    logical, self_hash, subtree_hash = anchor.split("~")
    return logical, self_hash, subtree_hash


def sample_files(folder: Path, count: int, seed: int) -> list[Path]:
    files = sorted(p for p in folder.rglob("*.md") if p.is_file() and ".local-vector-search-mcp" not in p.parts)
    rng = random.Random(seed)
    return sorted(rng.sample(files, min(count, len(files))))


def copy_sample(files: list[Path], source: Path, root: Path, *, crlf: bool = False, bom: bool = False) -> list[str]:
    """Copy ``files`` (under ``source``) into ``root``; the root-relative names. ``crlf``: every line
    break written as CRLF; ``bom``: a UTF-8 BOM put in front (the same pages as Windows editors save them)."""
    names = []
    for path in files:
        rel = path.relative_to(source).as_posix()
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if crlf or bom:
            raw = path.read_bytes()
            if crlf:
                raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            target.write_bytes((b"\xef\xbb\xbf" if bom and not raw.startswith(b"\xef\xbb\xbf") else b"") + raw)
        else:
            shutil.copyfile(path, target)
        names.append(rel)
    return names


class Sweep:
    """Edits one workspace's files element by element and records what breaks a promise."""

    def __init__(self, ws: Workspace, *, seed: int = 35, others: int = 6, max_cells: int = 60) -> None:
        self.ws = ws
        self.root = ws.root
        self.rng = random.Random(seed)
        self.others = others
        self.max_cells = max_cells
        self.tokens = 0
        self.tally = Tally()
        self.page: list[dict[str, Any]] = []

    # plumbing ------------------------------------------------------------------------
    def call(self, tool: str, arguments: dict[str, Any], *, flat: bool = False) -> Any:
        return invoke(self.ws, tool, arguments if flat else {"request": arguments})

    def patch(self, rel: str, *ops: dict[str, Any]) -> Any:
        self.tally.edits["kb_patch"] += 1
        return self.call("kb_patch", {"path": rel, "operations": list(ops)})

    def table(self, rel: str, pointer: str, action: str, **fields: Any) -> Any:
        self.tally.edits[f"table:{action}"] += 1
        return self.call("kb_edit_table", {"path": rel, "pointer": pointer, "action": action, **fields}, flat=True)

    def token(self) -> str:
        self.tokens += 1
        n, letters = self.tokens, []
        for _ in range(5):
            n, r = divmod(n, 19)
            letters.append("bcdfghjklmnpqrtvwxz"[r])
        return "kq" + "".join(letters)

    def disk(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def restore(self, rel: str, raw: bytes) -> None:
        if self.disk(rel) != raw:
            (self.root / rel).write_bytes(raw)

    def diverge(self, check: str, kind: str, rel: str, pointer: str, detail: str, snippet: str = "") -> None:
        self.tally.divergences.append(Divergence(check, kind, rel, pointer, detail, snippet))

    def read_all(self, rel: str) -> list[dict[str, Any]]:
        elements: list[dict[str, Any]] = []
        pointer: str | None = None
        while True:
            request: dict[str, Any] = {"path": rel, "maxElements": 100, "maxBytes": 100_000}
            if pointer is not None:
                request["pointer"] = pointer
            page = self.call("kb_read", request)
            elements.extend(page["elements"])
            pointer = page["nextPointer"]
            if pointer is None:
                return elements

    def outline_pointers(self, rel: str) -> list[str]:
        out: list[str] = []

        def walk(nodes: list[dict[str, Any]]) -> None:
            for node in nodes:
                out.append(node["pointer"])
                walk(node["children"])

        pointer: str | None = None
        while True:
            request: dict[str, Any] = {"path": rel}
            if pointer is not None:
                request["pointer"] = pointer
            page = self.call("kb_outline", request)
            walk(page["headings"])
            pointer = page.get("nextPointer")
            if pointer is None:
                return out

    # the sweep -------------------------------------------------------------------------
    def sweep_file(self, rel: str) -> None:
        original = self.disk(rel)
        try:
            elements = self.read_all(rel)
            headings = self.outline_pointers(rel)
        except KbError as exc:
            self.diverge("read", "document", rel, "document", f"{exc.code}: {exc.message}")
            return
        self.tally.files += 1
        self.page = elements
        read_headings = [e["pointer"] for e in elements if e["kind"] == "heading"]
        if headings != read_headings:
            self.diverge("outline", "heading", rel, "document", f"outline {headings[:5]} != read {read_headings[:5]}")
        doc = parse_document(original)
        for i, element in enumerate(elements):
            self.tally.elements[element["kind"]] += 1
            try:
                self.sweep_element(rel, original, doc, elements, i)
            except KbError as exc:  # an unexpected refusal of a read the sweep relied on
                self.diverge("unexpected", element["kind"], rel, element["pointer"], f"{exc.code}: {exc.message}")
            self.restore(rel, original)
        for i, element in enumerate(elements):
            if element["kind"] == "table":
                self.tally.tables += 1
                try:
                    self.sweep_table(rel, original, elements, i)
                except KbError as exc:
                    self.diverge("unexpected", "table", rel, element["pointer"], f"{exc.code}: {exc.message}")
                self.restore(rel, original)

    def same_bytes(self, check: str, kind: str, rel: str, pointer: str, expected: bytes, what: str) -> bool:
        now = self.disk(rel)
        if now == expected:
            return True
        self.diverge(check, kind, rel, pointer, f"{what}: bytes differ", first_difference(expected, now))
        return False

    def refused(self, check: str, kind: str, rel: str, pointer: str, exc: KbError, what: str, snippet: str) -> None:
        self.diverge(check, kind, rel, pointer, f"{what} refused: {exc.code}: {exc.message}", snippet)

    def sweep_element(self, rel: str, original: bytes, doc: Any, elements: list[dict[str, Any]], i: int) -> None:
        element = elements[i]
        kind, anchor = element["kind"], element["pointer"]
        logical, self_hash, subtree_hash = split_anchor(anchor)
        model = doc.get(logical)
        if model is None or model.anchor != anchor:
            self.diverge("model", kind, rel, anchor, "kb_read's anchor is not the parsed element's")
            return
        text = doc.text
        # 1. replace with its own source
        if kind == "list_item":
            own = text[model.segments[0][0] : model.segments[0][1]] if model.segments else ""
            self.identity(rel, original, kind, anchor, {"kind": "replace", "pointer": anchor, "markdown": own})
            if subtree_hash != self_hash:
                subtree = text[model.start : model.end]
                self.identity(
                    rel, original, kind, anchor, {"kind": "replace_subtree", "pointer": anchor, "markdown": subtree}
                )
        else:
            self.identity(
                rel, original, kind, anchor, {"kind": "replace", "pointer": anchor, "markdown": element["text"]}
            )
        if kind == "heading":
            self.section_identity(rel, original, doc, model, anchor)
        # 2. insert_after then delete
        for where in ("insert_after", "insert_before"):
            self.insert_then_delete(rel, original, doc, model, elements, i, where)
            self.restore(rel, original)
        # 3. stale anchors
        self.stale(rel, original, kind, anchor, element["text"], model, doc)

    def identity(self, rel: str, original: bytes, kind: str, anchor: str, op: dict[str, Any]) -> None:
        check = f"identity:{op['kind']}"
        try:
            result = self.patch(rel, op)
        except KbError as exc:
            self.refused(check, kind, rel, anchor, exc, op["kind"], op["markdown"])
            return
        if self.same_bytes(check, kind, rel, anchor, original, op["kind"]) and result["sourceHash"] != sha(original):
            self.diverge(check, kind, rel, anchor, "sourceHash of an unchanged file differs")

    def section_identity(self, rel: str, original: bytes, doc: Any, model: Any, anchor: str) -> None:
        text = doc.text
        end = model.section_end if model.section_end is not None else len(text)
        md = text[model.start : end]
        expected_text = text
        if end < len(text):  # §5.2: a section that does not reach the end ends with one blank line
            eol = doc.eol
            fixed = md if md.endswith(eol + eol) else md + eol if md.endswith(eol) else md + eol + eol
            expected_text = text[: model.start] + fixed + text[end:]
        expected = encode(doc, expected_text)
        check = "identity:replace_section"
        try:
            self.patch(rel, {"kind": "replace_section", "pointer": anchor, "markdown": md})
        except KbError as exc:
            self.refused(check, "heading", rel, anchor, exc, "replace_section", md)
            return
        self.same_bytes(check, "heading", rel, anchor, expected, "replace_section")
        self.restore(rel, original)

    def fragment_after(self, model: Any, text: str, token: str) -> str | None:
        if model.kind is not ElementKind.LIST_ITEM:
            return SEED_TEXT.format(token=token)
        line = text[model.start : text.find("\n", model.start) if "\n" in text[model.start :] else len(text)]
        match = MARKER.match(line)
        if match is None:
            return None
        return f"{match.group(1)}{match.group(2)} Kq inserted item {token}."

    def insert_then_delete(
        self, rel: str, original: bytes, doc: Any, model: Any, elements: list[dict[str, Any]], i: int, where: str
    ) -> None:
        kind, anchor = elements[i]["kind"], elements[i]["pointer"]
        token = self.token()
        fragment = self.fragment_after(model, doc.text, token)
        if fragment is None:
            self.tally.skipped[f"{where}: no list marker on the item's line"] += 1
            return
        if where == "insert_before" and kind == "front_matter":
            self.tally.skipped["insert_before: front matter (refused, §5.2 / planning)"] += 1
            return
        try:
            self.patch(rel, {"kind": where, "pointer": anchor, "markdown": fragment})
        except KbError as exc:
            self.refused(where, kind, rel, anchor, exc, where, snippet_around(doc.text, model))
            return
        self.untouched(rel, elements, {i}, f"after {where}")
        inserted = [e for e in self.read_all(rel) if token in e["text"]]
        if len(inserted) != 1:
            self.diverge(where, kind, rel, anchor, f"the inserted element reads as {len(inserted)} elements")
            return
        new = inserted[0]
        want = "list_item" if model.kind is ElementKind.LIST_ITEM else "paragraph"
        if new["kind"] != want or new["text"].strip() != fragment.strip():
            self.diverge(where, kind, rel, anchor, f"inserted reads as {new['kind']} {new['text']!r}")
        try:
            self.patch(rel, {"kind": "delete", "pointer": new["pointer"]})
        except KbError as exc:
            self.refused(f"{where}+delete", kind, rel, anchor, exc, "delete", snippet_around(doc.text, model))
            return
        text, eol = doc.text, doc.eol
        if model.kind is ElementKind.LIST_ITEM:
            # an item ending the file without a line break: insert_after put one after it, and a
            # delete takes the line break after its span only (§4.4's deletion range), so it stays
            at_eof = where == "insert_after" and model.end == len(text)
            expected = encode(doc, text + eol) if at_eof else original
        elif where == "insert_after":
            # §5.2: insert_after put eol eol at the element's end, and one more when text follows on
            # the next line (decision 405); delete keeps the blank lines around its span (1066)
            blank = eol * (3 if glued_after(text, model.end) else 2)
            expected = encode(doc, text[: model.end] + blank + text[model.end :])
        else:  # insert_before: the fragment and eol eol, after one more eol when text is right above (405)
            blank = eol * (3 if glued_before(text, model.start) else 2)
            expected = encode(doc, text[: model.start] + blank + text[model.start :])
        if self.same_bytes(f"{where}+delete", kind, rel, anchor, expected, f"{where} + delete"):
            self.untouched(rel, elements, {i}, f"after {where} + delete")

    def untouched(self, rel: str, elements: list[dict[str, Any]], touched: set[int], when: str) -> None:
        """Step 5: elements no edit touched still read by the anchors read before."""
        if not elements:
            return
        near = set()
        for t in touched:
            near.update(range(max(0, t - 2), min(len(elements), t + 3)))
        rest = [j for j in range(len(elements)) if j not in near]
        near.update(self.rng.sample(rest, min(self.others, len(rest))))
        for j in sorted(near - touched):
            element = elements[j]
            self.tally.reads += 1
            try:
                page = self.call("kb_read", {"path": rel, "pointer": element["pointer"], "maxElements": 1})
            except KbError as exc:
                # §3.4 step 3 (decision 65): a twin whose ordinal an insertion shifted matches several
                # elements: documented, counted apart from the divergences
                if exc.code == "CONFLICT" and ("is ambiguous" in exc.message or self.twins(rel, element) > 1):
                    self.tally.skipped["untouched: twin after a shift, ambiguous or reserved (contract §3.4)"] += 1
                    continue
                self.diverge(
                    "untouched",
                    element["kind"],
                    rel,
                    element["pointer"],
                    f"{when} of {elements[min(touched)]['pointer']}: {exc.code}: {exc.message}",
                    element["text"],
                )
                continue
            got = page["elements"][0] if page["elements"] else None
            if got is None or got["text"] != element["text"] or got["kind"] != element["kind"]:
                self.diverge(
                    "untouched",
                    element["kind"],
                    rel,
                    element["pointer"],
                    f"{when}: reads as {None if got is None else (got['kind'], got['text'][:80])}",
                    element["text"],
                )

    def twins(self, rel: str, element: dict[str, Any]) -> int:
        """How many elements of the original page have this element's kind and text."""
        return sum(1 for e in self.page if e["kind"] == element["kind"] and e["text"] == element["text"])

    def stale(self, rel: str, original: bytes, kind: str, anchor: str, text: str, model: Any, doc: Any) -> None:
        logical, self_hash, subtree_hash = split_anchor(anchor)
        forged_self = f"{logical}~{forge(self_hash)}~{subtree_hash}"
        op: dict[str, Any]
        if kind == "list_item":
            own = doc.text[model.segments[0][0] : model.segments[0][1]] if model.segments else ""
            op = {"kind": "replace", "pointer": forged_self, "markdown": own}
        else:
            op = {"kind": "replace", "pointer": forged_self, "markdown": text}
        self.expect_conflict(rel, original, kind, anchor, op, "stale self hash")
        forged_subtree = f"{logical}~{self_hash}~{forge(subtree_hash)}"
        if kind == "heading":
            op = {"kind": "delete_section", "pointer": forged_subtree}
            self.expect_conflict(rel, original, kind, anchor, op, "stale subtree hash")
        elif kind == "list_item":
            op = {"kind": "delete", "pointer": forged_subtree}
            self.expect_conflict(rel, original, kind, anchor, op, "stale subtree hash")

    def expect_conflict(self, rel: str, original: bytes, kind: str, anchor: str, op: dict[str, Any], what: str) -> None:
        try:
            self.patch(rel, op)
        except KbError as exc:
            if exc.code != "CONFLICT":
                self.diverge("stale", kind, rel, anchor, f"{what}: {exc.code} instead of CONFLICT: {exc.message}")
        else:
            self.diverge("stale", kind, rel, anchor, f"{what}: accepted")
        self.same_bytes("stale", kind, rel, anchor, original, what)

    # tables ----------------------------------------------------------------------------
    def sweep_table(self, rel: str, original: bytes, elements: list[dict[str, Any]], i: int) -> None:
        anchor = elements[i]["pointer"]
        page = self.call("kb_read", {"path": rel, "pointer": anchor, "maxElements": 1})
        projection = page["table"]
        doc = parse_document(original)
        model = doc.get(split_anchor(anchor)[0])
        source = table_source(doc, model)
        logical, self_hash, subtree_hash = split_anchor(anchor)
        # stale anchor
        stale = f"{logical}~{forge(self_hash)}~{subtree_hash}"
        try:
            self.table(rel, stale, "rename_column", columnIndex=0, newName="Kq")
            self.diverge("table_stale", "table", rel, anchor, "a stale table anchor was accepted")
        except KbError as exc:
            if exc.code != "CONFLICT":
                self.diverge("table_stale", "table", rel, anchor, f"{exc.code} instead of CONFLICT: {exc.message}")
        self.same_bytes("table_stale", "table", rel, anchor, original, "stale anchor")
        self.restore(rel, original)
        if not projection["editable"]:
            self.tally.skipped["table not editable (extra cells)"] += 1
            self.expect_table_refusal(rel, original, anchor)
            return
        columns, rows = projection["columns"], projection["rows"]
        # identity updates: every cell to its own source (markdown), a sample per batch
        updates = []
        for r, row in enumerate(source.rows):
            for c, cell in enumerate(row.cells[: len(columns)]):
                if CONTROL.search(cell.raw):  # §6: a value with a control character (a tab) is refused
                    self.tally.skipped["table cell holding a control character (contract §6)"] += 1
                    continue
                updates.append({"rowIndex": r, "columnIndex": c, "value": cell.raw, "valueFormat": "markdown"})
        self.rng.shuffle(updates)
        updates = updates[: self.max_cells]
        if updates:
            self.table_step(rel, original, anchor, "update_cells", {"updates": updates}, original, elements, i)
            plain = [
                {
                    "rowIndex": u["rowIndex"],
                    "columnIndex": u["columnIndex"],
                    "value": rows[u["rowIndex"]]["cells"][u["columnIndex"]],
                }
                for u in updates
                if u["value"] == rows[u["rowIndex"]]["cells"][u["columnIndex"]] and "|" not in u["value"]
            ]
            if plain:
                self.table_step(
                    rel, original, anchor, "update_cells", {"updates": plain}, original, elements, i, "text"
                )
        for c, column in enumerate(columns):
            # a name is plain text (§6): the promise holds where the header shows what it is written as
            header = source.header.cells[c].raw if c < len(source.header.cells) else ""
            if column["name"] and not renders_alike(header, escape_cell_text(column["name"])):
                self.tally.skipped["rename: a header with markup (plain text would drop it)"] += 1
            elif column["name"]:
                self.table_step(
                    rel,
                    original,
                    anchor,
                    "rename_column",
                    {"columnIndex": c, "newName": column["name"]},
                    original,
                    elements,
                    i,
                )
            self.table_step(
                rel,
                original,
                anchor,
                "set_alignment",
                {"columnIndex": c, "alignment": column["alignment"]},
                original,
                elements,
                i,
            )
        width = len(columns)
        values = [f"kq{c}" for c in range(width)]
        self.round_trip(
            rel, original, anchor, elements, i, "insert_row", {"values": values}, "delete_row", {"rowIndex": len(rows)}
        )
        if rows:
            self.round_trip(
                rel,
                original,
                anchor,
                elements,
                i,
                "insert_row",
                {"values": values, "beforeRowIndex": 0},
                "delete_row",
                {"rowIndex": 0},
            )
        self.round_trip(
            rel,
            original,
            anchor,
            elements,
            i,
            "insert_column",
            {"name": "Kqcol"},
            "delete_column",
            {"columnIndex": width},
            columns=True,
        )
        self.round_trip(
            rel,
            original,
            anchor,
            elements,
            i,
            "insert_column",
            {"name": "Kqcol", "beforeColumnIndex": 0},
            "delete_column",
            {"columnIndex": 0},
            columns=True,
        )

    def expect_table_refusal(self, rel: str, original: bytes, anchor: str) -> None:
        try:
            self.table(rel, anchor, "insert_row", values=["x"])
            self.diverge("table_refusal", "table", rel, anchor, "a table with extra cells took an edit")
        except KbError:
            pass
        self.same_bytes("table_refusal", "table", rel, anchor, original, "refused edit")
        self.restore(rel, original)

    def table_step(
        self,
        rel: str,
        original: bytes,
        anchor: str,
        action: str,
        fields: dict[str, Any],
        expected: bytes,
        elements: list[dict[str, Any]],
        i: int,
        label: str = "",
    ) -> None:
        check = f"table:{action}{':' + label if label else ''}"
        try:
            result = self.table(rel, anchor, action, **fields)
        except KbError as exc:
            self.diverge(check, "table", rel, anchor, f"refused: {exc.code}: {exc.message}", str(fields)[:300])
            return
        if self.same_bytes(check, "table", rel, anchor, expected, action) and result["pointer"] != anchor:
            self.diverge(check, "table", rel, anchor, f"an unchanged table's pointer changed to {result['pointer']}")
        self.restore(rel, original)

    def round_trip(
        self,
        rel: str,
        original: bytes,
        anchor: str,
        elements: list[dict[str, Any]],
        i: int,
        first: str,
        first_fields: dict[str, Any],
        second: str,
        second_fields: dict[str, Any],
        *,
        columns: bool = False,
    ) -> None:
        check = f"table:{first}+{second}"
        try:
            result = self.table(rel, anchor, first, **first_fields)
        except KbError as exc:
            self.diverge(check, "table", rel, anchor, f"{first} refused: {exc.code}: {exc.message}")
            return
        self.untouched(rel, elements, {i}, f"after {first}")
        try:
            self.table(rel, result["pointer"], second, **second_fields)
        except KbError as exc:
            self.diverge(check, "table", rel, anchor, f"{second} refused: {exc.code}: {exc.message}")
            self.restore(rel, original)
            return
        now = self.disk(rel)
        if now != original:
            doc = parse_document(original)
            model = doc.get(split_anchor(anchor)[0])
            lo, hi = len(encode(doc, doc.text[: model.start])), len(encode(doc, doc.text[: model.end]))
            outside = now[:lo] == original[:lo] and now.endswith(original[hi:])
            detail = "table lines re-rendered only" if outside else "bytes outside the table changed"
            self.diverge(
                f"{check}{':rerendered' if outside and columns else ''}",
                "table",
                rel,
                anchor,
                detail,
                first_difference(original, now),
            )
        else:
            self.untouched(rel, elements, {i}, f"after {first} + {second}")
        self.restore(rel, original)


def sha(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest()


def encode(doc: Any, text: str) -> bytes:
    return (b"\xef\xbb\xbf" if doc.bom else b"") + text.encode("utf-8")


def glued_after(text: str, end: int) -> bool:
    """Whether the line after the one ending at ``end`` holds text (no blank line between)."""
    after = end + 2 if text.startswith("\r\n", end) else end + 1 if text.startswith(("\n", "\r"), end) else end
    if after == end or after >= len(text):
        return False
    stop = min((i for i in (text.find("\n", after), text.find("\r", after)) if i >= 0), default=len(text))
    return bool(text[after:stop].strip(" \t"))


def glued_before(text: str, start: int) -> bool:
    """Whether ``start`` opens a line whose line above holds text (no blank line between)."""
    if start == 0 or text[start - 1] not in "\r\n":
        return False
    stop = start - 2 if text.endswith("\r\n", 0, start) else start - 1
    lo = max(text.rfind("\n", 0, stop), text.rfind("\r", 0, stop)) + 1
    return bool(text[lo:stop].strip(" \t"))


def snippet_around(text: str, model: Any) -> str:
    lo = text.rfind("\n", 0, max(0, model.start - 1))
    lo = text.rfind("\n", 0, max(0, lo)) if lo > 0 else 0
    hi = model.end
    for _ in range(3):
        nxt = text.find("\n", hi + 1)
        hi = len(text) if nxt < 0 else nxt
    return text[max(0, lo) : hi]


def first_difference(expected: bytes, got: bytes) -> str:
    n = 0
    limit = min(len(expected), len(got))
    while n < limit and expected[n] == got[n]:
        n += 1
    lo = max(0, n - 60)
    return (
        f"at byte {n}: expected {expected[lo : n + 80].decode('utf-8', 'replace')!r} "
        f"got {got[lo : n + 80].decode('utf-8', 'replace')!r} (len {len(expected)} -> {len(got)})"
    )
