# generated from spec/ by tools/generate.py, do not edit
"""One ``call <tool>`` subcommand per tool of spec/.

Scalar request fields become options (``--query``, ``--top-k``); any field,
including nested objects, can be given as JSON with ``--json`` (a JSON
object, ``@file`` or ``-`` for standard input). Options override ``--json``.
"""

from __future__ import annotations

import argparse
from typing import Any

# (request property, argparse dest, kind) per tool, in spec order.
FIELDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    'kb_status': (
    ),
    'kb_reindex': (
        ('scope', 'opt_scope', 'string'),
        ('force', 'opt_force', 'boolean'),
    ),
    'kb_search': (
        ('query', 'opt_query', 'string'),
        ('mode', 'opt_mode', 'string'),
        ('topK', 'opt_topK', 'integer'),
        ('includeGlobs', 'opt_includeGlobs', 'array'),
        ('excludeGlobs', 'opt_excludeGlobs', 'array'),
        ('tags', 'opt_tags', 'array'),
    ),
    'kb_read': (
        ('path', 'opt_path', 'string'),
        ('pointer', 'opt_pointer', 'string'),
        ('maxElements', 'opt_maxElements', 'integer'),
        ('maxBytes', 'opt_maxBytes', 'integer'),
    ),
    'kb_patch': (
        ('path', 'opt_path', 'string'),
    ),
    'kb_edit_table': (
        ('path', 'opt_path', 'string'),
        ('pointer', 'opt_pointer', 'string'),
        ('action', 'opt_action', 'string'),
        ('rowIndex', 'opt_rowIndex', 'integer'),
        ('column', 'opt_column', 'string'),
        ('columnIndex', 'opt_columnIndex', 'integer'),
        ('values', 'opt_values', 'array'),
        ('valueFormat', 'opt_valueFormat', 'string'),
        ('beforeRowIndex', 'opt_beforeRowIndex', 'integer'),
        ('beforeColumn', 'opt_beforeColumn', 'string'),
        ('beforeColumnIndex', 'opt_beforeColumnIndex', 'integer'),
        ('name', 'opt_name', 'string'),
        ('newName', 'opt_newName', 'string'),
        ('defaultValue', 'opt_defaultValue', 'string'),
        ('alignment', 'opt_alignment', 'string'),
    ),
    'kb_create': (
        ('path', 'opt_path', 'string'),
        ('markdown', 'opt_markdown', 'string'),
    ),
    'kb_move': (
        ('sourcePath', 'opt_sourcePath', 'string'),
        ('targetPath', 'opt_targetPath', 'string'),
        ('expectedSourceHash', 'opt_expectedSourceHash', 'string'),
        ('updateLinks', 'opt_updateLinks', 'boolean'),
    ),
    'kb_delete': (
        ('path', 'opt_path', 'string'),
        ('expectedSourceHash', 'opt_expectedSourceHash', 'string'),
    ),
    'kb_list_files': (
        ('pathPrefix', 'opt_pathPrefix', 'string'),
        ('includeGlob', 'opt_includeGlob', 'string'),
        ('cursor', 'opt_cursor', 'string'),
        ('maxFiles', 'opt_maxFiles', 'integer'),
    ),
    'kb_outline': (
        ('path', 'opt_path', 'string'),
        ('pointer', 'opt_pointer', 'string'),
        ('maxHeadings', 'opt_maxHeadings', 'integer'),
        ('maxBytes', 'opt_maxBytes', 'integer'),
    ),
    'kb_create_pdf_book': (
        ('path', 'opt_path', 'string'),
        ('outputPath', 'opt_outputPath', 'string'),
        ('pageFormat', 'opt_pageFormat', 'string'),
        ('style', 'opt_style', 'string'),
        ('profile', 'opt_profile', 'string'),
    ),
    'kb_download_file': (
        ('path', 'opt_path', 'string'),
    ),
    'kb_save_image': (
        ('data', 'opt_data', 'string'),
        ('fileName', 'opt_fileName', 'string'),
        ('altText', 'opt_altText', 'string'),
        ('targetPath', 'opt_targetPath', 'string'),
    ),
    'kb_list_images': (
        ('cursor', 'opt_cursor', 'string'),
        ('pageSize', 'opt_pageSize', 'integer'),
    ),
    'kb_load_image': (
        ('path', 'opt_path', 'string'),
    ),
    'kb_delete_image': (
        ('path', 'opt_path', 'string'),
    ),
    'kb_move_image': (
        ('sourcePath', 'opt_sourcePath', 'string'),
        ('targetPath', 'opt_targetPath', 'string'),
        ('expectedSha256', 'opt_expectedSha256', 'string'),
        ('updateLinks', 'opt_updateLinks', 'boolean'),
    ),
    'kb_links': (
        ('path', 'opt_path', 'string'),
        ('direction', 'opt_direction', 'string'),
        ('depth', 'opt_depth', 'integer'),
        ('includeMissing', 'opt_includeMissing', 'boolean'),
        ('offset', 'opt_offset', 'integer'),
        ('limit', 'opt_limit', 'integer'),
    ),
    'index_note': (
        ('path', 'opt_path', 'string'),
    ),
    'upsert_vector': (
        ('id', 'opt_id', 'string'),
        ('sourcePath', 'opt_sourcePath', 'string'),
        ('chunkIndex', 'opt_chunkIndex', 'integer'),
        ('content', 'opt_content', 'string'),
        ('collection', 'opt_collection', 'string'),
    ),
    'search_vectors': (
        ('topK', 'opt_topK', 'integer'),
    ),
    'search_knowledge': (
        ('query', 'opt_query', 'string'),
        ('topK', 'opt_topK', 'integer'),
    ),
    'get_chunk': (
        ('id', 'opt_id', 'string'),
        ('includeEmbedding', 'opt_includeEmbedding', 'boolean'),
    ),
    'list_chunks': (
        ('sourcePath', 'opt_sourcePath', 'string'),
        ('collection', 'opt_collection', 'string'),
        ('cursor', 'opt_cursor', 'string'),
        ('limit', 'opt_limit', 'integer'),
    ),
    'update_chunk': (
        ('id', 'opt_id', 'string'),
        ('content', 'opt_content', 'string'),
    ),
    'delete_chunk': (
        ('id', 'opt_id', 'string'),
    ),
}

