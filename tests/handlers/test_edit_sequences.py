"""Random sequences of edits against the editing promises (task H55, decisions 490-494).

A Hypothesis ``RuleBasedStateMachine`` drives a real workspace (SQLite index, the dispatcher
the MCP server and the CLI call) through long mixed sequences: reads of whole documents and of
elements, kb_patch with every kind on fresh, stale and relocated anchors, kb_edit_table,
kb_create / kb_move / kb_delete with fresh and stale hashes, and "another editor" writing the
files (a paragraph appended, a word rewritten in place at the same size, LF <-> CRLF, a BOM
added or removed). The model is the expected bytes of every file. After every step:

* a refused call left every file byte-identical, with a documented code, and CONFLICT exactly
  when the anchor (or hash) no longer names what was read;
* an accepted edit changed only its target's region (the target's span, section or subtree
  and the line breaks around it); the rest of the file is byte-equal to the model, the BOM is
  kept, the new content is there, and its element reads back by the pointer kb_read gives it;
* an anchor read earlier whose element no edit touched since still reads that element and
  still mutates it (an unrelated edit never blocks it);
* kb_outline lists exactly the file's ATX headings and kb_read's pages are the file's text;
* kb_search (lexical) finds every token just written, in the right file, and no longer finds
  one that was removed; at the end the index equals a fresh reindex of the disk.

Every element the machine writes carries a unique token (``kq`` + consonants, which no stemmer
changes), so element texts are unique and a hashed anchor relocates to one element or none.

``HYPOTHESIS_PROFILE=long`` runs it long (hundreds of sequences of 80 steps); the default run
is short.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from churn import fresh_snapshot, snapshot
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from kb_fakes import make_workspace
from pg_server import PgServer

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.markdown import Document, Element, ElementKind, parse_anchor, parse_document

BOM = b"\xef\xbb\xbf"
NEWLINES = "\r\n"
INDEX_FOLDER = ".local-vector-search-mcp"
PATHS = ["a.md", "b.md", "notes/c.md", "notes/deep/d.md"]
CONSONANTS = "bcdfghjklmnpqrtvwxz"
TOKEN = re.compile(r"\bkq[bcdfghjklmnpqrtvwxz]{4}\b")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
LINES = re.compile(r"\r\n|\r|\n")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Codes an edit may answer besides success (spec/errors.yaml); anything else is a failure.
DOCUMENTED = {"CONFLICT", "INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS"}
BLOCKS = ["para", "para", "heading", "list", "olist", "fence", "indented", "table", "quote", "raw"]
MARKER = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+)")


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def decode(raw: bytes) -> str:
    return (raw[3:] if raw.startswith(BOM) else raw).decode("utf-8")


def eol_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def headings_of(text: str) -> list[tuple[int, str]]:
    """The ATX headings of a document the machine wrote: top-level lines outside fences (the
    machine writes headings only at top level and never a `#` line inside a fence)."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for line in LINES.split(text):
        opened = FENCE.match(line)
        if fence is not None:
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
                and not line.strip()[len(opened.group(1)) :].strip()
            ):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = ATX.match(line)
        if match:
            found.append((len(match.group(1)), (match.group(2) or "").strip()))
    return found


