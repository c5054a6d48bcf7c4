# generated from spec/ by tools/generate.py, do not edit
"""The MCP registration table: one entry per tool of spec/, in spec order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

CONTRACT_VERSION = '1'


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    annotations: dict[str, bool]
    envelope: Literal["request", "flat", "none"]
    arguments_model: str
    # What the handler receives: the request inside the envelope, the flat arguments, or None.
    request_model: str | None
    # None for a content-only tool: its handler returns a lvsm_contract.content.ContentResult.
    result_model: str | None
    meta: dict[str, Any] | None
    errors: tuple[str, ...]

    def input_schema(self) -> dict[str, Any]:
        return _schema(f"{self.name}.input.json")

    def output_schema(self) -> dict[str, Any] | None:
        return _schema(f"{self.name}.output.json") if self.result_model else None


@cache
def _schema(file_name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schemas", file_name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


ERROR_CODES: tuple[str, ...] = (
    'INVALID_ARGUMENT',
    'INVALID_PATH',
    'NOT_FOUND',
    'ALREADY_EXISTS',
    'CONFLICT',
    'PERMISSION_DENIED',
    'UNSUPPORTED_FORMAT',
    'INDEX_NOT_READY',
    'PARTIAL_FAILURE',
    'INTERNAL_ERROR',
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name='kb_status',
        title='Index status',
        description="Report the server's configuration and the state of the search index: where the index lives, which\nembedding provider and model are active, how many documents and chunks are indexed, whether a reindex\nis running (and how the last one ended), pending targeted re-indexing after edits, and whether the\nstored index is compatible with the current configuration. Call it first to orient yourself, and\nafter kb_reindex to follow progress. Takes no arguments (send `{}`); never fails because the index is\nmissing or empty.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='none',
        arguments_model='KbStatusArguments',
        request_model=None,
        result_model='KbStatusResult',
        meta=None,
        errors=('INTERNAL_ERROR',),
    ),
    ToolSpec(
        name='kb_reindex',
        title='Rebuild the search index',
        description="Start (re)building the search index in the background and return at once. `scope: changed` (default)\nre-indexes only Markdown files whose content changed and drops deleted or excluded ones; `scope: all`\nre-processes every file. `force: true` is needed after kb_status reports the index incompatible with\nthe configuration: it drops and rebuilds the derived index (Markdown files are never touched); on a\ncompatible index it changes nothing. Only one reindex runs at a time: if one is already running, the\ncall returns `started: false` with that run's progress and the new arguments are ignored (nothing is\nqueued). Follow progress and the outcome (`indexing.current` / `indexing.last`) with kb_status;\nincompatibility and embedding failures are reported there, not as errors of this tool.",
        annotations={'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbReindexArguments',
        request_model='KbReindexRequest',
        result_model='KbReindexResult',
        meta=None,
        errors=('INVALID_ARGUMENT', 'INTERNAL_ERROR'),
    ),
    ToolSpec(
        name='kb_search',
        title='Search the knowledge base',
        description="Find the passages of the indexed Markdown most relevant to a query. Returns up to `topK` chunks, best\nfirst, each with its document path, a pointer to the chunk's first element, a snippet and a `readHint`\nto pass to kb_read for the exact current text (the index may lag behind recent edits; kb_read always\nreads the file). `mode` defaults to the configured mode (normally `hybrid`); when embeddings are off\nor failing, `hybrid` falls back to lexical results with a `warning`, while `semantic` fails with\nINDEX_NOT_READY. Narrow the search with `includeGlobs` / `excludeGlobs` (applied before ranking).\nA passage found in several files (versioned or copied pages) is one result; `alsoIn` names the other\nplaces, so `topK` results are `topK` different passages.\nFails with INDEX_NOT_READY when nothing is indexed yet (run kb_reindex) or a forced rebuild is running.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbSearchArguments',
        request_model='KbSearchRequest',
        result_model='KbSearchResult',
        meta=None,
        errors=('INVALID_ARGUMENT', 'INDEX_NOT_READY', 'INTERNAL_ERROR'),
    ),
    ToolSpec(
        name='kb_read',
        title='Read a Markdown document',
        description="Read the current source of a Markdown document (never the index), whole or from one element on, in\npages. Returns the exact Markdown slice, the addressable elements it contains with their v2 anchors\n(`logical~selfHash~subtreeHash`, the pointers kb_patch needs), `nextPointer` for the next page (null\nat the end; consecutive pages concatenate to exactly the file) and the file's `sourceHash` (what\nkb_move / kb_delete expect). `pointer` defaults to `document`; a hashed anchor from kb_search or an\nearlier read is relocated if the element moved. When the first element read is a table, `table` holds\nits rows and columns for kb_edit_table. Fails with NOT_FOUND for a missing file, INVALID_ARGUMENT for\na malformed or absent pointer and CONFLICT when a hashed anchor no longer matches (re-read from\n`document`).",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbReadArguments',
        request_model='KbReadRequest',
        result_model='KbReadResult',
        meta=None,
        errors=('INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'CONFLICT', 'UNSUPPORTED_FORMAT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_patch',
        title='Edit a Markdown document',
        description="Apply one or more structural edits to a Markdown document atomically, addressed by the anchors kb_read\nreturns. All operations resolve against the same revision; the file is rewritten only if every one is\nvalid and the result keeps the document's structure (untouched bytes, line endings and BOM are\npreserved); otherwise nothing is written. Needs `knowledgeBase.allowWrites`. Returns the new\n`sourceHash`; re-read before further edits, since changed elements get new anchors. Concrete targets\nneed a hashed anchor (a plain `1.p2` is refused); a stale hash gives CONFLICT. Use kb_edit_table for\ncell/row/column edits and kb_create for new files.",
        annotations={'readOnlyHint': False, 'destructiveHint': True, 'idempotentHint': False, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbPatchArguments',
        request_model='KbPatchRequest',
        result_model='KbPatchResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'CONFLICT', 'UNSUPPORTED_FORMAT'),
    ),
    ToolSpec(
        name='kb_edit_table',
        title='Edit a Markdown table',
        description="Change one GFM pipe table cell-, row- or column-wise without rewriting the rest of the file. Address the\ntable with its current anchor (`tN~selfHash~subtreeHash` from kb_read, whose `table` field shows\nzero-based row and column indexes), pick one `action` and pass only that action's fields (any other\nfield is an error):\n`update_cells` → `updates`; `insert_row` → `values` or `valuesByColumn`, optional `beforeRowIndex`;\n`delete_row` → `rowIndex` or `where`; `insert_column` → `name`, optional `defaultValue`, `alignment`,\n`beforeColumn` or `beforeColumnIndex`; `delete_column` → `column` or `columnIndex`; `rename_column` →\ncolumn selector + `newName`; `set_alignment` → column selector + `alignment`.\nNames and values match exactly (case-sensitive display text). Returns the table's new anchor, so edits\ncan be chained without re-reading. Needs `knowledgeBase.allowWrites`. Delete a whole table with\nkb_patch `delete`.",
        annotations={'readOnlyHint': False, 'destructiveHint': True, 'idempotentHint': True, 'openWorldHint': False},
        envelope='flat',
        arguments_model='KbEditTableArguments',
        request_model='KbEditTableArguments',
        result_model='KbEditTableResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'CONFLICT', 'UNSUPPORTED_FORMAT'),
    ),
    ToolSpec(
        name='kb_create',
        title='Create a Markdown document',
        description="Create a new Markdown document with the given content (UTF-8 without BOM, written as given), creating\nmissing parent folders. Never overwrites: an existing file at `path` fails with ALREADY_EXISTS. Needs\n`knowledgeBase.allowWrites`. Returns the new file's `sourceHash`; the document is queued for\nindexing (`indexSynchronized` false until then). Use kb_read afterwards to get element anchors.",
        annotations={'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbCreateArguments',
        request_model='KbCreateRequest',
        result_model='KbCreateResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'ALREADY_EXISTS', 'INVALID_ARGUMENT'),
    ),
    ToolSpec(
        name='kb_move',
        title='Move or rename a Markdown document',
        description="Move or rename a Markdown document within the knowledge base, creating missing target folders. Guarded\nby the document's current SHA-256 (`sourceHash` from kb_read or a previous edit): if the file changed\nsince, nothing happens and CONFLICT is returned. Never overwrites (ALREADY_EXISTS). Links in other\ndocuments are left alone unless `updateLinks` is true (find them with kb_links `direction: incoming`). Needs\n`knowledgeBase.allowWrites`. Returns `path` = the new path, `previousPath` = the old one, and the\nunchanged `sourceHash`; both paths are queued for re-indexing.",
        annotations={'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbMoveArguments',
        request_model='KbMoveRequest',
        result_model='KbMoveResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'ALREADY_EXISTS', 'INVALID_ARGUMENT', 'CONFLICT'),
    ),
    ToolSpec(
        name='kb_delete',
        title='Delete a Markdown document',
        description='Delete a Markdown document. Guarded by its current SHA-256 (`sourceHash` from kb_read or a previous\nedit): if the file changed since, nothing is deleted and CONFLICT is returned. Folders are left in\nplace. Needs `knowledgeBase.allowWrites`. Returns `sourceHash: null`; the path is queued for removal\nfrom the index. To delete part of a document use kb_patch `delete` / `delete_section`.',
        annotations={'readOnlyHint': False, 'destructiveHint': True, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbDeleteArguments',
        request_model='KbDeleteRequest',
        result_model='KbDeleteResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'CONFLICT'),
    ),
    ToolSpec(
        name='kb_list_files',
        title='List files',
        description="List the files under the knowledge-base root (Markdown documents and other assets), sorted by path.\nUse it to discover document paths before kb_read, kb_outline or kb_patch.\n`pathPrefix` selects one folder (or one exact file) by whole path segments: `books/chapter` selects\n`books/chapter/...` but not `books/chapter.md`. `includeGlob` filters further (default `**/*`).\nBoth filters compare case-insensitively. `.git`, the index's own files and symlinks are never listed.\nFails with INVALID_PATH for an unsafe prefix and INVALID_ARGUMENT for a malformed glob.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbListFilesArguments',
        request_model='KbListFilesRequest',
        result_model='KbListFilesResult',
        meta=None,
        errors=('INVALID_PATH', 'INVALID_ARGUMENT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_outline',
        title='Outline a Markdown document',
        description="Return the heading tree of a Markdown document, read from the current file (not the index): each\nheading with its level, title and v2 anchor, nested under the nearest preceding heading of a lower\nlevel. Use it to find the section to read (kb_read with the heading's pointer) or to edit\n(kb_patch `replace_section` / `delete_section`). Headings inside lists and block quotes do not count.\nFails with NOT_FOUND for a missing file.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbOutlineArguments',
        request_model='KbOutlineRequest',
        result_model='KbOutlineResult',
        meta=None,
        errors=('INVALID_PATH', 'NOT_FOUND', 'UNSUPPORTED_FORMAT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_create_pdf_book',
        title='Export a document as PDF',
        description="Render a Markdown document, or a book of chapters, to a PDF: headings with bookmarks, emphasis,\ncode, nested and task lists, quotes and GitHub alerts, GFM tables, local images and any script\n(CJK text needs a TrueType CJK font; characters no font has are listed in `warnings`). A document\nwhose blocks are only links, like mdBook's `SUMMARY.md`, is a book: the linked `.md` files are\nits chapters in order, with a title page, a table of contents and links between chapters.\nWrites `outputPath` (default: the document's path with `.pdf`) inside the knowledge base,\nreplacing an existing PDF there atomically; the Markdown, other files and the index are not\ntouched. Missing chapters and missing, unreadable, SVG or remote images become placeholders listed\nin `warnings`; remote and absolute image URLs are never fetched. Needs `knowledgeBase.allowWrites`.\nFetch the result with kb_download_file (which refuses files over 25 MiB; use `profile: screen` for a\nsmaller file).",
        annotations={'readOnlyHint': False, 'destructiveHint': True, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbCreatePdfBookArguments',
        request_model='KbCreatePdfBookRequest',
        result_model='KbCreatePdfBookResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'UNSUPPORTED_FORMAT'),
    ),
    ToolSpec(
        name='kb_download_file',
        title='Download a file',
        description="Return the raw bytes of any regular file under the knowledge-base root (a PDF made by\nkb_create_pdf_book, an attachment, a Markdown file, ...) up to 25 MiB. The result has two content\nblocks: an embedded binary resource with the original bytes, then a JSON text block\n`{path, mimeType, bytes, sha256}`. Works without write permission. For looking at an image use\nkb_load_image (it converts GIFs into a viewable preview). Refuses `.git`, the index's files and\nanything reached through a symlink.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbDownloadFileArguments',
        request_model='KbDownloadFileRequest',
        result_model=None,
        meta=None,
        errors=('INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_save_image',
        title='Save an uploaded image',
        description="Save an image into the knowledge base and return a ready-to-paste Markdown image link. Pass exactly\none of: `file`, when the client gives you an OpenAI file reference for an image the user attached\n(`download_url` + `file_id`; the bytes are downloaded over HTTPS from public hosts only), or `data`,\nwhen you have the image bytes yourself (Claude Code, Codex, the MCP Inspector and other clients\nwithout file references): standard base64 or a `data:image/png;base64,...` URI. The image must be\na PNG, JPEG, WebP or GIF (recognised by its bytes) of at most 25 MiB. Without `targetPath` it goes\nto `images/` under `fileName` (or the upload's own name, or a generated one), adding `-2`, `-3`, ...\nwhen the name is taken; with `targetPath` it is saved exactly there and never overwrites\n(ALREADY_EXISTS). Needs `knowledgeBase.allowWrites`. The Markdown is not changed: insert the\nreturned `markdown` with kb_patch.",
        annotations={'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': False, 'openWorldHint': True},
        envelope='flat',
        arguments_model='KbSaveImageArguments',
        request_model='KbSaveImageArguments',
        result_model='KbSaveImageResult',
        meta={'openai/fileParams': ['file']},
        errors=('INVALID_ARGUMENT', 'PERMISSION_DENIED', 'INVALID_PATH', 'UNSUPPORTED_FORMAT', 'ALREADY_EXISTS'),
    ),
    ToolSpec(
        name='kb_list_images',
        title='List images',
        description="List the image files (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`, by extension) anywhere under the\nknowledge-base root, sorted by path, one page at a time. Pass `nextCursor` back as `cursor` for the\nnext page; it is null on the last page. A cursor stays valid when files are added or removed. `.git`,\nthe index's files and symlinks are skipped. Use kb_load_image to look at one.",
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='flat',
        arguments_model='KbListImagesArguments',
        request_model='KbListImagesArguments',
        result_model='KbListImagesResult',
        meta=None,
        errors=('INVALID_ARGUMENT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_load_image',
        title='Look at an image',
        description='Return an image from the knowledge base so you can see it. The result has two content blocks: the\nimage itself (PNG, JPEG and WebP as stored; a GIF as a PNG preview of its first frame), then a JSON\ntext block `{path, mimeType, bytes, sha256}` describing the original file. Works without write\npermission. Files over 25 MiB, folders and files whose content does not match their extension are\nrefused. Use kb_download_file for the exact bytes of other files.',
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='flat',
        arguments_model='KbLoadImageArguments',
        request_model='KbLoadImageArguments',
        result_model=None,
        meta=None,
        errors=('INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'UNSUPPORTED_FORMAT', 'PERMISSION_DENIED'),
    ),
    ToolSpec(
        name='kb_delete_image',
        title='Delete an image',
        description='Delete one image file (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`) from the knowledge base. Markdown\nthat links to it is not changed (find such documents with kb_search or kb_read), folders are left in\nplace and nothing is re-indexed. Needs `knowledgeBase.allowWrites`. Returns `{path, deleted: true}`.',
        annotations={'readOnlyHint': False, 'destructiveHint': True, 'idempotentHint': True, 'openWorldHint': False},
        envelope='flat',
        arguments_model='KbDeleteImageArguments',
        request_model='KbDeleteImageArguments',
        result_model='KbDeleteImageResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT'),
    ),
    ToolSpec(
        name='kb_move_image',
        title='Move or rename an image',
        description="Move or rename one image file within the knowledge base, creating missing target folders. Never\noverwrites (ALREADY_EXISTS) and never copies: it is a rename. The image's content must match both\nextensions (`.jpg` and `.jpeg` are interchangeable, so a PNG cannot become `x.jpg`). Optionally guarded\nby `expectedSha256` (CONFLICT if the file changed). Markdown links to the image are not updated; fix\nthem with kb_patch. Needs `knowledgeBase.allowWrites`.",
        annotations={'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbMoveImageArguments',
        request_model='KbMoveImageRequest',
        result_model='KbMoveImageResult',
        meta=None,
        errors=('PERMISSION_DENIED', 'INVALID_PATH', 'INVALID_ARGUMENT', 'NOT_FOUND', 'ALREADY_EXISTS', 'UNSUPPORTED_FORMAT', 'CONFLICT'),
    ),
    ToolSpec(
        name='kb_links',
        title='Follow links between documents',
        description='Show the explicit links between documents around one document: the documents it links to\n(`outgoing`), the documents that link to it (`incoming`), or both, optionally following links up to\n`depth` hops. Links whose target document does not exist are flagged (`targetExists: false`) and\ncollected in `missing`, which makes it a broken-link check. Inline, reference-style and autolinks to\nrelative `.md` targets inside the root count (fragments like `#install` are kept apart), and so do\nObsidian wikilinks and embeds (`[[Note]]`, `[[Note#Heading]]`, `[[Note|alias]]`, `![[Note]]`), which\nresolve like Obsidian: by root-relative path, else by a unique file name or alias anywhere in the\nknowledge base; an ambiguous name is reported with its `candidates`, never guessed. Web URLs and\nroot-absolute `/...` targets are ignored; links in code or HTML comments do not count; nothing is\ninferred from meaning. Without `path`, the whole knowledge base is checked: `links` and `missing` hold\nevery broken link, `orphans` the documents nothing links to and `missingImages` the image references\n(Markdown images and embeds) whose file does not exist. Works from the index, so it reflects the last\nkb_reindex / re-indexing (like kb_search); INDEX_NOT_READY when nothing is indexed yet.',
        annotations={'readOnlyHint': True, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
        envelope='request',
        arguments_model='KbLinksArguments',
        request_model='KbLinksRequest',
        result_model='KbLinksResult',
        meta=None,
        errors=('INVALID_PATH', 'NOT_FOUND', 'INVALID_ARGUMENT', 'INDEX_NOT_READY'),
    ),
)

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