ENVELOPES: dict[str, str] = {
    'kb_status': 'none',
    'kb_reindex': 'request',
    'kb_search': 'request',
    'kb_read': 'request',
    'kb_patch': 'request',
    'kb_edit_table': 'flat',
    'kb_create': 'request',
    'kb_move': 'request',
    'kb_delete': 'request',
    'kb_list_files': 'request',
    'kb_outline': 'request',
    'kb_create_pdf_book': 'request',
    'kb_download_file': 'request',
    'kb_save_image': 'flat',
    'kb_list_images': 'flat',
    'kb_load_image': 'flat',
    'kb_delete_image': 'flat',
    'kb_move_image': 'request',
    'kb_links': 'request',
    'index_note': 'flat',
    'upsert_vector': 'flat',
    'search_vectors': 'flat',
    'search_knowledge': 'flat',
    'get_chunk': 'flat',
    'list_chunks': 'flat',
    'update_chunk': 'flat',
    'delete_chunk': 'flat',
}


def add_tool_parsers(subparsers: Any) -> None:
    """Add one subparser per tool to an ``argparse`` subparsers action."""
    parser = subparsers.add_parser(
        'kb_status',
        help='Index status',
        description="Report the server's configuration and the state of the search index: where the index lives, which\nembedding provider and model are active, how many documents and chunks are indexed (and which files\ncould not be indexed, with the reason), whether a reindex\nis running (and how the last one ended), pending targeted re-indexing after edits, and whether the\nstored index is compatible with the current configuration. Call it first to orient yourself, and\nafter kb_reindex to follow progress. Takes no arguments (send `{}`); never fails because the index is\nmissing, empty, damaged or busy: a database that cannot be used is named in `compatibility.problems`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the arguments as JSON, @file or - for stdin: `{}` (the tool takes none; a script that passes --json to every tool works here too)")
    parser.set_defaults(tool='kb_status')
    parser = subparsers.add_parser(
        'kb_reindex',
        help='Rebuild the search index',
        description="Start (re)building the search index in the background and return at once. `scope: changed` (default)\nre-indexes only Markdown files whose content changed and drops deleted or excluded ones; `scope: all`\nre-processes every file. `force: true` is needed after kb_status reports the index incompatible with\nthe configuration: it drops and rebuilds the derived index (Markdown files are never touched); on a\ncompatible index it changes nothing. Only one reindex runs at a time: if one is already running, the\ncall returns `started: false` with that run's progress and the new arguments are ignored (nothing is\nqueued). Follow progress and the outcome (`indexing.current` / `indexing.last`) with kb_status;\nincompatibility and embedding failures are reported there, not as errors of this tool.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--scope', dest='opt_scope', type=str.lower, default=None, choices=['changed', 'all'], help='`changed` skips files whose SHA-256 equals the indexed one; `all` re-parses and re-chunks every file (vectors of unchanged chunk texts are reused: the manifest guarantees the same model and text builder).')
    parser.add_argument('--force', dest='opt_force', action=argparse.BooleanOptionalAction, default=None, help='Allow dropping and recreating an index that is incompatible with the current configuration (different chunker, model, dimensions, index mode, ...). Without it an incompatible index makes the run fail with the problems listed in kb_status.')
    parser.set_defaults(tool='kb_reindex')
    parser = subparsers.add_parser(
        'kb_search',
        help='Search the knowledge base',
        description="Find the passages of the indexed Markdown most relevant to a query. Returns up to `topK` chunks, best\nfirst, each with its document path, a pointer to the chunk's first element, a snippet and a `readHint`\nto pass to kb_read for the exact current text (the index may lag behind recent edits; kb_read always\nreads the file). `mode` defaults to the configured mode (normally `hybrid`); when embeddings are off\nor failing, `hybrid` falls back to lexical results with a `warning`, while `semantic` fails with\nINDEX_NOT_READY. Narrow the search with `includeGlobs` / `excludeGlobs` (applied before ranking).\nA passage found in several files (versioned or copied pages) is one result, shown from the largest\nfile holding it; `alsoIn` names the other places, so `topK` results are `topK` different passages.\nFails with INDEX_NOT_READY when nothing is indexed yet (run kb_reindex) or a forced rebuild is running.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--query', dest='opt_query', type=str, default=None, metavar='QUERY', help='What to look for, in natural language or keywords (any language). Must contain a non-whitespace character.')
    parser.add_argument('--mode', dest='opt_mode', type=str.lower, default=None, choices=['lexical', 'semantic', 'hybrid'], help='Retrieval mode. Omit to use the configured `search.defaultMode` (default `hybrid`).')
    parser.add_argument('--top-k', dest='opt_topK', type=int, default=None, metavar='TOP_K', help='Maximum number of results (at least 1; values above 50 are treated as 50). Omit to use the configured `search.maxResults` (default 10).')
    parser.add_argument('--include-globs', dest='opt_includeGlobs', action="append", type=str, default=None, metavar='INCLUDE_GLOBS', help='Only documents whose root-relative path matches at least one of these globs (case-insensitive). Omitted or empty means `**/*.md`. (repeatable)')
    parser.add_argument('--exclude-globs', dest='opt_excludeGlobs', action="append", type=str, default=None, metavar='EXCLUDE_GLOBS', help='Leave out documents whose path matches any of these globs (applied after `includeGlobs`). (repeatable)')
    parser.add_argument('--tags', dest='opt_tags', action="append", type=str, default=None, metavar='TAGS', help='Our extension: only documents carrying every one of these tags (front matter `tags` or inline `#tags`, case-insensitive, with or without `#`; `project` also matches the nested tag `project/alpha`). Applied before ranking, like the globs; omitted or empty means no tag filter. When they select no document, `warning` names the tags no indexed document carries (or says none carries them all). (repeatable)')
    parser.set_defaults(tool='kb_search')
    parser = subparsers.add_parser(
        'kb_read',
        help='Read a Markdown document',
        description="Read the current source of a Markdown document (never the index), whole or from one element on, in\npages. Returns the exact Markdown slice, the addressable elements it contains with their v2 anchors\n(`logical~selfHash~subtreeHash`, the pointers kb_patch needs), `nextPointer` for the next page (null\nat the end; consecutive pages concatenate to exactly the file's text: a leading UTF-8 BOM is no\npart of it, never sent, and kept by every edit) and the file's `sourceHash` (what kb_move /\nkb_delete expect; it covers the BOM). `pointer` defaults to `document`; a hashed anchor from kb_search or an\nearlier read is relocated if the element moved. When the first element read is a table, `table` holds\nits rows and columns for kb_edit_table. Fails with NOT_FOUND for a missing file, INVALID_ARGUMENT for\na malformed or absent pointer and CONFLICT when a hashed anchor no longer matches (re-read from\n`document`).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the document, e.g. from kb_list_files or a search result.')
    parser.add_argument('--pointer', dest='opt_pointer', type=str, default=None, metavar='POINTER', help="Where to start: `document` (default, from the top including front matter), `frontmatter` (the file's opening YAML `---` or TOML `+++` block), a logical pointer such as `2.1` or `1.p3`, or a v1/v2 anchor. A hashed anchor whose element changed or moved ambiguously fails with CONFLICT; a stale subtree hash alone does not block reading.")
    parser.add_argument('--max-elements', dest='opt_maxElements', type=int, default=None, metavar='MAX_ELEMENTS', help='Maximum number of elements in this page, clamped to 1..100 (0 or less reads one element, more than 100 reads 100).')
    parser.add_argument('--max-bytes', dest='opt_maxBytes', type=int, default=None, metavar='MAX_BYTES', help='Maximum UTF-8 size of `markdown` in bytes, clamped to 1..100000. The first element is always returned even when larger. Does not limit `table`.')
    parser.set_defaults(tool='kb_read')
    parser = subparsers.add_parser(
        'kb_patch',
        help='Edit a Markdown document',
        description="Apply one or more structural edits to a Markdown document atomically, addressed by the anchors kb_read\nreturns. All operations resolve against the same revision; the file is rewritten only if every one is\nvalid and the result keeps the document's structure (untouched bytes, line endings and BOM are\npreserved); otherwise nothing is written. Needs `knowledgeBase.allowWrites`. Returns the new\n`sourceHash`; re-read before further edits, since changed elements get new anchors. Concrete targets\nneed a hashed anchor (a plain `1.p2` is refused); a stale hash gives CONFLICT. The edit is never refused\nfor the links it breaks, but `brokenLinks` lists those whose `#Heading` or `#^blockid` named a heading or\nblock id the edit renamed or removed, and the wikilinks by a front-matter alias it renamed or removed (or added, where another note carries it):\nfix them with kb_patch. Use kb_edit_table for cell/row/column edits\nand kb_create for new files.",
        epilog='Fields without an option (`operations`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#kb_patch',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of an existing document.')
    parser.set_defaults(tool='kb_patch')
    parser = subparsers.add_parser(
        'kb_edit_table',
        help='Edit a Markdown table',
        description="Change one GFM pipe table cell-, row- or column-wise without rewriting the rest of the file. Address the\ntable with its current anchor (`tN~selfHash~subtreeHash` from kb_read, whose `table` field shows\nzero-based row and column indexes), pick one `action` and pass only that action's fields (any other\nfield is an error):\n`update_cells` → `updates`; `insert_row` → `values` or `valuesByColumn`, optional `beforeRowIndex`, `valueFormat`;\n`delete_row` → `rowIndex` or `where`; `insert_column` → `name`, optional `defaultValue`, `alignment`,\n`beforeColumn` or `beforeColumnIndex`; `delete_column` → `column` or `columnIndex`; `rename_column` →\ncolumn selector + `newName`; `set_alignment` → column selector + `alignment`.\nNames and values match exactly (case-sensitive display text). Returns the table's new anchor, so edits\ncan be chained without re-reading. Needs `knowledgeBase.allowWrites`. Delete a whole table with\nkb_patch `delete`.",
        epilog='Fields without an option (`updates`, `where`, `valuesByColumn`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#kb_edit_table',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the document holding the table.')
    parser.add_argument('--pointer', dest='opt_pointer', type=str, default=None, metavar='POINTER', help='Hashed anchor of a standalone table (`tN` or `<section>.tN`), v2 as returned by kb_read (v1 `tN~selfHash` accepted). The table must not have been changed since.')
    parser.add_argument('--action', dest='opt_action', type=str.lower, default=None, choices=['update_cells', 'insert_row', 'delete_row', 'insert_column', 'delete_column', 'rename_column', 'set_alignment'], help='The edit to make; decides which other fields are allowed (see the tool description).')
    parser.add_argument('--row-index', dest='opt_rowIndex', type=int, default=None, metavar='ROW_INDEX', help='`delete_row`: zero-based data row to delete (alternative to `where`).')
    parser.add_argument('--column', dest='opt_column', type=str, default=None, metavar='COLUMN', help='`delete_column`, `rename_column`, `set_alignment`: the column by header name (alternative to `columnIndex`; a column with an empty name must be selected by index).')
    parser.add_argument('--column-index', dest='opt_columnIndex', type=int, default=None, metavar='COLUMN_INDEX', help='`delete_column`, `rename_column`, `set_alignment`: zero-based column index (alternative to `column`).')
    parser.add_argument('--values', dest='opt_values', action="append", type=str, default=None, metavar='VALUES', help="`insert_row`: the new row's cells, exactly one per column, left to right, written as `valueFormat` says (plain text by default). Alternative to `valuesByColumn`. (repeatable)")
    parser.add_argument('--value-format', dest='opt_valueFormat', type=str.lower, default=None, choices=['text', 'markdown'], help="Our extension. `insert_row`: how the new row's cells are written, as for `updates` (default `text`: escaped so they display literally; `markdown`: verbatim, inline Markdown such as `` `code` `` or links allowed, an unescaped `|` refused).")
    parser.add_argument('--before-row-index', dest='opt_beforeRowIndex', type=int, default=None, metavar='BEFORE_ROW_INDEX', help='`insert_row`: insert before this zero-based data row (must be less than the row count). Omit to append after the last row.')
    parser.add_argument('--before-column', dest='opt_beforeColumn', type=str, default=None, metavar='BEFORE_COLUMN', help='`insert_column`: insert before the column with this name. Omit both `beforeColumn` and `beforeColumnIndex` to append a last column.')
    parser.add_argument('--before-column-index', dest='opt_beforeColumnIndex', type=int, default=None, metavar='BEFORE_COLUMN_INDEX', help='`insert_column`: insert before this zero-based column (must be less than the column count).')
    parser.add_argument('--name', dest='opt_name', type=str, default=None, metavar='NAME', help='`insert_column`: header text of the new column (plain text, escaped).')
    parser.add_argument('--new-name', dest='opt_newName', type=str, default=None, metavar='NEW_NAME', help="`rename_column`: the new header text (plain text, escaped). It may equal another column's name (duplicate headers are valid); that name then selects neither column (CONFLICT), so select them by index.")
    parser.add_argument('--default-value', dest='opt_defaultValue', type=str, default=None, metavar='DEFAULT_VALUE', help='`insert_column`: plain-text value put in every existing row of the new column (default empty).')
    parser.add_argument('--alignment', dest='opt_alignment', type=str.lower, default=None, choices=['none', 'left', 'center', 'right'], help="`set_alignment` (required) and `insert_column` (optional, default `none`): the column's alignment.")
    parser.set_defaults(tool='kb_edit_table')
    parser = subparsers.add_parser(
        'kb_create',
        help='Create a Markdown document',
        description="Create a new Markdown document with the given content (written as given in UTF-8: no BOM is added,\nand a `markdown` starting with U+FEFF gives the file a BOM, which kb_read leaves out), creating\nmissing parent folders. Never overwrites: an existing file at `path` fails with ALREADY_EXISTS. Needs\n`knowledgeBase.allowWrites`. Returns the new file's `sourceHash`; the document is queued for\nindexing (`indexSynchronized` false until then). Use kb_read afterwards to get element anchors.\nA new note's file name and front-matter `aliases` can take over Obsidian wikilinks by that name that\nopened another note: `brokenLinks` lists them, to fix with kb_patch (write the path they meant).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the new document, e.g. `notes/meeting-2024-05.md`.')
    parser.add_argument('--markdown', dest='opt_markdown', type=str, default=None, metavar='MARKDOWN', help='Full content of the new file, written byte-for-byte as UTF-8 (may be empty).')
    parser.set_defaults(tool='kb_create')
    parser = subparsers.add_parser(
        'kb_move',
        help='Move or rename a Markdown document',
        description="Move or rename a Markdown document within the knowledge base, creating missing target folders. Guarded\nby the document's current SHA-256 (`sourceHash` from kb_read or a previous edit): if the file changed\nsince, nothing happens and CONFLICT is returned. Never overwrites (ALREADY_EXISTS). Links in other\ndocuments are left alone unless `updateLinks` is true; either way `brokenLinks` lists the ones that\nreached the document and no longer do (without `updateLinks`, those by its old path; a wikilink by name\nthat still finds it is not listed), and, moved to another folder without `updateLinks`, the document's own\nrelative links that reached a document and no longer do: fix them with kb_patch, or move it back and again with `updateLinks`. Needs\n`knowledgeBase.allowWrites`. Returns `path` = the new path, `previousPath` = the old one, and the\nunchanged `sourceHash`; both paths are queued for re-indexing.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--source-path', dest='opt_sourcePath', type=str, default=None, metavar='SOURCE_PATH', help='Root-relative path of the existing document.')
    parser.add_argument('--target-path', dest='opt_targetPath', type=str, default=None, metavar='TARGET_PATH', help='Root-relative path it should have afterwards; must not exist and must differ from `sourcePath`.')
    parser.add_argument('--expected-source-hash', dest='opt_expectedSourceHash', type=str, default=None, metavar='EXPECTED_SOURCE_HASH', help="The document's current `sourceHash` (SHA-256 hex, any case).")
    parser.add_argument('--update-links', dest='opt_updateLinks', action=argparse.BooleanOptionalAction, default=None, help="Our extension: also rewrite every link that reaches the moved document from another document (relative Markdown links, reference definitions, wikilinks and embeds that would no longer resolve, or that would open another note of the same name, as Obsidian's rename keeps them) and the moved document's own relative links (to documents, images, attachments, HTML `<img src>`, each `srcset` candidate of `<img>` and `<source>`, and the files audio and video tags name: the `src` of `<video>`, `<audio>`, `<source>`, `<track>`, `<embed>` and an `<iframe>` to an attachment, `<video poster>`, `<object data>`), so every link keeps working. Only the link destinations change; link text, aliases, fragments and every other byte (BOM, line endings) stay. All files change together or none does: if any of them changed while the move was prepared, nothing is written and CONFLICT names it. The rewritten files are listed in `updatedPaths`.")
    parser.set_defaults(tool='kb_move')
    parser = subparsers.add_parser(
        'kb_delete',
        help='Delete a Markdown document',
        description='Delete a Markdown document. Guarded by its current SHA-256 (`sourceHash` from kb_read or a previous\nedit): if the file changed since, nothing is deleted and CONFLICT is returned. Folders are left in\nplace. Needs `knowledgeBase.allowWrites`. Returns `sourceHash: null`; the path is queued for removal\nfrom the index. The delete is never refused for the links it breaks, but `brokenLinks` lists the links\nin other documents that reached the document and now reach none: fix or remove them with kb_patch (a\nwikilink by name that now opens another note of that name is not listed). To delete part of a document\nuse kb_patch `delete` / `delete_section`.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the document to delete.')
    parser.add_argument('--expected-source-hash', dest='opt_expectedSourceHash', type=str, default=None, metavar='EXPECTED_SOURCE_HASH', help="The document's current `sourceHash` (SHA-256 hex, any case).")
    parser.set_defaults(tool='kb_delete')
    parser = subparsers.add_parser(
        'kb_list_files',
        help='List files',
        description="List the files under the knowledge-base root (Markdown documents and other assets), sorted by path.\nUse it to discover document paths before kb_read, kb_outline or kb_patch.\n`pathPrefix` selects one folder (or one exact file) by whole path segments: `books/chapter` selects\n`books/chapter/...` but not `books/chapter.md`. `includeGlob` filters further (default `**/*`).\nBoth filters compare case-insensitively. `.git`, the index's own files, the server's temporary files\nand symlinks are never listed. A folder the operating system refuses to list, and a file or folder\nwhose name the tools refuse (`nul.md`, `what?.md`, `dir./`, a name that is not valid UTF-8), are left\nout and named in `skipped` with the reason; everything else is still listed.\nLong listings come in pages of at most `maxFiles` (2000): pass `nextCursor` back as `cursor` to read\non. A page starts after the cursor's place in the sort order, so files created or deleted between\npages do not shift the others: every file present throughout is listed once.\nFails with INVALID_PATH for an unsafe prefix and INVALID_ARGUMENT for a malformed glob; a blank prefix or glob is no filter.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path-prefix', dest='opt_pathPrefix', type=str, default=None, metavar='PATH_PREFIX', help="Folder (or file) path whose files to list, root-relative with forward slashes; a trailing `/` is ignored. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused. Omit it, or leave it blank, for the whole root.")
    parser.add_argument('--include-glob', dest='opt_includeGlob', type=str, default=None, metavar='INCLUDE_GLOB', help="Only files whose root-relative path matches this case-insensitive glob (`**` crosses folders, `*` does not, `?` is one character; a trailing `/` names a folder's whole tree). Omitted or blank: `**/*`, every file. Must not start with `/` or `\\`, contain `:`, control characters or a `..` segment.")
    parser.add_argument('--cursor', dest='opt_cursor', type=str, default=None, metavar='CURSOR', help='`nextCursor` of the previous page (the last path it listed): this page lists the files sorted after it. Omit for the first page.')
    parser.add_argument('--max-files', dest='opt_maxFiles', type=int, default=None, metavar='MAX_FILES', help='Maximum number of files in this page, clamped to 1..2000.')
    parser.set_defaults(tool='kb_list_files')
    parser = subparsers.add_parser(
        'kb_outline',
        help='Outline a Markdown document',
        description="Return the heading tree of a Markdown document, read from the current file (not the index): each\nheading with its level, title and v2 anchor, nested under the nearest preceding heading of a lower\nlevel. Use it to find the section to read (kb_read with the heading's pointer) or to edit\n(kb_patch `replace_section` / `delete_section`). Headings inside lists and block quotes do not count.\nLong outlines come in pages, as kb_read's text does: at most `maxHeadings` headings (1000 by\ndefault and at most) and about `maxBytes` of titles and pointers; `nextPointer` names the first\nheading left out, to pass as `pointer` for the next page (null when the page reaches the end).\nEach page is a tree of its own headings: one whose parent is on an earlier page is at the page's\ntop level (its `pointer`'s section path and `level` place it). Fails with NOT_FOUND for a missing\nfile, INVALID_ARGUMENT for a malformed or absent pointer and CONFLICT when a hashed anchor no\nlonger matches (start again from `document`).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the document.')
    parser.add_argument('--pointer', dest='opt_pointer', type=str, default=None, metavar='POINTER', help='Where to start: `document` (default, the first heading), a `nextPointer` of an earlier page, or any pointer kb_read takes (the page starts at the first heading at or after that element). Resolved as kb_read resolves it: a hashed anchor whose element changed or moved ambiguously fails with CONFLICT.')
    parser.add_argument('--max-headings', dest='opt_maxHeadings', type=int, default=None, metavar='MAX_HEADINGS', help='Maximum number of headings in this page, clamped to 1..1000.')
    parser.add_argument('--max-bytes', dest='opt_maxBytes', type=int, default=None, metavar='MAX_BYTES', help="Maximum UTF-8 size of the page's titles and pointers together, clamped to 1..100000; the first heading is always returned even when larger.")
    parser.set_defaults(tool='kb_outline')
    parser = subparsers.add_parser(
        'kb_create_pdf_book',
        help='Export a document as PDF',
        description="Render a Markdown document, or a book of chapters, to a PDF: headings with bookmarks, emphasis,\ncode, nested and task lists, quotes, GitHub alerts and Obsidian callouts, GFM and HTML tables, local images (also Obsidian\n`![[pic.png|300]]` embeds, found by name anywhere as Obsidian finds them; an embedded note alone on its line, `![[Note]]`, `![[Note#Heading]]` or `![[Note#^id]]`, printed in place as a quote of that note, section or block, as Obsidian shows it; `[[links]]` read as their\nalias or name, linked when they reach a chapter; an HTML `<img>` at the width or height it asks for) and any\nleft-to-right script (CJK text needs a TrueType CJK font; other scripts and emoji are drawn in any\ninstalled TrueType face that has them, a glyph per character, without conjuncts or reordered vowel\nsigns; characters no font has are listed in `warnings`, and so is right-to-left text, which is set\nleft to right). What Obsidian's reading view\nhides is not printed: `%%comments%%` (one never closed hides nothing: `warnings` names it) and\n`^block-ids`; `==highlights==` are highlighted. Documentation sites' markup is printed as the site\nshows it: a `:::type [title]` container (Docusaurus, VitePress; MyST's `:::{note}` and ```` ```{note} ````) is drawn as the alert box of its type\n(another type as a plain box with its title), MyST roles show their text (`{ref}` the title of the\nheading a `(label)=` target names, linked to it) and target lines are not printed, MyST `{image}` and `{figure}`\nare drawn (the caption under the figure), a `{list-table}` is a table and an `{include}` of a `.md` file inside\nthe knowledge base prints that file in place (one that cannot be read is named in `warnings`), an HTML\n`<details>` is a box headed by its summary, and MDX `import`/`export` statements, kramdown\nattribute lists (`{: .note}`, `{:toc}`; one right after a link or picture is applied, its `width` sizing\nthe picture), Liquid `{% comment %}` bodies and Liquid or Hugo tags alone on\ntheir lines (`{% include x.html %}`, `{{< figure >}}`) are not printed; inline tags and `{{ variables }}`\nare, as written. A document\nwhose blocks are only links, like mdBook's `SUMMARY.md` or an Obsidian map of `[[links]]`, is a book:\nthe linked `.md` files are its chapters in order, with a title page, a table of contents and links between chapters.\nWrites `outputPath` (default: the document's path with `.pdf`) inside the knowledge base,\nreplacing an existing PDF there atomically; the Markdown, other files and the index are not\ntouched. SVG images are drawn as vector graphics. Missing chapters and missing, unreadable or remote\nimages become placeholders listed in `warnings`, and so do SVGs that cannot be drawn safely (a script or\n`<foreignObject>`, a reference to another file or an address, over 5 MiB or 100,000 elements);\nremote and absolute image URLs are never fetched. Needs `knowledgeBase.allowWrites`.\nFetch the result with kb_download_file (which refuses files over 25 MiB; use `profile: screen` for a\nsmaller file). A whole book can take minutes: a call with a `progressToken` gets progress\nnotifications (chapters read and prepared, then pages laid out, with a total), and a cancelled\ncall stops within a page and writes nothing.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the Markdown document to export.')
    parser.add_argument('--output-path', dest='opt_outputPath', type=str, default=None, metavar='OUTPUT_PATH', help='Root-relative path of the PDF to write, ending in `.pdf`. Omit for `path` with its `.md` replaced by `.pdf`. An existing PDF there is replaced.')
    parser.add_argument('--page-format', dest='opt_pageFormat', type=str.lower, default=None, choices=['a4', 'a5', 'a6', 'b5', 'letter'], help='Page size.')
    parser.add_argument('--style', dest='opt_style', type=str.lower, default=None, choices=['compact', 'classic', 'modern', 'technical', 'academic'], help='Typographic style (fonts, spacing, heading and code appearance).')
    parser.add_argument('--profile', dest='opt_profile', type=str.lower, default=None, choices=['screen', 'standard', 'print'], help='Image quality: `screen` 96 DPI / JPEG quality 65, `standard` 150 DPI / 82, `print` 300 DPI / 95 (not PDF/X, not CMYK). Images with more pixels than the DPI needs at their printed size are downsampled (an ICC profile is kept); images already small enough are embedded unchanged.')
    parser.set_defaults(tool='kb_create_pdf_book')
    parser = subparsers.add_parser(
        'kb_download_file',
        help='Download a file',
        description="Return the raw bytes of any regular file under the knowledge-base root (a PDF made by\nkb_create_pdf_book, an attachment, a Markdown file, ...) up to 25 MiB. The result has two content\nblocks: an embedded binary resource with the original bytes, then a JSON text block\n`{path, mimeType, bytes, sha256}`. Works without write permission. For looking at an image use\nkb_load_image (it converts GIFs into a viewable preview). Refuses `.git`, the index's files and\nanything reached through a symlink.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the file, e.g. from kb_list_files.')
    parser.set_defaults(tool='kb_download_file')
    parser = subparsers.add_parser(
        'kb_save_image',
        help='Save an uploaded image',
        description="Save an image into the knowledge base and return a ready-to-paste Markdown image link. Pass exactly\none of: `file`, when the client gives you an OpenAI file reference for an image the user attached\n(`download_url` + `file_id`; the bytes are downloaded over HTTPS from public hosts only), or `data`,\nwhen you have the image bytes yourself (Claude Code, Codex, the MCP Inspector and other clients\nwithout file references): standard base64 or a `data:image/png;base64,...` URI. The image must be\na PNG, JPEG, WebP or GIF (recognised by its bytes) of at most 25 MiB. Without `targetPath` it goes\nto `images/` under `fileName` (or the upload's own name, or a generated one), adding `-2`, `-3`, ...\nwhen the name is taken (also by a name differing only in case); with `targetPath` it is saved exactly there and never overwrites\n(ALREADY_EXISTS). Needs `knowledgeBase.allowWrites`. The Markdown is not changed: insert the\nreturned `markdown` with kb_patch. A download reports the bytes received (of its Content-Length)\nas progress to a call with a `progressToken`; a cancelled one stops and leaves no file.",
        epilog='Fields without an option (`file`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#kb_save_image',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--data', dest='opt_data', type=str, default=None, metavar='DATA', help="The image bytes as standard base64 (line breaks allowed) or a data URI `data:image/<png|jpeg|webp|gif>;base64,<base64>`, at most 25 MiB decoded. For clients that cannot pass an OpenAI file reference. Not together with `file`; a data URI's type must match the bytes.")
    parser.add_argument('--file-name', dest='opt_fileName', type=str, default=None, metavar='FILE_NAME', help='File name (no folder) for the default `images/` folder, e.g. `cover` or `cover.png`; the canonical extension is added when missing, a wrong one is refused. Not allowed together with `targetPath`.')
    parser.add_argument('--alt-text', dest='opt_altText', type=str, default=None, metavar='ALT_TEXT', help='Alternative text for the returned Markdown link (line breaks become spaces; `\\`, `[`, `]` are escaped).')
    parser.add_argument('--target-path', dest='opt_targetPath', type=str, default=None, metavar='TARGET_PATH', help='Full root-relative destination including file name and an extension matching the image format, e.g. `docs/img/diagram.png`. Missing folders are created. Not allowed together with `fileName`.')
    parser.set_defaults(tool='kb_save_image')
    parser = subparsers.add_parser(
        'kb_list_images',
        help='List images',
        description="List the image files (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`, by extension) anywhere under the\nknowledge-base root, sorted by path, one page at a time. Pass `nextCursor` back as `cursor` for the\nnext page; it is null on the last page. A cursor stays valid when files are added or removed. `.git`,\nthe index's files and symlinks are skipped. Use kb_load_image to look at one.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--cursor', dest='opt_cursor', type=str, default=None, metavar='CURSOR', help='`nextCursor` of the previous page, unchanged. Omit for the first page.')
    parser.add_argument('--page-size', dest='opt_pageSize', type=int, default=None, metavar='PAGE_SIZE', help='Maximum number of images in this page.')
    parser.set_defaults(tool='kb_list_images')
    parser = subparsers.add_parser(
        'kb_load_image',
        help='Look at an image',
        description='Return an image from the knowledge base so you can see it. The result has two content blocks: the\nimage itself (PNG, JPEG and WebP as stored; a GIF as a PNG preview of its first frame), then a JSON\ntext block `{path, mimeType, bytes, sha256}` describing the original file. Works without write\npermission. Files over 25 MiB, folders, files whose content does not match their extension, and\nimages no client could show (truncated or damaged, or over 8000 pixels a side) are refused. Use\nkb_download_file for the exact bytes of other files.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the image, e.g. from kb_list_images.')
    parser.set_defaults(tool='kb_load_image')
    parser = subparsers.add_parser(
        'kb_delete_image',
        help='Delete an image',
        description='Delete one image file (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`) from the knowledge base. Markdown\nthat links to it is not changed, folders are left in place and nothing is re-indexed. The delete is\nnever refused for the links it breaks, but `brokenLinks` lists the links in indexed documents that\nreached the image and now reach no file: fix or remove them with kb_patch (an `![[name]]` embed that\nnow opens another file of that name is not listed). Needs `knowledgeBase.allowWrites`. Returns\n`{path, deleted: true, brokenLinks, brokenLinkCount}`.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the image to delete.')
    parser.set_defaults(tool='kb_delete_image')
    parser = subparsers.add_parser(
        'kb_move_image',
        help='Move or rename an image',
        description="Move or rename one image file within the knowledge base, creating missing target folders. Never\noverwrites (ALREADY_EXISTS) and never copies: it is a rename. The image's content must match both\nextensions (`.jpg` and `.jpeg` are interchangeable, so a PNG cannot become `x.jpg`). Optionally guarded\nby `expectedSha256` (CONFLICT if the file changed). Markdown references to the image are left alone\nunless `updateLinks` is true; either way `brokenLinks` lists the ones that reached the image and no\nlonger do (without `updateLinks`, those by its old path; an `![[name]]` embed that still finds it by\nname is not listed): fix them with kb_patch, or move it back and again with `updateLinks`. Needs\n`knowledgeBase.allowWrites`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--source-path', dest='opt_sourcePath', type=str, default=None, metavar='SOURCE_PATH', help='Root-relative path of the existing image.')
    parser.add_argument('--target-path', dest='opt_targetPath', type=str, default=None, metavar='TARGET_PATH', help='Root-relative path it should have afterwards; must not exist and must differ from `sourcePath`.')
    parser.add_argument('--expected-sha256', dest='opt_expectedSha256', type=str, default=None, metavar='EXPECTED_SHA256', help="The image's SHA-256 as last seen (e.g. from kb_load_image or kb_save_image); when given, the move happens only if the file still has it. Omit to move unconditionally.")
    parser.add_argument('--update-links', dest='opt_updateLinks', action=argparse.BooleanOptionalAction, default=None, help='Our extension: also rewrite every reference that reaches the image (`![alt](path)`, plain links `[text](path)`, reference definitions, HTML `<img src>` and each `srcset` candidate of `<img>` and `<source>` (its URL alone; descriptors such as `2x` or `480w` stay), `<video poster>` and `<object data>` outside code and comments, `![[file]]` embeds that would no longer find it, or whose bare name would then open another file of that name, as in Obsidian), only the destination bytes, all documents or none, exactly like kb_move `updateLinks`. The rewritten documents are listed in `updatedPaths`.')
    parser.set_defaults(tool='kb_move_image')
    parser = subparsers.add_parser(
        'kb_links',
        help='Follow links between documents',
        description='Show the explicit links between documents around one document: the documents it links to\n(`outgoing`), the documents that link to it (`incoming`), or both, optionally following links up to\n`depth` hops. Links whose target document does not exist are flagged (`targetExists: false`) and\ncollected in `missing`, which makes it a broken-link check. Inline (`[text](page.md)`), reference-style\nand autolinks (`<page.md>`) and the `href` of HTML `<a>` tags (outside code and comments) to relative\n`.md` targets inside the root count (fragments like `#install` are kept apart), and so do\nObsidian wikilinks and embeds (`[[Note]]`, `[[Note#Heading]]`, `[[Note|alias]]`, `![[Note]]`, and\nwikilinks in front-matter property values such as `related: "[[Note]]"`), which resolve like\nObsidian: `./` or `../` names from the document\'s folder, else by root-relative path, else by\nfile name (or path tail) anywhere, else by an alias (case and Unicode normal form ignored); a name\nseveral documents share reaches the one Obsidian opens (one in the linking document\'s folder, else\nthe one nearest the root, then by path order) and lists them all in `candidates`; an alias several\ndocuments carry is reported with its `candidates`, never guessed. Web URLs,\nroot-absolute `/...` targets and site-generator templates (`{{site.url}}/images/a.png`, `{% link a.md %}`) are ignored; links in code, HTML comments or Obsidian `%%comments%%` do not count; nothing is\ninferred from meaning. Without `path`, the whole knowledge base is checked: `links` and `missing` hold\nevery broken link, `orphans` the documents nothing links to and `missingImages` the image references\n(Markdown images, and the `src` of HTML `<img>` tags and each URL of the `srcset` of `<img>` and `<source>` tags, and the files audio and video tags name: the `src` of `<video>`, `<audio>`, `<source>`, `<track>` and `<embed>`, `<video poster>`, `<object data>`, and an `<iframe src>` to an attachment; outside code and comments), plain links and\n`<a href>` to an attachment (`[spec](files/spec.pdf)`: a picture, PDF, audio, video or office file;\nlinks to other files or to folders are left alone), embeds of any file (`![[pic.png]]`, `![[notes.pdf]]`) and\nwikilinks to a file that is not a note (`[[report.pdf]]`) whose file does not exist; `counts` gives\neach list\'s full length. Each list holds at most `limit` items (1000) from `offset` on: a large\nbase\'s check fits a small context with `limit: 50`, read on with `nextOffset`. `ignoredLinks` counts\nthe links written as site URLs (root-absolute `/docs/page/` or a template) that were not followed, in\n`path` or in the whole base: when it is high, empty `links` do not mean the pages are unlinked. Works from the index, so it reflects the last\nkb_reindex / re-indexing (like kb_search); INDEX_NOT_READY when nothing is indexed yet.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole request object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of the document to start from. It may be a missing document that others still link to (to find who links to it). Omit it to check the whole knowledge base (broken links, orphans, missing images; `direction` and `depth` do not apply then).')
    parser.add_argument('--direction', dest='opt_direction', type=str.lower, default=None, choices=['outgoing', 'incoming', 'both'], help='`outgoing` follows links from a document to its targets, `incoming` from a target back to the documents linking to it, `both` follows both at every hop.')
    parser.add_argument('--depth', dest='opt_depth', type=int, default=None, metavar='DEPTH', help='How many hops to follow from `path`; 1 lists only its direct links.')
    parser.add_argument('--include-missing', dest='opt_includeMissing', action=argparse.BooleanOptionalAction, default=None, help='Report links whose target document does not exist (in `links` with `targetExists: false` and in `missing`). False leaves them out of both.')
    parser.add_argument('--offset', dest='opt_offset', type=int, default=None, metavar='OFFSET', help="Where to start in the walk's links (and, without `path`, in each of `links`, `orphans` and `missingImages`): pass the `nextOffset` of the previous answer to read on past the `limit`. The order is fixed for an unchanged index; a re-index between pages can shift it.")
    parser.add_argument('--limit', dest='opt_limit', type=int, default=None, metavar='LIMIT', help="Most items in each list of this answer (`links`, `missing`, `orphans`, `missingImages`), from `offset` on; `truncated` and `nextOffset` say when more follow. A small limit keeps a large knowledge base's check within an agent's context (`counts` still gives the totals).")
    parser.set_defaults(tool='kb_links')
    parser = subparsers.add_parser(
        'index_note',
        help='Index one note now [chunks]',
        description="Index one Markdown document immediately (lexical and vectors) and wait until its chunks have their\nvectors, then return the ids of its chunks (`md:<path>#<chunkIndex>`), their count, the embedding\ndimensions and the quantization bits of the stored vectors (32 float, 8 int8, 1 binary; null without\nembeddings). A document outside the indexed set (include/exclude globs) is refused. Part of the\n`chunks` tool set (NoteHarbor's API; enable with `server.toolsets: [kb, chunks]`).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--path', dest='opt_path', type=str, default=None, metavar='PATH', help='Root-relative path of a Markdown (`.md`) document.')
    parser.set_defaults(tool='index_note')
    parser = subparsers.add_parser(
        'upsert_vector',
        help='Store an external chunk and its embedding [chunks]',
        description="Store a chunk produced outside this server (your own text and embedding) in its own collection\n(default `external`), which reindexing never touches. With the `id` of an existing external chunk\nit replaces that chunk; without `id` a new one is created (`ext_<32 hex>`). The embedding must have\nthe index's dimensions (kb_status `embeddingDimensions`; without embeddings, the first external\nvector fixes the size). Ids of Markdown chunks (`md:...`) are refused: change the Markdown with\nkb_patch. Part of the `chunks` tool set.",
        epilog='Fields without an option (`embedding`, `metadata`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#upsert_vector',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--id', dest='opt_id', type=str, default=None, metavar='ID', help='Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.')
    parser.add_argument('--source-path', dest='opt_sourcePath', type=str, default=None, metavar='SOURCE_PATH', help='Where the chunk comes from (any string; used by `pathPrefix` / `pathGlobs` filters).')
    parser.add_argument('--chunk-index', dest='opt_chunkIndex', type=int, default=None, metavar='CHUNK_INDEX', help='Position of the chunk within its source (0-based; at most 2^31 - 1, which both storage engines hold).')
    parser.add_argument('--content', dest='opt_content', type=str, default=None, metavar='CONTENT', help='')
    parser.add_argument('--collection', dest='opt_collection', type=str, default=None, metavar='COLLECTION', help='Namespace of external chunks (default `external`). `markdown` is reserved for chunks derived from the Markdown.')
    parser.set_defaults(tool='upsert_vector')
    parser = subparsers.add_parser(
        'search_vectors',
        help='Nearest chunks to a vector [chunks]',
        description="Return the `topK` chunks (Markdown and external) whose stored vectors are closest to `embedding`,\nbest first, with `score` = cosine similarity. `filter` narrows by source path prefix or globs,\ntags, metadata equality and collections inside retrieval, before the limit. The vector must have\nthe index's dimensions (kb_status `embeddingDimensions`). Chunks still waiting for their vector and\nexternal chunks marked `embeddingStale` are not found. Part of the `chunks` tool set.",
        epilog='Fields without an option (`embedding`, `filter`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#search_vectors',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--top-k', dest='opt_topK', type=int, default=None, metavar='TOP_K', help='Maximum results (default 10; values above 100 are treated as 100).')
    parser.set_defaults(tool='search_vectors')
    parser = subparsers.add_parser(
        'search_knowledge',
        help='Semantic search returning chunks [chunks]',
        description="Embed `query` with the configured embedding provider and return the `topK` nearest chunks (Markdown\nand external), best first, with `score` = cosine similarity; when vectors are stored as int8 it is\nthe query's cosine with the stored codes (decision 381). `filter` narrows by path, tags, metadata and\ncollections before the limit. For ranked passages with snippets and read hints use kb_search.\nPart of the `chunks` tool set.",
        epilog='Fields without an option (`filter`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#search_knowledge',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--query', dest='opt_query', type=str, default=None, metavar='QUERY', help='')
    parser.add_argument('--top-k', dest='opt_topK', type=int, default=None, metavar='TOP_K', help='Maximum results (default 10; values above 100 are treated as 100).')
    parser.set_defaults(tool='search_knowledge')
    parser = subparsers.add_parser(
        'get_chunk',
        help='Read one chunk [chunks]',
        description='Return one chunk by id: its text, source, metadata and the size of its vector; the vector itself\nonly with `includeEmbedding: true`. Part of the `chunks` tool set.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--id', dest='opt_id', type=str, default=None, metavar='ID', help='Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.')
    parser.add_argument('--include-embedding', dest='opt_includeEmbedding', action=argparse.BooleanOptionalAction, default=None, help='')
    parser.set_defaults(tool='get_chunk')
    parser = subparsers.add_parser(
        'list_chunks',
        help='List chunks page by page [chunks]',
        description='List chunks in a stable order (Markdown chunks by path and index, then external chunks by collection\nand id), `limit` per page; pass `nextCursor` back as `cursor` for the next page (null on the last).\nNarrow with `sourcePath` (exact) and `collection` (`markdown` for chunks derived from the Markdown).\nVectors are never included. Part of the `chunks` tool set.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--source-path', dest='opt_sourcePath', type=str, default=None, metavar='SOURCE_PATH', help='')
    parser.add_argument('--collection', dest='opt_collection', type=str, default=None, metavar='COLLECTION', help='Namespace of external chunks (default `external`). `markdown` is reserved for chunks derived from the Markdown.')
    parser.add_argument('--cursor', dest='opt_cursor', type=str, default=None, metavar='CURSOR', help='`nextCursor` of the previous page.')
    parser.add_argument('--limit', dest='opt_limit', type=int, default=None, metavar='LIMIT', help='')
    parser.set_defaults(tool='list_chunks')
    parser = subparsers.add_parser(
        'update_chunk',
        help='Change an external chunk [chunks]',
        description='Change the content, embedding and/or metadata of an external chunk (given fields replace the stored\nones; `metadata` replaces the whole object). Changing `content` without a new `embedding` keeps the\nold vector but marks the chunk `embeddingStale`, which leaves it out of vector search until an\nembedding is given. Markdown chunks are read-only: edit the Markdown with kb_patch. Part of the\n`chunks` tool set.',
        epilog='Fields without an option (`embedding`, `metadata`) go in --json; options override its fields.\nEvery field: docs/reference/tools.md#update_chunk',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--id', dest='opt_id', type=str, default=None, metavar='ID', help='Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.')
    parser.add_argument('--content', dest='opt_content', type=str, default=None, metavar='CONTENT', help='')
    parser.set_defaults(tool='update_chunk')
    parser = subparsers.add_parser(
        'delete_chunk',
        help='Delete an external chunk [chunks]',
        description='Delete an external chunk and its vector. Markdown chunks are refused: they disappear when the\nMarkdown changes (kb_patch, kb_delete). Part of the `chunks` tool set.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", dest="json_input", metavar="JSON", help="the whole argument object as JSON, @file or - for stdin")
    parser.add_argument('--id', dest='opt_id', type=str, default=None, metavar='ID', help='Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.')
    parser.set_defaults(tool='delete_chunk')