def flat_outline(headings: list[dict[str, Any]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for h in headings:
        out.append((h["level"], h["title"]))
        out.extend(flat_outline(h["children"]))
    return out


def body_text(text: str) -> str:
    """The text of a document without its front matter and its ATX heading lines."""
    doc = parse_document(text.encode("utf-8"))
    fm = doc.get("frontmatter")
    rest = text[fm.end :] if fm is not None else text
    return "\n".join(line for line in LINES.split(rest) if not ATX.match(line))


@dataclass
class Held:
    """An anchor an agent read, with where its element was then (tracked through every change)."""

    path: str
    anchor: str
    kind: ElementKind
    text: str
    own: list[tuple[int, int]]  # the element's own text ranges (segments) in the decoded text
    subtree: tuple[int, int]  # its section / subtree range
    self_live: bool = True  # no change touched its own text since it was read
    subtree_live: bool = True  # no change touched its section / subtree
    table: dict[str, Any] | None = None


@dataclass
class Stats:
    steps: dict[str, int] = field(default_factory=dict)

    def count(self, key: str) -> None:
        self.steps[key] = self.steps.get(key, 0) + 1


STATS = Stats()


def region_of(doc: Document, el: Element | None, kind: str) -> tuple[int, int]:
    """Where an edit of ``el`` may change the text: its span, section or subtree (or the insertion
    point), widened over the line breaks around it."""
    text = doc.text
    if el is None:  # document
        if kind == "insert_after":
            lo = hi = len(text)
        else:
            fm = doc.get("frontmatter")
            lo = hi = 0 if fm is None else fm.end
    elif kind in ("replace_section", "delete_section"):
        lo, hi = el.start, el.section_end if el.section_end is not None else el.end
    elif kind == "insert_before":
        lo = hi = el.start
    elif kind == "insert_after":
        lo = hi = el.end
    else:
        lo, hi = el.start, el.end
    while lo > 0 and text[lo - 1] in NEWLINES:
        lo -= 1
    while hi < len(text) and text[hi] in NEWLINES:
        hi += 1
    return lo, hi


def changed_range(old: str, new: str, lo: int = 0, hi: int | None = None) -> tuple[int, int, int]:
    """The smallest ``old[a:b]`` -> ``new[a:a+n]`` change inside ``[lo, hi)`` that turns ``old``
    into ``new`` (the caller checked that the rest is equal)."""
    hi = len(old) if hi is None else hi
    new_hi = len(new) - (len(old) - hi)
    a = lo
    while a < hi and a < new_hi and old[a] == new[a]:
        a += 1
    b, nb = hi, new_hi
    while b > a and nb > a and old[b - 1] == new[nb - 1]:
        b -= 1
        nb -= 1
    return a, b, nb - a


def overlaps(rng: tuple[int, int], a: int, b: int, *, closed: bool) -> bool:
    s, e = rng
    if a == b:  # a pure insertion at a
        return s < a < e or (closed and a in (s, e))
    return s < b and a < e


def continues_list(h: Held, old: str, a: int) -> bool:
    """Whether a change at ``a`` can join a held list item's subtree from outside its range: text put
    right after the item's last line (only its line break between) continues the list, as the child
    or grandchild an insert_after of its last descendant adds (the change's range starts past the
    subtree's end, since the line break it keeps is common to both texts)."""
    end = h.subtree[1]
    return h.kind is ElementKind.LIST_ITEM and a >= end and old[end:a] in ("", "\n", "\r\n", "\r")


def shift(rng: tuple[int, int], a: int, b: int, n: int) -> tuple[int, int]:
    delta = n - (b - a)
    s, e = rng
    return (s + delta if s >= b else s, e + delta if e >= b else e)


def resolve_like_reader(doc: Document, anchor: str) -> Element | None:
    """The element a hashed anchor names in ``doc`` (contract §3.4): the one at its position with
    its hash, else the only one of its kind with its hash (also from a position a list, quote or
    table has taken since: decision 490); None when it is gone or ambiguous."""
    a = parse_anchor(anchor)
    here = doc.get(a.logical)
    if here is not None and here.kind is a.kind and here.self_hash == a.self_hash:
        return here
    same = [e for e in doc.elements if e.kind is a.kind and e.self_hash == a.self_hash]
    return same[0] if len(same) == 1 else None


def describe(doc: Document) -> str:
    return f"{doc.text!r} " + "; ".join(f"{e.anchor} {e.text!r}" for e in doc.elements)


class EditSequences(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="lvsm-h55-"))
        self.root = self.tmp / "kb"
        self.root.mkdir()
        self.model: dict[str, bytes] = {}
        self.shas: dict[str, list[str]] = {}  # every sourceHash an agent saw per path (fresh and stale)
        self.held: list[Held] = []
        self.tokens = 0
        self.ever: set[str] = set()  # every token ever written
        self.dirty_tokens: set[str] = set()  # tokens whose presence changed since the last search check
        self.ws = make_workspace(self.root, knowledge_base__allow_writes=True, **self.storage())
        self.started = False

    def storage(self) -> dict[str, Any]:
        """The index's configuration overrides (none: SQLite in the project's state folder)."""
        return {}

    # helpers ----------------------------------------------------------------------------
    def token(self) -> str:
        n, letters = self.tokens, []
        self.tokens += 1
        for _ in range(4):
            n, r = divmod(n, len(CONSONANTS))
            letters.append(CONSONANTS[r])
        tok = "kq" + "".join(reversed(letters))
        self.ever.add(tok)
        self.dirty_tokens.add(tok)
        return tok

    def call(self, tool: str, request: dict[str, Any] | None = None, *, flat: bool = False) -> Any:
        arguments = {} if request is None else (request if flat else {"request": request})
        return invoke(self.ws, tool, arguments)

    def text(self, path: str) -> str:
        return decode(self.model[path])

    def doc(self, path: str) -> Document:
        return parse_document(self.model[path])

    def disk(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def refused(self, exc: KbError, allowed: set[str]) -> None:
        assert exc.code in DOCUMENTED, (exc.code, exc.message)
        assert exc.code in allowed, (exc.code, exc.message, allowed)
        for path, raw in self.model.items():
            assert self.disk(path) == raw, f"a refused call changed {path}"

    def track(self, path: str, old: str, new: str, lo: int = 0, hi: int | None = None) -> None:
        """Move every held range of ``path`` through the change; mark what it touched stale."""
        if old == new:
            return
        a, b, n = changed_range(old, new, lo, hi)
        for h in self.held:
            if h.path != path:
                continue
            if any(overlaps(r, a, b, closed=False) for r in h.own):
                h.self_live = False
            if overlaps(h.subtree, a, b, closed=h.subtree[1] == len(old)) or continues_list(h, old, a):
                h.subtree_live = False
            h.own = [shift(r, a, b, n) for r in h.own]
            h.subtree = shift(h.subtree, a, b, n)

    def forget(self, path: str) -> None:
        self.held = [h for h in self.held if h.path != path]

    def commit(self, path: str, raw: bytes) -> None:
        self.model[path] = raw
        self.shas.setdefault(path, []).append(sha(raw))
        self.dirty_tokens.update(TOKEN.findall(decode(raw)))

    def write_external(self, path: str, raw: bytes) -> None:
        """Another editor saves the file; the watcher would report it, so the sync is scheduled."""
        old = self.text(path)
        (self.root / path).write_bytes(raw)
        self.dirty_tokens.update(TOKEN.findall(old))
        self.track(path, old, decode(raw))
        self.commit(path, raw)
        self.ws.indexing.schedule_sync([path])

    # documents the machine writes ---------------------------------------------------------
    def block(self, data: st.DataObject, kinds: list[str] | None = None, level: int | None = None) -> str:
        kind = data.draw(st.sampled_from(kinds or BLOCKS))
        tok = self.token()
        if kind == "para":
            return data.draw(
                st.sampled_from(
                    [
                        f"Para {tok} words.",
                        f"Para {tok} words.\nsecond line",
                        f"中文 {tok} 文本。",
                        f"Para {tok} with a hard break  \nand *more*",
                    ]
                )
            )
        if kind == "heading":
            lvl = level or data.draw(st.integers(1, 3))
            closing = " " + "#" * lvl if data.draw(st.integers(0, 3)) == 0 else ""
            return f"{'#' * lvl} Head {tok}{closing}"
        if kind in ("list", "olist"):
            marker = data.draw(st.sampled_from(["-", "*", "+"] if kind == "list" else ["1.", "1)"]))
            items = []
            for _ in range(data.draw(st.integers(1, 3))):
                item = f"{marker} item {tok if not items else self.token()}"
                if data.draw(st.integers(0, 2)) == 0:
                    pad = " " * (len(marker) + 1)
                    child = data.draw(st.sampled_from(["-", "*", "1."]))
                    item += f"\n{pad}{child} child {self.token()}"
                    if data.draw(st.integers(0, 3)) == 0:
                        item += f"\n{pad}{' ' * (len(child) + 1)}- grandchild {self.token()}"
                items.append(item)
            return data.draw(st.sampled_from(["\n", "\n\n"])).join(items)
        if kind == "fence":
            fence = data.draw(st.sampled_from(["```", "~~~", "````"]))
            info = data.draw(st.sampled_from(["", "py"]))
            return f"{fence}{info}\ncode {tok}\n{fence}"
        if kind == "indented":
            return f"    code {tok}\n    more()"
        if kind == "table":
            pipes = data.draw(st.booleans())
            cols = data.draw(st.integers(1, 3))

            def row(cells: list[str]) -> str:
                body = " | ".join(cells)
                return f"| {body} |" if pipes or cols == 1 else body

            rows = [row([f"H{i}" if i else f"Col {tok}" for i in range(cols)]), row(["---"] * cols)]
            for _ in range(data.draw(st.integers(0, 2))):
                rows.append(row([self.token() if i == 0 else str(i) for i in range(cols)]))
            return "\n".join(rows)
        if kind == "raw":  # not addressable, must survive every edit around it
            # A <div> block runs to the next blank line: it ends with one, or it would swallow
            # the machine's next block (a CommonMark rule, not a promise of ours).
            return data.draw(st.sampled_from(["***", "<!-- note -->", "<div>\nhtml text\n</div>\n"]))
        return data.draw(
            st.sampled_from([f"> quote {tok}", f"> quote {tok}\n>\n> more {self.token()}", f"> - quoted item {tok}"])
        )

    def new_document(self, data: st.DataObject) -> str:
        parts = []
        if data.draw(st.integers(0, 4)) == 0:
            parts.append("---\ntitle: front\n---")
        for _ in range(data.draw(st.integers(1, 6))):
            parts.append(self.block(data))
        text = ""
        for k, part in enumerate(parts):
            if k:
                text += data.draw(st.sampled_from(["\n\n", "\n\n", "\n\n\n", "\n"]))
            text += part
        if data.draw(st.booleans()):
            text += "\n"
        return text

    # set-up ---------------------------------------------------------------------------------
    @initialize(data=st.data())
    def start(self, data: st.DataObject) -> None:
        """The knowledge base before the agent's first call: a few documents, indexed."""
        for path in PATHS[: data.draw(st.integers(1, 3))]:
            text = self.new_document(data)
            if data.draw(st.integers(0, 3)) == 0:
                text = text.replace("\n", "\r\n")
            raw = (BOM if data.draw(st.integers(0, 4)) == 0 else b"") + text.encode("utf-8")
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_bytes(raw)
            self.commit(path, raw)
        self.ws.indexing.reindex("all")
        self.started = True

    def ready(self) -> bool:
        return self.started and bool(self.model)

    # reading --------------------------------------------------------------------------------
    @precondition(lambda self: self.ready())
    @rule(data=st.data())
    def read_document(self, data: st.DataObject) -> None:
        """kb_read of a whole document, page by page; the agent holds some of its anchors."""
        path = data.draw(st.sampled_from(sorted(self.model)))
        STATS.count("read_document")
        doc = self.doc(path)
        pages, pointer = [], None
        while True:
            request: dict[str, Any] = {"path": path, "maxElements": data.draw(st.sampled_from([3, 20, 100]))}
            if pointer is not None:
                request["pointer"] = pointer
            page = self.call("kb_read", request)
            assert page["sourceHash"] == sha(self.model[path])
            pages.append(page)
            pointer = page["nextPointer"]
            if pointer is None:
                break
        assert "".join(p["markdown"] for p in pages) == doc.text
        elements = [e for p in pages for e in p["elements"]]
        assert [e["pointer"] for e in elements] == [e.anchor for e in doc.readable]
        self.shas.setdefault(path, []).append(page["sourceHash"])
        for wire in elements:
            if data.draw(st.integers(0, 2)) == 0:
                continue
            el = doc.get(parse_anchor(wire["pointer"]).logical)
            assert el is not None and el.text == wire["text"]
            self.hold(path, doc, el)
        self.held = self.held[-80:]

    def hold(self, path: str, doc: Document, el: Element) -> None:
        own = [(s, e) for s, e in el.segments] if el.segments else [(el.start, el.end)]
        end = el.section_end if el.kind is ElementKind.HEADING and el.section_end is not None else el.end
        held = Held(path, el.anchor, el.kind, el.text, own, (el.start, end))
        if el.kind is ElementKind.TABLE:
            held.table = self.call("kb_read", {"path": path, "pointer": el.anchor})["table"]
        self.held.append(held)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def read_element(self, data: st.DataObject) -> None:
        """kb_read by a held anchor: a live one reads its element; a stale one reads the element
        it relocates to, or is refused with CONFLICT when there is none."""
        h = data.draw(st.sampled_from(self.held))
        STATS.count("read_element")
        target = resolve_like_reader(self.doc(h.path), h.anchor)
        if h.self_live:
            assert target is not None, (
                f"untouched {h.anchor} no longer resolves in {h.path}: {describe(self.doc(h.path))}"
            )
        try:
            page = self.call("kb_read", {"path": h.path, "pointer": h.anchor, "maxElements": 1})
        except KbError as exc:
            assert target is None, (h.anchor, exc.code, exc.message)
            self.refused(exc, {"CONFLICT"})
            return
        assert target is not None, f"{h.anchor} read although nothing in {h.path} has its hash"
        first = page["elements"][0]
        assert first["text"] == h.text and first["pointer"] == target.anchor

    # kb_patch ---------------------------------------------------------------------------------
    def fragment(self, data: st.DataObject, h: Held, target: Element | None, kind: str) -> tuple[str, bool]:
        """Markdown for ``kind`` on ``h`` and whether it is meant to be valid."""
        if data.draw(st.integers(0, 9)) == 0 and kind.startswith("replace"):
            return f"bad {self.token()}\n\n# split", False  # two elements: never one replacement
        if h.kind is ElementKind.LIST_ITEM:
            m = MARKER.match(h.text)
            indent, marker = (m.group(1), m.group(2)) if m else ("", "-")
            pad = indent + " " * (len(marker) + 1)
            item = f"{indent}{marker} item {self.token()}"
            if kind in ("replace_subtree", "insert_before", "insert_after") and data.draw(st.booleans()):
                item += f"\n{pad}- child {self.token()}"
            return item, True
        stripped = h.text.lstrip(" ")
        level = (len(stripped) - len(stripped.lstrip("#"))) or 1
        if kind == "replace_section":
            body = f"{'#' * level} Head {self.token()}\n\nPara {self.token()} words."
            if level < 6 and data.draw(st.booleans()):
                body += f"\n\n{'#' * (level + 1)} Head {self.token()}"
            return body, True
        if kind == "replace_element":
            by_kind = {
                ElementKind.HEADING: "heading",
                ElementKind.PARAGRAPH: "para",
                ElementKind.CODE_BLOCK: "fence",
                ElementKind.TABLE: "table",
                ElementKind.BLOCK_QUOTE: "quote",
            }
            if h.kind not in by_kind:
                return f"Para {self.token()} words.", False
            return self.block(data, [by_kind[h.kind]], level=level), True
        return self.block(data), True

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def patch(self, data: st.DataObject) -> None:
        self.patch_held(data)

    def patch_held(self, data: st.DataObject) -> None:
        h = data.draw(st.sampled_from(self.held))
        kinds = ["replace_element", "insert_before", "insert_after", "delete"]
        if h.kind is ElementKind.HEADING:
            kinds += ["replace_section", "delete_section"]
        if h.kind is ElementKind.LIST_ITEM:
            kinds += ["replace_subtree"]
        if h.kind is ElementKind.FRONT_MATTER:
            kinds = ["insert_after", "delete"]
        kind = data.draw(st.sampled_from(kinds))
        doc = self.doc(h.path)
        target = resolve_like_reader(doc, h.anchor)
        subtree_scoped = kind in ("replace_section", "delete_section", "replace_subtree") or (
            kind == "delete" and h.kind is ElementKind.LIST_ITEM
        )
        if target is not None and subtree_scoped and target.subtree_hash != parse_anchor(h.anchor).subtree_hash:
            target = None
        # The independent view: bytes no change touched must still resolve.
        if h.self_live and (h.subtree_live or not subtree_scoped):
            assert target is not None, f"untouched {h.anchor} ({kind}) no longer resolves in {h.path}: {describe(doc)}"
        markdown, valid = (None, True) if kind in ("delete", "delete_section") else self.fragment(data, h, target, kind)
        op: dict[str, Any] = {"kind": kind, "pointer": h.anchor}
        if markdown is not None:
            op["markdown"] = markdown
        self.apply_patch(h.path, doc, target, kind, op, markdown, valid, f"patch:{h.kind.value}:{kind}")

    # Edits of held anchors are the point: two more rules make them as likely as the rest.
    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def patch_again(self, data: st.DataObject) -> None:
        self.patch_held(data)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def patch_once_more(self, data: st.DataObject) -> None:
        self.patch_held(data)

    @precondition(lambda self: len(self.held) > 1)
    @rule(data=st.data())
    def patch_two_at_once(self, data: st.DataObject) -> None:
        """One kb_patch with two operations on held anchors of one document: both are resolved
        against one revision, and either both apply or nothing changes."""
        first = data.draw(st.sampled_from(self.held))
        others = [h for h in self.held if h.path == first.path and h is not first]
        if not others:
            return
        second = data.draw(st.sampled_from(others))
        doc = self.doc(first.path)
        ops, regions, fragments, resolvable, valid = [], [], [], True, True
        for h in (first, second):
            kind = data.draw(st.sampled_from(["replace_element", "insert_before", "insert_after"]))
            if h.kind is ElementKind.FRONT_MATTER:
                kind = "insert_after"
            target = resolve_like_reader(doc, h.anchor)
            resolvable = resolvable and target is not None
            markdown, ok = self.fragment(data, h, target, kind)
            valid = valid and ok
            ops.append({"kind": kind, "pointer": h.anchor, "markdown": markdown})
            fragments.append(markdown)
            if target is not None:
                regions.append(region_of(doc, target, kind))
        path, before = first.path, self.model[first.path]
        label = "patch:two"
        try:
            result = self.call("kb_patch", {"path": path, "operations": ops})
        except KbError as exc:
            STATS.count(f"{label}:{exc.code}")
            # Two operations may name one element or overlap (a section holding the other).
            self.refused(exc, {"INVALID_ARGUMENT"} if resolvable else {"CONFLICT", "INVALID_ARGUMENT"})
            return
        STATS.count(f"{label}:ok")
        assert resolvable and valid, f"{ops} accepted"
        raw = self.disk(path)
        assert result["sourceHash"] == sha(raw) and raw.startswith(BOM) == before.startswith(BOM)
        old, new = doc.text, decode(raw)
        (lo1, hi1), (lo2, hi2) = sorted(regions)
        lo, hi = lo1, max(hi1, hi2)
        assert new.startswith(old[:lo]) and new.endswith(old[hi:]) and len(new) >= lo + len(old) - hi
        inside = new[lo : len(new) - (len(old) - hi)]
        if hi1 < lo2:  # what lies between the two targets survives, between the two changes
            assert old[hi1:lo2] in inside, f"{label} changed bytes between its targets"
        eol = doc.eol
        for markdown in fragments:
            assert markdown.replace("\n", eol).strip(NEWLINES) in inside
        self.dirty_tokens.update(TOKEN.findall(old))
        self.track(path, old, new, lo, hi)
        self.commit(path, raw)
        for markdown in fragments:
            self.check_new_tokens(path, markdown)

    @precondition(lambda self: self.ready())
    @rule(data=st.data())
    def patch_document(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(sorted(self.model)))
        kind = data.draw(st.sampled_from(["insert_before", "insert_after"]))
        markdown = self.block(data)
        op = {"kind": kind, "pointer": "document", "markdown": markdown}
        self.apply_patch(path, self.doc(path), None, kind, op, markdown, True, f"patch:document:{kind}")

    def apply_patch(
        self,
        path: str,
        doc: Document,
        target: Element | None,
        kind: str,
        op: dict[str, Any],
        markdown: str | None,
        valid: bool,
        label: str,
    ) -> None:
        before = self.model[path]
        resolvable = target is not None or op["pointer"] == "document"
        try:
            result = self.call("kb_patch", {"path": path, "operations": [op]})
        except KbError as exc:
            STATS.count(f"{label}:{exc.code}")
            if not resolvable:
                self.refused(exc, {"CONFLICT"})
            else:
                # A live anchor is never a CONFLICT; a fragment may still be refused (documented).
                self.refused(exc, {"INVALID_ARGUMENT"})
                if exc.code == "INVALID_ARGUMENT" and valid:
                    STATS.count(f"refused-valid:{label}:{exc.message[:90]}")
                    if os.environ.get("H55_LOG"):  # the refusals to look at, with their document
                        with open(os.environ["H55_LOG"], "a", encoding="utf-8") as log:
                            log.write(f"{label}\t{exc.message}\t{op!r}\t{doc.text!r}\n")
            return
        STATS.count(f"{label}:ok")
        assert resolvable, f"{op['pointer']} was applied although {path} no longer holds it"
        assert valid, f"an invalid fragment was accepted: {op}"
        raw = self.disk(path)
        assert result["sourceHash"] == sha(raw)
        assert raw.startswith(BOM) == before.startswith(BOM), "the BOM was not kept"
        old, new = doc.text, decode(raw)
        lo, hi = region_of(doc, target, kind)
        assert new.startswith(old[:lo]) and new.endswith(old[hi:]) and len(new) >= lo + len(old) - hi, (
            f"{label} changed bytes outside its target's region"
        )
        eol = doc.eol if old else eol_of(markdown or "")
        if markdown is not None:
            expected = markdown.replace("\r\n", "\n").replace("\n", eol).strip(NEWLINES)
            assert expected in new[lo : len(new) - (len(old) - hi)], f"{label}: the new content is not in its place"
        self.dirty_tokens.update(TOKEN.findall(old))
        self.track(path, old, new, lo, hi)
        self.commit(path, raw)
        if markdown is not None:
            self.check_new_tokens(path, markdown)

    def check_new_tokens(self, path: str, markdown: str) -> None:
        """The element holding a token just written reads back by the pointer kb_read gives it."""
        doc = self.doc(path)
        for tok in TOKEN.findall(markdown):
            holders = [e for e in doc.readable if tok in e.text]
            if not holders:
                continue  # a cell of a table or a child item: its container holds it
            el = holders[-1]
            page = self.call("kb_read", {"path": path, "pointer": el.anchor, "maxElements": 1})
            assert tok in page["elements"][0]["text"]
            if len(self.held) < 120:
                self.hold(path, doc, el)

    # kb_edit_table ----------------------------------------------------------------------------
    @precondition(lambda self: any(h.table for h in self.held))
    @rule(data=st.data())
    def edit_table(self, data: st.DataObject) -> None:
        h = data.draw(st.sampled_from([h for h in self.held if h.table]))
        table = h.table
        assert table is not None
        cols, rows = table["columnCount"], table["rowCount"]
        action = data.draw(
            st.sampled_from(
                [
                    "update_cells",
                    "insert_row",
                    "delete_row",
                    "insert_column",
                    "delete_column",
                    "rename_column",
                    "set_alignment",
                ]
            )
        )
        col = data.draw(st.integers(0, cols - 1))
        args: dict[str, Any] = {"path": h.path, "pointer": h.anchor, "action": action}
        tok = self.token()
        valid = True
        if action == "update_cells":
            if rows == 0:
                return
            row = data.draw(st.integers(0, rows - 1))
            args["updates"] = [{"rowIndex": row, "columnIndex": col, "value": tok}]
        elif action == "insert_row":
            args["values"] = [tok] + [f"v{i}" for i in range(1, cols)]
            if rows and data.draw(st.booleans()):
                args["beforeRowIndex"] = data.draw(st.integers(0, rows - 1))
        elif action == "delete_row":
            if rows == 0:
                return
            args["rowIndex"] = data.draw(st.integers(0, rows - 1))
        elif action == "insert_column":
            args["name"] = tok
            args["defaultValue"] = "d"
        elif action == "delete_column":
            args["columnIndex"] = col
            valid = cols > 1
        elif action == "rename_column":
            args["columnIndex"] = col
            args["newName"] = tok
        else:
            args["columnIndex"] = col
            args["alignment"] = data.draw(st.sampled_from(["none", "left", "center", "right"]))
        doc = self.doc(h.path)
        target = resolve_like_reader(doc, h.anchor)
        if h.self_live:
            assert target is not None, f"untouched table {h.anchor} no longer resolves: {describe(doc)}"
        label = f"table:{action}"
        before = self.model[h.path]
        try:
            result = self.call("kb_edit_table", args, flat=True)
        except KbError as exc:
            STATS.count(f"{label}:{exc.code}")
            self.refused(exc, {"CONFLICT"} if target is None else {"INVALID_ARGUMENT"})
            if target is not None and valid:
                STATS.count(f"refused-valid:{label}:{exc.message[:90]}")
            return
        STATS.count(f"{label}:ok")
        assert target is not None and valid, f"{label} on {h.anchor} accepted: {args}"
        raw = self.disk(h.path)
        assert result["sourceHash"] == sha(raw)
        assert raw.startswith(BOM) == before.startswith(BOM)
        old, new = doc.text, decode(raw)
        lo, hi = region_of(doc, target, "replace_element")
        assert new.startswith(old[:lo]) and new.endswith(old[hi:]) and len(new) >= lo + len(old) - hi, (
            f"{label} changed bytes outside the table"
        )
        self.dirty_tokens.update(TOKEN.findall(old))
        if new != old:  # a row appended after the last line touches no old byte but changes the table
            for other in self.held:
                if other.path == h.path and other.own == [(target.start, target.end)]:
                    other.self_live = other.subtree_live = False
        self.track(h.path, old, new, lo, hi)
        self.commit(h.path, raw)
        # The result's pointer reads the edited table back.
        after = self.call("kb_read", {"path": h.path, "pointer": result["pointer"]})["table"]
        assert after is not None
        if action == "update_cells":
            assert after["rows"][args["updates"][0]["rowIndex"]]["cells"][col] == tok
        elif action == "insert_row":
            at = args.get("beforeRowIndex", rows)
            assert after["rowCount"] == rows + 1 and after["rows"][at]["cells"][0] == tok
        elif action == "delete_row":
            assert after["rowCount"] == rows - 1
        elif action == "insert_column":
            assert after["columnCount"] == cols + 1 and after["columns"][-1]["name"] == tok
        elif action == "delete_column":
            assert after["columnCount"] == cols - 1
        elif action == "rename_column":
            assert after["columns"][col]["name"] == tok
        else:
            assert after["columns"][col]["alignment"] == args["alignment"]
        new_doc = self.doc(h.path)
        el = new_doc.get(parse_anchor(result["pointer"]).logical)
        assert el is not None and el.anchor == result["pointer"]
        self.hold(h.path, new_doc, el)

    # whole documents --------------------------------------------------------------------------
    @precondition(lambda self: self.started)
    @rule(data=st.data(), path=st.sampled_from(PATHS))
    def create(self, data: st.DataObject, path: str) -> None:
        text = self.new_document(data)
        existed = path in self.model
        try:
            result = self.call("kb_create", {"path": path, "markdown": text})
        except KbError as exc:
            STATS.count(f"create:{exc.code}")
            assert existed, (exc.code, exc.message)
            self.refused(exc, {"ALREADY_EXISTS"})
            return
        STATS.count("create:ok")
        assert not existed, f"kb_create overwrote {path}"
        raw = self.disk(path)
        assert raw == text.encode("utf-8") and result["sourceHash"] == sha(raw)
        self.commit(path, raw)

    def known_sha(self, data: st.DataObject, path: str) -> str:
        seen = self.shas.get(path) or [sha(self.model[path])]
        return data.draw(st.sampled_from(seen[-4:]))

    @precondition(lambda self: self.ready())
    @rule(data=st.data(), dest=st.sampled_from(PATHS))
    def move(self, data: st.DataObject, dest: str) -> None:
        source = data.draw(st.sampled_from(sorted(self.model)))
        if source == dest:
            return
        expected = self.known_sha(data, source)
        fresh = expected == sha(self.model[source])
        taken = dest in self.model
        try:
            result = self.call("kb_move", {"sourcePath": source, "targetPath": dest, "expectedSourceHash": expected})
        except KbError as exc:
            STATS.count(f"move:{exc.code}")
            allowed = ({"CONFLICT"} if not fresh else set()) | ({"ALREADY_EXISTS"} if taken else set())
            assert allowed, (exc.code, exc.message)
            self.refused(exc, allowed)
            return
        STATS.count("move:ok")
        assert fresh and not taken, f"kb_move {source} -> {dest} accepted (fresh={fresh}, taken={taken})"
        assert not (self.root / source).exists() and self.disk(dest) == self.model[source]
        assert result["previousPath"] == source and result["sourceHash"] == sha(self.model[source])
        raw = self.model.pop(source)
        self.dirty_tokens.update(TOKEN.findall(decode(raw)))
        for h in self.held:
            if h.path == source:
                h.path = dest
        self.shas[dest] = self.shas.pop(source, [])
        self.commit(dest, raw)

    @precondition(lambda self: self.ready())
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(sorted(self.model)))
        expected = self.known_sha(data, path)
        fresh = expected == sha(self.model[path])
        try:
            self.call("kb_delete", {"path": path, "expectedSourceHash": expected})
        except KbError as exc:
            STATS.count(f"delete:{exc.code}")
            assert not fresh, (exc.code, exc.message)
            self.refused(exc, {"CONFLICT"})
            return
        STATS.count("delete:ok")
        assert fresh, f"kb_delete of {path} with a stale hash accepted"
        assert not (self.root / path).exists()
        raw = self.model.pop(path)
        self.dirty_tokens.update(TOKEN.findall(decode(raw)))
        self.forget(path)
        self.shas.pop(path, None)

    # another editor ----------------------------------------------------------------------------
    @precondition(lambda self: self.ready())
    @rule(data=st.data())
    def another_editor_saves(self, data: st.DataObject) -> None:
        """Another program saves a document: a paragraph appended, a word retyped in place (same
        size), line breaks converted (LF <-> CRLF), a BOM added or removed."""
        path = data.draw(st.sampled_from(sorted(self.model)))
        raw = self.model[path]
        how = data.draw(st.sampled_from(["append", "retype", "line-breaks", "bom"]))
        STATS.count(f"editor:{how}")
        if how == "append":
            text = decode(raw)
            eol = eol_of(text)
            sep = "" if not text else (eol if text.endswith(eol) else eol + eol)
            self.write_external(path, raw + (sep + f"Para {self.token()} from another editor." + eol).encode("utf-8"))
        elif how == "retype":
            found = TOKEN.findall(decode(raw))
            if found:
                old = data.draw(st.sampled_from(found))
                self.write_external(path, raw.replace(old.encode(), self.token().encode(), 1))
        elif how == "line-breaks":
            lf = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if lf != raw:
                self.write_external(path, lf)
            else:  # Windows, or classic Mac OS (CR alone is a line break too, decision 55)
                self.write_external(path, lf.replace(b"\n", data.draw(st.sampled_from([b"\r\n", b"\r"]))))
        else:
            self.write_external(path, raw[3:] if raw.startswith(BOM) else BOM + raw)

    # promises after every step ----------------------------------------------------------------------
    @invariant()
    def files_are_the_model(self) -> None:
        if not self.started:
            return
        on_disk = sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and INDEX_FOLDER not in p.relative_to(self.root).parts
        )
        assert on_disk == sorted(self.model), f"files on disk {on_disk} != {sorted(self.model)}"
        for path, raw in self.model.items():
            assert self.disk(path) == raw, f"{path} differs from the model"

    @invariant()
    def untouched_anchors_still_name_their_element(self) -> None:
        """An anchor whose element no change touched resolves to an element with its text."""
        for h in self.held:
            if h.self_live:
                target = resolve_like_reader(self.doc(h.path), h.anchor)
                assert target is not None and target.text == h.text, f"{h.anchor} lost in {h.path}"

    @invariant()
    def outline_is_the_file(self) -> None:
        if not self.started:
            return
        for path, raw in self.model.items():
            outline = self.call("kb_outline", {"path": path})
            assert outline["sourceHash"] == sha(raw)
            assert flat_outline(outline["headings"]) == headings_of(decode(raw)), path

    @invariant()
    def search_follows_the_disk(self) -> None:
        """A token in an element the chunker indexes is found in its file; one no file holds any
        more is found nowhere. Heading titles reach the index only as the heading path of their
        section's chunks (contract §8.1), so a token in a heading may or may not be found."""
        if not self.started or not self.dirty_tokens:
            return
        assert self.ws.indexing.sync.wait_idle(30)
        texts = {path: decode(raw) for path, raw in self.model.items()}
        bodies = {path: body_text(text) for path, text in texts.items()}
        for tok in sorted(self.dirty_tokens):
            must = {path for path, body in bodies.items() if tok in body}
            may = {path for path, text in texts.items() if tok in text}
            try:
                result = self.call("kb_search", {"query": tok, "mode": "lexical", "topK": 50})
                found = {hit["path"] for hit in result["results"]}
                for hit in result["results"]:
                    # The index holds the revision on disk, and the hit's pointer reads there.
                    assert hit["indexedSourceHash"] == sha(self.model[hit["path"]]), (tok, hit["path"])
                    page = self.call("kb_read", {"path": hit["path"], "pointer": hit["pointer"], "maxElements": 1})
                    assert page["sourceHash"] == hit["indexedSourceHash"]
            except KbError as exc:
                assert exc.code == "INDEX_NOT_READY" and not must, (tok, exc.code, exc.message)
                found = set()
            assert must <= found <= may, (
                f"kb_search {tok}: {sorted(found)}; in the text of {sorted(must)}, anywhere in {sorted(may)}"
            )
        self.dirty_tokens.clear()

    def teardown(self) -> None:
        try:
            if self.started:
                assert self.ws.indexing.sync.wait_idle(30)
                assert snapshot(self.ws) == fresh_snapshot(self.root), "the index differs from a fresh reindex"
        finally:
            self.ws.close()
            shutil.rmtree(self.tmp, ignore_errors=True)


LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"


def sequences(examples: int, steps: int) -> settings:
    return settings(
        settings.default,
        max_examples=int(os.environ.get("H55_EXAMPLES", examples)),
        stateful_step_count=int(os.environ.get("H55_STEPS", steps)),
        deadline=None,
        # H55_NO_SHRINK=1 while exploring: report every distinct failure as found.
        phases=[Phase.explicit, Phase.reuse, Phase.generate] if os.environ.get("H55_NO_SHRINK") else list(Phase),
    )


EditSequences.TestCase.settings = sequences(300 if LONG else 8, 80 if LONG else 25)
TestEditSequences = EditSequences.TestCase


def test_edit_sequences_on_postgresql(pg_server: PgServer) -> None:
    """The same machine with the index in PostgreSQL (a fresh schema per sequence): the
    editing tools never read the index, but kb_search and the targeted sync after each edit do."""

    class OnPostgreSQL(EditSequences):
        def storage(self) -> dict[str, Any]:
            return {
                "storage__backend": "postgresql",
                "storage__url": pg_server.url,
                "storage__schema": pg_server.fresh_schema(),
            }

    run_state_machine_as_test(OnPostgreSQL, settings=sequences(60 if LONG else 3, 60 if LONG else 20))


def teardown_module() -> None:
    if os.environ.get("H55_STATS"):
        for key in sorted(STATS.steps):
            print(f"{STATS.steps[key]:6d}  {key}")
