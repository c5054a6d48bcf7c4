# generated from spec/ by tools/generate.py, do not edit
# ruff: noqa

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints
from typing_extensions import TypeAliasType


class Models(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )


class BrokenLink(BaseModel):
    """
    A link in another document (or, for kb_patch, the edited one; for kb_move, the moved one at its new path) that a write left going nowhere, or to another note than it opened (kb_patch, kb_move, kb_delete, kb_create, kb_move_image, kb_delete_image `brokenLinks`).
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Document holding the link (for kb_patch, `path` itself for a link inside the edited document; for kb_move, `path` for a link of the moved document).
    """
    pointer: Annotated[
        str | None,
        Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$'),
    ]
    """
    v2 anchor of the element holding the link (of the indexed revision; of the write's result for a link in a document the write changed), for kb_patch after kb_read; null when the link sits outside any addressable element.
    """
    kind: Literal['inline', 'reference', 'autolink', 'wikilink', 'embed', 'href', 'image', 'html']
    """
    How the link is written, as kb_links' `kind` (`autolink` is `<page.md>`, `embed` is `![[Note]]` or `![[pic.png]]`, `href` is the `href` of an HTML `<a>` tag); links to a picture (kb_move_image, kb_delete_image) may also be `image` (`![alt](pic.png)`, `![alt][ref]`) or `html` (the `src` of an HTML `<img>` tag, a URL of the `srcset` of an `<img>` or `<source>` tag, or the `poster` of a `<video>` or `data` of an `<object>` naming the picture).
    """
    destination: str
    """
    The destination as written (`setup.md#old-heading`, `Setup#Old heading`, `Setup#^intro`, `#old-heading`, `../setup.md`, `Setup`, `img/a.png`, `a.png`).
    """
    fragment: str | None
    """
    The fragment without `#` as kb_links gives it (`^id` for a block reference; a Markdown link's percent-decoded); null for a link without one (for kb_patch, only a wikilink broken by an alias it took away; its other broken links are broken fragments).
    """
    text: str | None
    """
    The link text as plain text; null for an autolink, an HTML `<a>` or a wikilink without one.
    """


class ChunkFilter(BaseModel):
    """
    Restricts retrieval before ranking (never applied after the limit). Every given condition must hold.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path_prefix: Annotated[str | None, Field(alias='pathPrefix', max_length=1024)] = (
        None
    )
    """
    Source path equal to this, or under this folder (`guide` matches `guide/a.md`, not `guides/b.md`). Case-insensitive. A leading `/` also matches external source paths that start with it (`/data` matches `/data/crm.txt` and `data/a.md`, decision 736).
    """
    path_globs: Annotated[list[str] | None, Field(alias='pathGlobs', max_length=64)] = (
        None
    )
    """
    Source path matches at least one of these globs.
    """
    tags: Annotated[list[str] | None, Field(max_length=32)] = None
    """
    The chunk carries every one of these tags (front matter `tags` for Markdown chunks, metadata `tags` for external ones).
    """
    metadata: Annotated[
        dict[str, str | int | float | bool | None] | None, Field(max_length=32)
    ] = None
    """
    Equality on metadata fields. For Markdown chunks the fields are the document's front matter keys (e.g. `status`); for external chunks their metadata. `null` matches a field that is null or absent.
    """
    collections: Annotated[list[str] | None, Field(max_length=32)] = None
    """
    Only these collections (`markdown` = chunks derived from the Markdown). Default: every collection.
    """


class ChunkMetadata(RootModel[dict[str, Any]]):
    """
    Free-form metadata (JSON values). For Markdown chunks: `headingPath`, `pointer` (v2 anchor of the chunk's first element), `tags` and `status` from the front matter, `indexedRevision` (SHA-256 of the indexed file).
    """

    root: Annotated[dict[str, Any], Field(max_length=64)]


class ChunkSearchHit(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    collection: str
    source_path: Annotated[str, Field(alias='sourcePath')]
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0)]
    content: str
    metadata: ChunkMetadata
    score: Annotated[float, Field(ge=-1.0, le=1.0)]
    """
    Cosine similarity between the query vector and the stored vector (1 = same direction), rounded to 6 decimals.
    """


class ChunkSearchResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    results: list[ChunkSearchHit]
    """
    Best first.
    """


class DeleteChunkArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """


class DeleteChunkResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    deleted: Literal[True]


class DocumentLink(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['inline', 'reference', 'autolink', 'wikilink', 'embed', 'href']
    """
    How the link is written (`autolink` is `<page.md>`, `embed` is `![[Note]]`, `href` is the `href` of an HTML `<a>` tag).
    """
    source: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Document containing the link.
    """
    target: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path the link resolves to (relative to the source's folder, a backslash read as `/`, `./` and `../` normalised, percent-decoding applied, fragment and query removed).
    """
    fragment: str | None
    """
    The link's `#fragment` without `#`, if any (`^id` for an Obsidian block reference); a Markdown link's is percent-decoded, as its path is (`#My%20Heading` gives `My Heading`).
    """
    fragment_found: Annotated[bool | None, Field(alias='fragmentFound')] = None
    """
    Whether the fragment names a heading of the target (a Markdown fragment by its GitHub-style slug, `-1`, `-2`... for repeated headings, or a `{#id}` ending the heading; a wikilink fragment by heading text) or, for `^id`, a block marker; null without a fragment or when the target does not exist or is not indexed.
    """
    candidates: list[str] | None = None
    """
    For a wikilink whose name matches several documents: all of them, sorted. By path or file name, `target` is the one Obsidian opens (in the linking document's folder, else nearest the root, then by path order); by an alias, `target` is the name as written and `targetExists` false. Null otherwise.
    """
    target_exists: Annotated[bool, Field(alias='targetExists')]
    """
    Whether a document exists at `target`, in the index or, for a Markdown file the include/exclude globs keep out of it, on disk (false for an alias several documents carry).
    """
    pointer: Annotated[
        str | None,
        Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$'),
    ]
    """
    v2 anchor (indexed revision) of the element that contains the link; null when the link sits outside any addressable element.
    """
    text: str | None
    """
    The link text as plain text; null for an autolink or an HTML `<a>`.
    """
    depth: Annotated[int, Field(ge=1, le=5)]
    """
    Hop at which the walk reached this link (1 = touches `path` directly).
    """


class DownloadedFile(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    mime_type: Annotated[str, Field(alias='mimeType')]
    """
    MIME type guessed from the extension; `application/octet-stream` when unknown.
    """
    bytes: Annotated[int, Field(ge=0, le=26214400)]
    """
    File size in bytes.
    """
    sha256: Annotated[str, Field(pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the bytes returned (lowercase hex).
    """


class FileEntry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    relative_path: Annotated[
        str, Field(alias='relativePath', max_length=1024, min_length=1)
    ]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    kind: Literal['markdown', 'asset']
    """
    `markdown` for `.md` files (any case), `asset` for everything else.
    """
    size: Annotated[int, Field(ge=0)]
    """
    Size in bytes.
    """
    last_write_time_utc: Annotated[str, Field(alias='lastWriteTimeUtc')]
    """
    UTC time in ISO 8601 with a `Z` suffix.
    """


class GetChunkArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    include_embedding: Annotated[bool, Field(alias='includeEmbedding')] = False


class GetChunkResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    collection: str
    """
    `markdown` for chunks derived from the Markdown, else the external collection.
    """
    source_path: Annotated[str, Field(alias='sourcePath')]
    """
    Root-relative path of the document, or the caller's source path for an external chunk.
    """
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0)]
    """
    Position of the chunk within its source (0-based).
    """
    content: str
    """
    The chunk's text.
    """
    metadata: ChunkMetadata
    embedding_dimensions: Annotated[int | None, Field(alias='embeddingDimensions')]
    """
    Size of the stored vector; null when the chunk has none (yet).
    """
    embedding_stale: Annotated[bool, Field(alias='embeddingStale')]
    """
    External chunks only: the content changed without a new embedding, or the vector has another size than the index's (a forced rebuild with another model, decision 735); the chunk is left out of vector search until update_chunk gives one.
    """
    read_only: Annotated[bool, Field(alias='readOnly')]
    """
    True for Markdown chunks: change the Markdown with kb_patch instead.
    """
    embedding: list[float] | None = None
    """
    The stored vector (as stored, after normalisation; int8 storage returns the restored values), only when `includeEmbedding` was asked.
    """


class ImageEntry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of an image with a supported extension (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`, any case). The same path rules as RelativePath apply, and the index's own files are refused.
    """
    mime_type: Annotated[
        Literal['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
        Field(alias='mimeType'),
    ]
    """
    Derived from the extension (the content is not checked here).
    """
    bytes: Annotated[int, Field(ge=0)]
    """
    Size in bytes.
    """
    last_write_time_utc: Annotated[str, Field(alias='lastWriteTimeUtc')]
    """
    UTC time in ISO 8601 with a `Z` suffix.
    """


class IndexNoteArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """


class IndexNoteResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    chunk_ids: Annotated[list[str], Field(alias='chunkIds')]
    """
    In document order.
    """
    chunks: Annotated[int, Field(ge=0)]
    """
    Number of chunks.
    """
    dimensions: int | None
    """
    Embedding dimensions; null when embeddings are off.
    """
    quantization_bits: Annotated[
        Literal[32, 16, 8, 1] | None, Field(alias='quantizationBits')
    ]
    """
    Bits per stored vector component (`embedding.vectorStorage`: float32 32, float16 16, int8 8, binary 1); null when embeddings are off.
    """
    warning: str | None = None
    """
    Set when the vectors could not be computed (the lexical index is updated anyway).
    """


class KbCreatePdfBookRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the Markdown document to export.
    """
    output_path: Annotated[
        str | None,
        Field(
            alias='outputPath',
            max_length=1024,
            min_length=1,
            pattern='\\.[pP][dD][fF]$',
        ),
    ] = None
    """
    Root-relative path of the PDF to write, ending in `.pdf`. Omit for `path` with its `.md` replaced by `.pdf`. An existing PDF there is replaced.
    """
    page_format: Annotated[
        Literal['a4', 'a5', 'a6', 'b5', 'letter'], Field(alias='pageFormat')
    ] = 'a5'
    """
    Page size.
    """
    style: Literal['compact', 'classic', 'modern', 'technical', 'academic'] = 'compact'
    """
    Typographic style (fonts, spacing, heading and code appearance).
    """
    profile: Literal['screen', 'standard', 'print'] = 'standard'
    """
    Image quality: `screen` 96 DPI / JPEG quality 65, `standard` 150 DPI / 82, `print` 300 DPI / 95 (not PDF/X, not CMYK). Images with more pixels than the DPI needs at their printed size are downsampled (an ICC profile is kept); images already small enough are embedded unchanged.
    """


class KbCreatePdfBookResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str, Field(max_length=1024, min_length=1, pattern='\\.[pP][dD][fF]$')
    ]
    """
    Root-relative path of the PDF written.
    """
    bytes: Annotated[int, Field(ge=0)]
    """
    Size of the PDF in bytes.
    """
    warnings: list[str]
    """
    Problems that did not stop the export, e.g. an image that was replaced by a placeholder (with its reference as written in the document). Empty when none.
    """


class KbCreateRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the new document, e.g. `notes/meeting-2024-05.md`.
    """
    markdown: Annotated[str, Field(max_length=1048576)]
    """
    Full content of the new file, written byte-for-byte as UTF-8 (may be empty).
    """


class BrokenLinks(RootModel[list[BrokenLink]]):
    root: Annotated[list[BrokenLink], Field(max_length=100)]
    """
    The first 100 links a write broke, by source path and place (kb_patch, kb_move, kb_delete, kb_create, kb_move_image, kb_delete_image).
    """


class KbCreateResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    source_hash: Annotated[
        str | None, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    SHA-256 of the new file.
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this change (or the path is not indexed at all); false when indexing of the path is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """
    previous_path: Annotated[
        str | None, Field(alias='previousPath', max_length=1024, min_length=1)
    ]
    """
    Always null (MutationResult's field, kept so a create's result reads like the other writes').
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    Our extension: the links this create took over, the first 100 by source path and place: wikilinks and embeds in other indexed documents that opened another note and, with the new one there, open it instead (its file name is a nearer match, as kb_links resolves names) or none (an alias of its front matter that another note carries too). Markdown links reach a note by its path and are never taken. `[]` when none was. Null when the links could not be checked: the new document is outside the index, or there is no usable index yet. Links are read from the index, so one written moments ago and not yet indexed is not seen.
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this create took over in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbDeleteImageArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of the image to delete.
    """


class KbDeleteImageResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of an image with a supported extension (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`, any case). The same path rules as RelativePath apply, and the index's own files are refused.
    """
    deleted: Literal[True]
    """
    Always true; failures are errors.
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    Our extension: the links this delete broke, the first 100 by source path and place: links in indexed documents (Markdown images `![alt](path)` and `![alt][ref]`, plain links `[text](path)` and reference definitions used, HTML `<img src>`, `srcset` candidates (`<img>`, `<source>`), `<video poster>`, the `src` of audio and video tags, `<object data>` and `<a href>`, `![[file]]` embeds and `[[file]]` wikilinks) that reached the image and now reach no file, as kb_links resolves them. An embed or wikilink by bare name that now opens another file of that name still works and is not listed; a link that reached nothing before is not listed either. `[]` when none broke (nobody linked the image). Null when the links could not be checked: there is no usable index yet (or a forced rebuild is running) or its link graph could not be read. Links are read from the index, so one written moments ago and not yet indexed is not seen, and documents outside the index are not read.
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this delete broke in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbDeleteRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the document to delete.
    """
    expected_source_hash: Annotated[
        str,
        Field(alias='expectedSourceHash', max_length=512, min_length=1, pattern='\\S'),
    ]
    """
    The document's current `sourceHash` (SHA-256 hex, any case).
    """


class KbDeleteResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    source_hash: Annotated[
        str | None, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    Always null (the file was deleted).
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this change (or the path is not indexed at all); false when removal of the path from the index is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """
    previous_path: Annotated[
        str | None, Field(alias='previousPath', max_length=1024, min_length=1)
    ]
    """
    Always null (MutationResult's field, kept so a delete's result reads like the other writes').
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    The links this delete broke, the first 100 by source path and place: links in other indexed documents (Markdown links, reference definitions, autolinks, HTML `<a href>`, wikilinks and embeds) that reached the deleted document and, without it, reach no document. A wikilink or embed by name that now opens another note of that name (or one carrying it as an alias) still works and is not listed; a link that reached nothing before is not listed either. `[]` when none broke. Null when the links could not be checked: the document is outside the index or not indexed yet, or there is no usable index yet. Links are read from the index, so one written moments ago and not yet indexed is not seen.
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this delete broke in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbDownloadFileRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path of the file, e.g. from kb_list_files.
    """


ValuesByColumnAdditionalProperty = TypeAliasType(
    "ValuesByColumnAdditionalProperty", Annotated[str, Field(max_length=10000)]
)
"""
A cell value on one line (no CR, LF, NUL or other control characters).
"""


class KbEditTableResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    The table's anchor in the file as written; pass it to the next kb_edit_table call. Unchanged when the edit was a no-op (the file is then not written).
    """
    source_hash: Annotated[str, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the file after the edit.
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this revision of the file (e.g. a no-op edit of an indexed file); false when re-indexing is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """


class KbLinksRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str | None, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')
    ] = None
    """
    Root-relative path of the document to start from. It may be a missing document that others still link to (to find who links to it). Omit it to check the whole knowledge base (broken links, orphans, missing images; `direction` and `depth` do not apply then).
    """
    direction: Literal['outgoing', 'incoming', 'both'] = 'both'
    """
    `outgoing` follows links from a document to its targets, `incoming` from a target back to the documents linking to it, `both` follows both at every hop.
    """
    depth: Annotated[int, Field(ge=1, le=5)] = 1
    """
    How many hops to follow from `path`; 1 lists only its direct links.
    """
    include_missing: Annotated[bool, Field(alias='includeMissing')] = True
    """
    Report links whose target document does not exist (in `links` with `targetExists: false` and in `missing`). False leaves them out of both.
    """
    offset: Annotated[int, Field(ge=0)] = 0
    """
    Where to start in the walk's links (and, without `path`, in each of `links`, `orphans` and `missingImages`): pass the `nextOffset` of the previous answer to read on past the `limit`. The order is fixed for an unchanged index; a re-index between pages can shift it.
    """
    limit: Annotated[int, Field(ge=1, le=1000)] = 1000
    """
    Most items in each list of this answer (`links`, `missing`, `orphans`, `missingImages`), from `offset` on; `truncated` and `nextOffset` say when more follow. A small limit keeps a large knowledge base's check within an agent's context (`counts` still gives the totals).
    """


class KbListFilesRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path_prefix: Annotated[str | None, Field(alias='pathPrefix', max_length=1024)] = (
        None
    )
    """
    Folder (or file) path whose files to list, root-relative with forward slashes; a trailing `/` is ignored. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused. Omit it, or leave it blank, for the whole root.
    """
    include_glob: Annotated[str | None, Field(alias='includeGlob', max_length=512)] = (
        None
    )
    """
    Only files whose root-relative path matches this case-insensitive glob (`**` crosses folders, `*` does not, `?` is one character; a trailing `/` names a folder's whole tree). Omitted or blank: `**/*`, every file. Must not start with `/` or `\\`, contain `:`, control characters or a `..` segment.
    """
    cursor: Annotated[str | None, Field(max_length=4096, min_length=1)] = None
    """
    `nextCursor` of the previous page (the last path it listed): this page lists the files sorted after it. Omit for the first page.
    """
    max_files: Annotated[int, Field(alias='maxFiles')] = 2000
    """
    Maximum number of files in this page, clamped to 1..2000.
    """


class KbListImagesArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    cursor: Annotated[str | None, Field(max_length=4096, min_length=1)] = None
    """
    `nextCursor` of the previous page, unchanged. Omit for the first page.
    """
    page_size: Annotated[int, Field(alias='pageSize', ge=1, le=200)] = 50
    """
    Maximum number of images in this page.
    """


class KbListImagesResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    images: list[ImageEntry]
    next_cursor: Annotated[str | None, Field(alias='nextCursor')]
    """
    Opaque cursor for the next page; null when no more images follow.
    """


class KbLoadImageArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of the image, e.g. from kb_list_images.
    """


class KbMoveImageRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source_path: Annotated[
        str,
        Field(
            alias='sourcePath',
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of the existing image.
    """
    target_path: Annotated[
        str,
        Field(
            alias='targetPath',
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path it should have afterwards; must not exist and must differ from `sourcePath`.
    """
    expected_sha256: Annotated[
        str | None, Field(alias='expectedSha256', pattern='^[0-9a-fA-F]{64}$')
    ] = None
    """
    The image's SHA-256 as last seen (e.g. from kb_load_image or kb_save_image); when given, the move happens only if the file still has it. Omit to move unconditionally.
    """
    update_links: Annotated[bool, Field(alias='updateLinks')] = False
    """
    Our extension: also rewrite every reference that reaches the image (`![alt](path)`, plain links `[text](path)`, reference definitions, HTML `<img src>` and each `srcset` candidate of `<img>` and `<source>` (its URL alone; descriptors such as `2x` or `480w` stay), `<video poster>` and `<object data>` outside code and comments, `![[file]]` embeds that would no longer find it, or whose bare name would then open another file of that name, as in Obsidian), only the destination bytes, all documents or none, exactly like kb_move `updateLinks`. The rewritten documents are listed in `updatedPaths`.
    """


class KbMoveRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source_path: Annotated[
        str,
        Field(
            alias='sourcePath', max_length=1024, min_length=1, pattern='\\.[mM][dD]$'
        ),
    ]
    """
    Root-relative path of the existing document.
    """
    target_path: Annotated[
        str,
        Field(
            alias='targetPath', max_length=1024, min_length=1, pattern='\\.[mM][dD]$'
        ),
    ]
    """
    Root-relative path it should have afterwards; must not exist and must differ from `sourcePath`.
    """
    expected_source_hash: Annotated[
        str,
        Field(alias='expectedSourceHash', max_length=512, min_length=1, pattern='\\S'),
    ]
    """
    The document's current `sourceHash` (SHA-256 hex, any case).
    """
    update_links: Annotated[bool, Field(alias='updateLinks')] = False
    """
    Our extension: also rewrite every link that reaches the moved document from another document (relative Markdown links, reference definitions, wikilinks and embeds that would no longer resolve, or that would open another note of the same name, as Obsidian's rename keeps them) and the moved document's own relative links (to documents, images, attachments, HTML `<img src>`, each `srcset` candidate of `<img>` and `<source>`, and the files audio and video tags name: the `src` of `<video>`, `<audio>`, `<source>`, `<track>`, `<embed>` and an `<iframe>` to an attachment, `<video poster>`, `<object data>`), so every link keeps working. Only the link destinations change; link text, aliases, fragments and every other byte (BOM, line endings) stay. All files change together or none does: if any of them changed while the move was prepared, nothing is written and CONFLICT names it. The rewritten files are listed in `updatedPaths`.
    """


class KbOutlineRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the document.
    """
    pointer: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')] = (
        'document'
    )
    """
    Where to start: `document` (default, the first heading), a `nextPointer` of an earlier page, or any pointer kb_read takes (the page starts at the first heading at or after that element). Resolved as kb_read resolves it: a hashed anchor whose element changed or moved ambiguously fails with CONFLICT.
    """
    max_headings: Annotated[int, Field(alias='maxHeadings')] = 1000
    """
    Maximum number of headings in this page, clamped to 1..1000.
    """
    max_bytes: Annotated[int, Field(alias='maxBytes')] = 100000
    """
    Maximum UTF-8 size of the page's titles and pointers together, clamped to 1..100000; the first heading is always returned even when larger.
    """


class KbPatchResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    source_hash: Annotated[
        str | None, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    SHA-256 of the file after the edit.
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this change (or the path is not indexed at all); false when re-indexing of the path is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """
    previous_path: Annotated[
        str | None, Field(alias='previousPath', max_length=1024, min_length=1)
    ]
    """
    Always null (MutationResult's field, kept so an edit's result reads like the other writes').
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    The links this edit broke, the first 100 by source path and place: links in indexed documents (this one included, and its own `[x](#frag)`, `<a href=
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this edit broke in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbReadRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the document, e.g. from kb_list_files or a search result.
    """
    pointer: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')] = (
        'document'
    )
    """
    Where to start: `document` (default, from the top including front matter), `frontmatter` (the file's opening YAML `---` or TOML `+++` block), a logical pointer such as `2.1` or `1.p3`, or a v1/v2 anchor. A hashed anchor whose element changed or moved ambiguously fails with CONFLICT; a stale subtree hash alone does not block reading.
    """
    max_elements: Annotated[int, Field(alias='maxElements')] = 20
    """
    Maximum number of elements in this page, clamped to 1..100 (0 or less reads one element, more than 100 reads 100).
    """
    max_bytes: Annotated[int, Field(alias='maxBytes')] = 12000
    """
    Maximum UTF-8 size of `markdown` in bytes, clamped to 1..100000. The first element is always returned even when larger. Does not limit `table`.
    """


class KbReindexRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    scope: Literal['changed', 'all'] = 'changed'
    """
    `changed` skips files whose SHA-256 equals the indexed one; `all` re-parses and re-chunks every file (vectors of unchanged chunk texts are reused: the manifest guarantees the same model and text builder).
    """
    force: bool = False
    """
    Allow dropping and recreating an index that is incompatible with the current configuration (different chunker, model, dimensions, index mode, ...). Without it an incompatible index makes the run fail with the problems listed in kb_status.
    """


class KbSaveImageResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path where the image was saved.
    """
    mime_type: Annotated[
        Literal['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
        Field(alias='mimeType'),
    ]
    """
    MIME type of a supported image format.
    """
    bytes: Annotated[int, Field(ge=1, le=26214400)]
    """
    Size in bytes.
    """
    sha256: Annotated[str, Field(pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the saved bytes (lowercase hex).
    """
    markdown: str
    """
    `![altText](path)` with the root-relative path (`%` and `#` written `%25` and `%23`, so the link reaches this file; wrapped in `<...>` when it contains spaces or parentheses). Adjust the path if the document lives in a subfolder.
    """


class KbSearchRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    query: Annotated[str, Field(max_length=4096, min_length=1, pattern='\\S')]
    """
    What to look for, in natural language or keywords (any language). Must contain a non-whitespace character.
    """
    mode: Literal['lexical', 'semantic', 'hybrid'] | None = None
    """
    Retrieval mode. Omit to use the configured `search.defaultMode` (default `hybrid`).
    """
    top_k: Annotated[int | None, Field(alias='topK', ge=1)] = None
    """
    Maximum number of results (at least 1; values above 50 are treated as 50). Omit to use the configured `search.maxResults` (default 10).
    """
    include_globs: Annotated[
        list[str] | None, Field(alias='includeGlobs', max_length=64)
    ] = None
    """
    Only documents whose root-relative path matches at least one of these globs (case-insensitive). Omitted or empty means `**/*.md`.
    """
    exclude_globs: Annotated[
        list[str] | None, Field(alias='excludeGlobs', max_length=64)
    ] = None
    """
    Leave out documents whose path matches any of these globs (applied after `includeGlobs`).
    """
    tags: Annotated[list[str] | None, Field(max_length=16)] = None
    """
    Our extension: only documents carrying every one of these tags (front matter `tags` or inline `#tags`, case-insensitive, with or without `#`; `project` also matches the nested tag `project/alpha`). Applied before ranking, like the globs; omitted or empty means no tag filter. When they select no document, `warning` names the tags no indexed document carries (or says none carries them all).
    """


class KbStatusArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )


class LinkCounts(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    links: Annotated[int, Field(ge=0)]
    """
    Broken document links in all (`missing` repeats them; 0 when `includeMissing` is false).
    """
    orphans: Annotated[int, Field(ge=0)]
    """
    Orphan documents in all.
    """
    missing_images: Annotated[int, Field(alias='missingImages', ge=0)]
    """
    Missing image and attachment references in all.
    """


class ListChunksArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source_path: Annotated[
        str | None, Field(alias='sourcePath', max_length=1024, min_length=1)
    ] = None
    collection: Annotated[
        str | None,
        Field(max_length=128, min_length=1, pattern='^[A-Za-z0-9][A-Za-z0-9_.-]*$'),
    ] = None
    """
    Namespace of external chunks (default `external`). `markdown` is reserved for chunks derived from the Markdown.
    """
    cursor: Annotated[str | None, Field(max_length=2048, min_length=1)] = None
    """
    `nextCursor` of the previous page.
    """
    limit: Annotated[int, Field(ge=1, le=500)] = 50


class LoadedImage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    Root-relative path of an image with a supported extension (`.png`, `.jpg`, `.jpeg`, `.webp`, `.gif`, any case). The same path rules as RelativePath apply, and the index's own files are refused.
    """
    mime_type: Annotated[
        Literal['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
        Field(alias='mimeType'),
    ]
    """
    Format of the original file, detected from its bytes.
    """
    bytes: Annotated[int, Field(ge=1, le=26214400)]
    """
    Size of the original file in bytes.
    """
    sha256: Annotated[str, Field(pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the original file (lowercase hex).
    """


class MissingImage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    target: str
    """
    Root-relative path the image reference resolves to (or the name as written when an embed's file name matches nothing).
    """
    pointer: Annotated[
        str | None,
        Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$'),
    ]
    """
    v2 anchor (indexed revision) of the element holding the reference; null when outside any addressable element.
    """
    kind: Literal['image', 'embed', 'wikilink', 'link', 'html', 'href']
    """
    `image` for `![alt](path)`, `embed` for `![[file]]`, `wikilink` for `[[file.pdf]]` (a link, not an embed, to a file that is not a note), `link` for a plain `[text](file.pdf)` to an attachment, `html` for the `src` of an `<img>` tag, a URL of the `srcset` of an `<img>` or `<source>` tag, or a file an audio or video tag names (the `src` of `<video>`, `<audio>`, `<source>`, `<track>`, `<embed>` or an `<iframe>` to an attachment, `<video poster>`, `<object data>`), `href` for the `href` of an `<a>` tag to an attachment.
    """


class MissingLink(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    source: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    target: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    The missing document the link points to.
    """
    pointer: Annotated[
        str | None,
        Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$'),
    ]
    """
    v2 anchor (indexed revision) of the element holding the broken link; null when outside any addressable element. Fix it with kb_patch after kb_read.
    """


class MutationResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    Root-relative path with forward slashes, e.g. `docs/guide.md`. Absolute paths, `..`, drive letters, `.git`, the index's own files and symlinks are refused.
    """
    source_hash: Annotated[
        str | None, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    SHA-256 of the file after the change; null when the file was deleted.
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this change (or the path is not indexed at all); false when re-indexing of the path is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """
    previous_path: Annotated[
        str | None, Field(alias='previousPath', max_length=1024, min_length=1)
    ]
    """
    The source path of a move; null otherwise.
    """


class OpenAiFileRef(BaseModel):
    """
    OpenAI file reference. Its property names are snake_case because the client defines them; unknown extra properties are ignored.
    """

    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    download_url: Annotated[str, Field(max_length=8192, min_length=1)]
    """
    Absolute `https://` URL of the file's bytes (temporary, signed). Never logged or echoed.
    """
    file_id: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    The client's identifier of the file.
    """
    mime_type: str | None = None
    """
    Declared MIME type; if it names a different supported image format than the bytes, the save is refused. Empty, `application/octet-stream` or unknown types are ignored.
    """
    file_name: str | None = None
    """
    Original file name; its stem is used when `fileName` and `targetPath` are omitted and it is a portable name.
    """


class OutlineHeading(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    Current v2 anchor of the heading (its logical part is the section path, e.g. `2.1`).
    """
    level: Annotated[int, Field(ge=1, le=6)]
    """
    Heading level (`#` = 1; setext `===` = 1, `---` = 2).
    """
    title: str
    """
    The heading's first line without the `#` markers, trimmed.
    """
    children: list[OutlineHeading]
    """
    Headings nested under this one (any deeper level, even when levels are skipped), in source order.
    """


class PatchOperation(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['replace', 'replace_element', 'replace_subtree', 'replace_section', 'delete_section', 'insert_before', 'insert_after', 'delete']
    """
    - `replace`: deprecated alias of `replace_element`.
    - `replace_element`: replace one element with `markdown`, which must be exactly one element of the same kind (a heading of the same level, a paragraph with a paragraph, a table with a table, ...). On a heading it replaces only the heading line(s); the section body is preserved. On a list item it replaces only the item's own text before its nested items (no child items allowed in `markdown`; same marker style and indent); the nested items are kept. On a block quote it replaces the whole quote.
    - `replace_subtree`: list items only: replace the item together with all its nested items with one root item (same indent and marker style) that may contain nested items. Needs the v2 anchor.
    - `replace_section`: headings only: replace the complete owned section subtree (the heading and everything up to the next heading of the same or a higher level, or the end of file) with `markdown`, which must start with a heading of the same level, all later headings deeper; the heading level is kept. A blank line is ensured before the next section. Needs the v2 anchor.
    - `delete_section`: headings only: remove the complete owned section subtree; omit `markdown`. Needs the v2 anchor.
    - `insert_before` / `insert_after`: insert `markdown` as new blocks next to the element, separated by one blank line (list items: a sibling item, same indent and marker style, nested items allowed; no blank line added). With `document`: `insert_before` puts it at the top of the file, after the front matter when there is one; `insert_after` appends it at the end; exactly one blank line separates it from existing text.
    - `delete`: remove the element. A paragraph, heading line, code block or table is removed exactly (surrounding blank lines stay; to remove a heading with its body use `delete_section`); a block quote with its line ending; a list item with all its nested items and its line ending, which needs the v2 anchor. Omit `markdown`.
    `document` supports only `insert_before` and `insert_after` (any kind on an empty file simply sets its content).

    """
    pointer: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Target: a hashed anchor from kb_read (v2 `logical~selfHash~subtreeHash`; v1 `logical~selfHash` only for `replace`, `replace_element`, `insert_before`, `insert_after` and `delete` of a non-list element), or `document` for `insert_before` / `insert_after` (and any operation on an empty file).
    """
    markdown: Annotated[str | None, Field(max_length=1048576)] = None
    """
    The new Markdown. Required for every kind except `delete` and `delete_section`, which must omit it.
    """


class ReadElement(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    Current v2 anchor of the element; use it unchanged in kb_patch / kb_edit_table.
    """
    kind: Literal['document', 'front_matter', 'heading', 'paragraph', 'code_block', 'list_item', 'table', 'block_quote']
    """
    Element kind (never `document`).
    """
    text: str
    """
    Exact source text of the element: headings, paragraphs, code blocks and front matter their own span; quotes and tables all their lines including `>` / `|`; a list item its own text without its nested items.
    """
    heading_path: Annotated[str | None, Field(alias='headingPath')]
    """
    Titles of the enclosing headings joined with ` > ` (a heading includes itself); null before the first heading.
    """


class RefusedChunk(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: str
    """
    Root-relative path of the document.
    """
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0)]
    """
    The chunk's index in its document (the chunk API's id is md:<path>#<chunkIndex>).
    """
    heading_path: Annotated[str | None, Field(alias='headingPath')]
    """
    The headings above the chunk.
    """
    reason: str
    """
    What the embedding provider answered for it.
    """


class ReindexProgress(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    scope: Literal['changed', 'all']
    force: bool
    started_at_utc: Annotated[str, Field(alias='startedAtUtc')]
    """
    UTC time in ISO 8601 with a `Z` suffix.
    """
    processed_files: Annotated[int, Field(alias='processedFiles', ge=0)]
    total_files: Annotated[int | None, Field(alias='totalFiles')]
    current_path: Annotated[str | None, Field(alias='currentPath')]
    is_destructive_rebuild: Annotated[bool, Field(alias='isDestructiveRebuild')]


class SearchDuplicate(BaseModel):
    """
    Another place holding the passage of a result.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    Canonical v2 anchor `logical~selfHash~subtreeHash` as emitted by the server.
    """


class SearchKnowledgeArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    query: Annotated[str, Field(max_length=4096, min_length=1, pattern='\\S')]
    top_k: Annotated[int | None, Field(alias='topK', ge=1)] = None
    """
    Maximum results (default 10; values above 100 are treated as 100).
    """
    filter: ChunkFilter | None = None


class SearchKnowledgeResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    results: list[ChunkSearchHit]
    """
    Best first.
    """


class SearchReadHint(BaseModel):
    """
    Ready-made kb_read arguments for this result.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    Canonical v2 anchor `logical~selfHash~subtreeHash` as emitted by the server.
    """
    max_elements: Annotated[int, Field(alias='maxElements', ge=1, le=100)]
    """
    Always 20.
    """
    max_bytes: Annotated[int, Field(alias='maxBytes', ge=1, le=100000)]
    """
    Always 12000.
    """


class SearchResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the document.
    """
    pointer: Annotated[
        str, Field(pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$')
    ]
    """
    v2 anchor of the chunk's first element as of the indexed revision (not necessarily the element that matched). kb_read relocates it if the document changed since.
    """
    full_pointer: Annotated[str, Field(alias='fullPointer')]
    """
    `<path>::<pointer>`, a single string that names the passage.
    """
    score: float
    """
    Relevance, higher is better. Lexical or semantic: `1/rank`; hybrid: the RRF sum `Σ 1/(rrfK + rank)` (a question's semantic seat, decision 416, takes the score of the place it fills). Only comparable within one response.
    """
    search_mode: Annotated[
        Literal['lexical', 'semantic', 'hybrid'], Field(alias='searchMode')
    ]
    """
    The mode that actually produced this result (`lexical` after a fallback).
    """
    heading_path: Annotated[str | None, Field(alias='headingPath')]
    """
    Titles of the enclosing headings joined with ` > `; null before the first heading.
    """
    snippet: str
    """
    Excerpt of the chunk. Lexical matches are wrapped in `[`...`]` with `...` marking cuts; otherwise the first 240 characters of the chunk followed by `...`.
    """
    read_hint: Annotated[SearchReadHint, Field(alias='readHint')]
    indexed_source_hash: Annotated[
        str, Field(alias='indexedSourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    SHA-256 of the document revision the index holds; compare with kb_read's `sourceHash` to tell whether the file changed since.
    """
    also_in: Annotated[list[SearchDuplicate], Field(alias='alsoIn')]
    """
    Our extension: other chunks with exactly the same text (leading and trailing whitespace aside) among the candidates the search ranked (at least 3 x `topK` chunks, more when copies crowd them), best ranked first; the result itself is the copy in the largest file (a reference page rather than a page quoting part of it; among equally large files the best ranked); empty when the passage is found once. They take no place among the `topK` results: copies never leave out a distinct passage that matches.
    """


class SearchVectorsArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    embedding: Annotated[list[float], Field(max_length=8192, min_length=1)]
    """
    An embedding vector; any length is normalised to unit length before use (any finite components, not all zero). Its size must equal the index's embedding dimensions.
    """
    top_k: Annotated[int | None, Field(alias='topK', ge=1)] = None
    """
    Maximum results (default 10; values above 100 are treated as 100).
    """
    filter: ChunkFilter | None = None


class SearchVectorsResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    results: list[ChunkSearchHit]
    """
    Best first.
    """


class SkippedEntry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: str
    """
    Root-relative path of the folder or entry.
    """
    reason: str
    """
    Why it was left out, e.g. `the folder could not be listed (Permission denied)`.
    """


class StatusCompatibility(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    is_compatible: Annotated[bool, Field(alias='isCompatible')]
    problems: list[str]


class StatusVectors(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    embedded_chunks: Annotated[int, Field(alias='embeddedChunks', ge=0)]
    """
    Chunks that have a vector.
    """
    pending_chunks: Annotated[int, Field(alias='pendingChunks', ge=0)]
    """
    Chunks indexed lexically that still wait for a vector.
    """
    is_running: Annotated[bool, Field(alias='isRunning')]
    """
    Whether an embedding pass is running now.
    """
    last_error: Annotated[str | None, Field(alias='lastError')]
    """
    Why the last embedding pass failed, if it did.
    """
    eta_seconds: Annotated[int | None, Field(alias='etaSeconds', ge=0)]
    """
    Estimated seconds until the running pass has embedded every pending chunk, at the pace it kept since the first kb_status call that saw it run; null when no pass runs, nothing is pending, or that call was less than 5 seconds ago (call kb_status again). An estimate: other work on the machine changes the pace (our extension, decision 804).
    """
    refused_chunks: Annotated[int, Field(alias='refusedChunks', ge=0)]
    """
    Chunks whose text the embedding provider refused (an input over its context length, a zero vector). They are found by lexical search only and are embedded again when their document changes; every other chunk is embedded (our extension, decision 510).
    """
    refused: Annotated[list[RefusedChunk], Field(max_length=20)]
    """
    The first 20 refused chunks by path and chunk index, each with the provider's reason.
    """


class TableColumn(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    index: Annotated[int, Field(ge=0)]
    """
    Zero-based column index.
    """
    name: str
    """
    Header cell display text (may be empty; select such a column by index).
    """
    alignment: Literal['none', 'left', 'center', 'right']
    """
    Column alignment from the table's delimiter row: `:--` left, `--:` right, `:-:` center, `---` none.
    """


class TableRow(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    index: Annotated[int, Field(ge=0)]
    """
    Zero-based data row index.
    """
    cells: list[str]
    """
    One display string per column: inline markup removed, entities decoded, `\\|` shown as `|`, missing cells as `""`.
    """


class TableRowMatch(BaseModel):
    """
    Select one data row by the display text of one of its cells. Give exactly one of `column` / `columnIndex`. No matching row is INVALID_ARGUMENT; several are CONFLICT (use `rowIndex`).
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    column: Annotated[str | None, Field(min_length=1)] = None
    """
    Column header name.
    """
    column_index: Annotated[int | None, Field(alias='columnIndex', ge=0)] = None
    """
    Zero-based column.
    """
    equals: str
    """
    Exact display text the cell must have (case-sensitive).
    """


class UnreadableFile(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: str
    """
    Root-relative path.
    """
    reason: str
    """
    Why it could not be indexed.
    """


class UpdateChunkArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    content: Annotated[str | None, Field(max_length=1000000)] = None
    embedding: Annotated[list[float] | None, Field(max_length=8192, min_length=1)] = (
        None
    )
    """
    An embedding vector; any length is normalised to unit length before use (any finite components, not all zero). Its size must equal the index's embedding dimensions.
    """
    metadata: ChunkMetadata | None = None


class UpdateChunkResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    collection: str
    """
    `markdown` for chunks derived from the Markdown, else the external collection.
    """
    source_path: Annotated[str, Field(alias='sourcePath')]
    """
    Root-relative path of the document, or the caller's source path for an external chunk.
    """
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0)]
    """
    Position of the chunk within its source (0-based).
    """
    content: str
    """
    The chunk's text.
    """
    metadata: ChunkMetadata
    embedding_dimensions: Annotated[int | None, Field(alias='embeddingDimensions')]
    """
    Size of the stored vector; null when the chunk has none (yet).
    """
    embedding_stale: Annotated[bool, Field(alias='embeddingStale')]
    """
    External chunks only: the content changed without a new embedding, or the vector has another size than the index's (a forced rebuild with another model, decision 735); the chunk is left out of vector search until update_chunk gives one.
    """
    read_only: Annotated[bool, Field(alias='readOnly')]
    """
    True for Markdown chunks: change the Markdown with kb_patch instead.
    """
    embedding: list[float] | None = None
    """
    The stored vector (as stored, after normalisation; int8 storage returns the restored values), only when `includeEmbedding` was asked.
    """


class UpsertVectorArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str | None, Field(max_length=512, min_length=1, pattern='\\S')] = None
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    source_path: Annotated[
        str, Field(alias='sourcePath', max_length=1024, min_length=1)
    ]
    """
    Where the chunk comes from (any string; used by `pathPrefix` / `pathGlobs` filters).
    """
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0, le=2147483647)]
    """
    Position of the chunk within its source (0-based; at most 2^31 - 1, which both storage engines hold).
    """
    content: Annotated[str, Field(max_length=1000000)]
    embedding: Annotated[list[float], Field(max_length=8192, min_length=1)]
    """
    An embedding vector; any length is normalised to unit length before use (any finite components, not all zero). Its size must equal the index's embedding dimensions.
    """
    metadata: ChunkMetadata | None = None
    collection: Annotated[
        str | None,
        Field(max_length=128, min_length=1, pattern='^[A-Za-z0-9][A-Za-z0-9_.-]*$'),
    ] = None
    """
    Namespace of external chunks (default `external`). `markdown` is reserved for chunks derived from the Markdown.
    """


class UpsertVectorResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    created: bool
    """
    False when an existing chunk was replaced.
    """


class Chunk(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    id: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Chunk id. Chunks derived from Markdown are `md:<path>#<chunkIndex>` (read-only here); external chunks have the id given to upsert_vector or a generated `ext_<32 hex>`.
    """
    collection: str
    """
    `markdown` for chunks derived from the Markdown, else the external collection.
    """
    source_path: Annotated[str, Field(alias='sourcePath')]
    """
    Root-relative path of the document, or the caller's source path for an external chunk.
    """
    chunk_index: Annotated[int, Field(alias='chunkIndex', ge=0)]
    """
    Position of the chunk within its source (0-based).
    """
    content: str
    """
    The chunk's text.
    """
    metadata: ChunkMetadata
    embedding_dimensions: Annotated[int | None, Field(alias='embeddingDimensions')]
    """
    Size of the stored vector; null when the chunk has none (yet).
    """
    embedding_stale: Annotated[bool, Field(alias='embeddingStale')]
    """
    External chunks only: the content changed without a new embedding, or the vector has another size than the index's (a forced rebuild with another model, decision 735); the chunk is left out of vector search until update_chunk gives one.
    """
    read_only: Annotated[bool, Field(alias='readOnly')]
    """
    True for Markdown chunks: change the Markdown with kb_patch instead.
    """
    embedding: list[float] | None = None
    """
    The stored vector (as stored, after normalisation; int8 storage returns the restored values), only when `includeEmbedding` was asked.
    """


class KbCreateArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbCreateRequest


class KbCreatePdfBookArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbCreatePdfBookRequest


class KbDeleteArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbDeleteRequest


class KbDownloadFileArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbDownloadFileRequest


class KbLinksArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbLinksRequest | None = None


class KbLinksResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[
        str | None, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')
    ]
    """
    The `path` asked about; null for the whole-knowledge-base check.
    """
    links: list[DocumentLink]
    """
    Every link found by the walk, once each, ordered by `depth`, then `source`, then position in the source; at most `limit`, from `offset` on.
    """
    missing: list[MissingLink]
    """
    The links among `links` whose target document does not exist; empty when `includeMissing` is false.
    """
    truncated: bool
    """
    True when the walk (or a whole-knowledge-base list) stopped at `limit` items; read on with `nextOffset`, or narrow `depth` or `direction`.
    """
    next_offset: Annotated[int | None, Field(alias='nextOffset', ge=1)]
    """
    The `offset` of the next page when `truncated`, else null.
    """
    orphans: list[str] | None = None
    """
    Whole-knowledge-base check (no `path`) only, else null — indexed documents no other document links to, sorted; at most `limit`, from `offset` on.
    """
    missing_images: Annotated[
        list[MissingImage] | None, Field(alias='missingImages')
    ] = None
    """
    Whole-knowledge-base check (no `path`) only, else null — image references (Markdown, HTML `<img>` `src` and `srcset`, `<source>` `srcset`), files audio and video tags name (`src` of `<video>`, `<audio>`, `<source>`, `<track>`, `<embed>`, `<video poster>`, `<object data>`, an `<iframe src>` to an attachment), plain links to attachments, file embeds and wikilinks to files that are not notes, whose file does not exist under the root; at most `limit`, from `offset` on.
    """
    counts: LinkCounts | None = None
    """
    Whole-knowledge-base check (no `path`) only, else null — how many items each list holds in all, whatever `offset` and `limit` are.
    """
    ignored_links: Annotated[int, Field(alias='ignoredLinks', ge=0)]
    """
    How many links and image references written in `path` (without `path`: in the whole knowledge base) kb_links did not follow because they are site URLs: root-absolute (`/docs/install/`) or holding a site generator's template (`{{site.url}}/docs/install/`, `{% link install.md %}`). The site resolves them when it is built, so they may well reach documents here; web URLs with a scheme are not counted.
    """
    skipped_folders: Annotated[int | None, Field(alias='skippedFolders', ge=0)] = None
    """
    Whole-knowledge-base check only, when an `![[file]]` embed or a `[[file.pdf]]` wikilink names a bare file and the folders were searched for it; else null. How many folders could not be listed: an embed whose file lies in one of them is reported in `missingImages` although it may exist.
    """
    skipped: list[SkippedEntry] | None = None
    """
    The first 100 of those folders in path order (`.` is the root), each with the reason, as in kb_list_files; null when `skippedFolders` is.
    """


class KbListFilesArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbListFilesRequest | None = None


class KbListFilesResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    files: list[FileEntry]
    """
    The page's files, sorted by path (case-insensitive, then ordinal).
    """
    next_cursor: Annotated[str | None, Field(alias='nextCursor')]
    """
    The last path of this page when more files follow (pass it as `cursor`); null when this page ends the listing.
    """
    skipped_folders: Annotated[int, Field(alias='skippedFolders', ge=0)]
    """
    How many folders (or entries) could not be listed or inspected, or have a name the tools refuse; their files are not in `files`. 0 normally. The whole listing's count, the same on every page.
    """
    skipped: Annotated[list[SkippedEntry], Field(max_length=100)]
    """
    The first 100 of them in path order (`.` is the root or prefix folder itself), each with the reason.
    """


class KbMoveArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbMoveRequest


class KbMoveImageArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbMoveImageRequest


class KbMoveImageResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    updated_paths: Annotated[list[str] | None, Field(alias='updatedPaths')] = None
    """
    Documents whose image references `updateLinks` rewrote, sorted; null without `updateLinks`.
    """
    skipped_folders: Annotated[int | None, Field(alias='skippedFolders', ge=0)] = None
    """
    With `updateLinks`: how many folders could not be listed while looking for image references, plus documents whose links could not be checked (a name the path guard refuses, a file that cannot be read, is over 8 MiB or is not a regular file, or a file that is not UTF-8 but names the image); 0 normally. Links in them were NOT updated and may now be broken. Null without `updateLinks`.
    """
    skipped: list[SkippedEntry] | None = None
    """
    With `updateLinks`: the first 100 of those folders and documents in path order (`.` is the root), each with the reason, as in kb_list_files. Null without `updateLinks`.
    """
    previous_path: Annotated[
        str,
        Field(
            alias='previousPath',
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    The source path.
    """
    path: Annotated[
        str,
        Field(
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ]
    """
    The new path.
    """
    sha256: Annotated[str, Field(pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the moved file (unchanged by the move, lowercase hex).
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    Our extension: the links this move broke, the first 100 by source path and place: links in indexed documents (Markdown images `![alt](path)` and `![alt][ref]`, plain links `[text](path)` and reference definitions used, HTML `<img src>`, `srcset` candidates (`<img>`, `<source>`), `<video poster>`, the `src` of audio and video tags, `<object data>` and `<a href>`, `![[file]]` embeds and `[[file]]` wikilinks) that reached the image at `previousPath` and do not reach it at `path`, as kb_links resolves them. Without `updateLinks`, every link by its old path; an embed or wikilink by bare name that still finds the image is not listed, one that now opens another file of that name is. With `updateLinks`, what the rewrite could not keep working (a document it could not read, see `skipped`): normally `[]`. A link that reached nothing before is not listed. `[]` when none broke. Null when the links could not be checked: there is no usable index yet (or a forced rebuild is running) or its link graph could not be read. Links of documents the move did not rewrite are read from the index, so one written moments ago and not yet indexed is not seen, and documents outside the index are not read.
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this move broke in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbMoveResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1)]
    """
    The new path.
    """
    source_hash: Annotated[
        str | None, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')
    ]
    """
    SHA-256 of the moved document (changed only when `updateLinks` rewrote its own relative links).
    """
    index_synchronized: Annotated[bool, Field(alias='indexSynchronized')]
    """
    True only when the search index already reflects this change; false when re-indexing is queued or failed.
    """
    index_error: Annotated[str | None, Field(alias='indexError')]
    """
    Why the index could not be updated, if it could not.
    """
    previous_path: Annotated[
        str | None, Field(alias='previousPath', max_length=1024, min_length=1)
    ]
    """
    The old path.
    """
    updated_paths: Annotated[list[str] | None, Field(alias='updatedPaths')] = None
    """
    Documents whose links `updateLinks` rewrote (the moved document under its new path when its own links changed), sorted; null without `updateLinks`.
    """
    skipped_folders: Annotated[int | None, Field(alias='skippedFolders', ge=0)] = None
    """
    With `updateLinks`: how many folders could not be listed while looking for links, plus documents whose links could not be checked (a name the path guard refuses, a file that cannot be read, is over 8 MiB or is not a regular file, or a file that is not UTF-8 but names the moved document); 0 normally. Links in them were NOT updated and may now be broken. Null without `updateLinks`.
    """
    skipped: list[SkippedEntry] | None = None
    """
    With `updateLinks`: the first 100 of those folders and documents in path order (`.` is the root), each with the reason, as in kb_list_files. Null without `updateLinks`.
    """
    broken_links: Annotated[BrokenLinks | None, Field(alias='brokenLinks')] = None
    """
    The links this move broke, the first 100 by source path and place: links in other indexed documents (Markdown links, reference definitions, autolinks, HTML `<a href>`, wikilinks and embeds) that reached the document at `previousPath` and do not reach it at `path`, as kb_links resolves them. Without `updateLinks`, every link by its old path; a wikilink or embed by name that still finds the document is not listed, one that now opens another note of that name is. With `updateLinks`, what the rewrite could not keep working (a document it could not read, see `skipped`): normally `[]`. A link that reached nothing before is not listed. `[]` when none broke. Null when the links could not be checked: the document was outside the index or not indexed yet, or there is no usable index yet. Links of documents the move did not rewrite are read from the index, so one written moments ago and not yet indexed is not seen. Without `updateLinks`, a move to another folder also lists the moved document's own links (Markdown links, reference definitions, autolinks, HTML `<a href>`, wikilinks and embeds, to documents only: a picture is no document link) that reached a document from its old folder and do not reach it from the new one (a link to itself must reach it at `path`), with `source` = `path`, read from the moved file; with `updateLinks` they are rewritten and not checked. Either way, wikilinks and embeds of other documents that opened another note and, the moved document's new name and place being a nearer match, open it now (as kb_links resolves names), are listed too; `updateLinks` rewrites them to the note they opened, as it does for the moved document's own.
    """
    broken_link_count: Annotated[int | None, Field(alias='brokenLinkCount', ge=0)] = (
        None
    )
    """
    How many links this move broke in all (`brokenLinks` holds the first 100); null when `brokenLinks` is.
    """


class KbOutlineArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbOutlineRequest


class KbOutlineResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    source_hash: Annotated[str, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the file's bytes as read.
    """
    headings: list[OutlineHeading]
    """
    The page's top-level headings in source order; empty when the document has none (or none follows `pointer`).
    """
    next_pointer: Annotated[
        str | None,
        Field(
            alias='nextPointer',
            pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$',
        ),
    ]
    """
    v2 anchor of the first heading not in this page; pass it as `pointer` to read on. Null when this page reaches the last heading.
    """


class KbPatchRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of an existing document.
    """
    operations: Annotated[list[PatchOperation], Field(max_length=100, min_length=1)]
    """
    The edits, applied together or not at all. Two operations may not target the same element or overlapping ranges; a section operation overlaps everything inside its section (but not the next heading).
    """


class KbReadArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbReadRequest


class KbReindexArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbReindexRequest | None = None


class KbReindexResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    started: bool
    """
    True when this call started a new run; false when a run was already in progress (its arguments were not changed).
    """
    current: ReindexProgress
    """
    The run now in progress (the one just started, or the one that was already running).
    """


class KbSaveImageArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    file: OpenAiFileRef | None = None
    """
    The uploaded file as the client passes it (OpenAI file parameter). Not together with `data`.
    """
    data: Annotated[str | None, Field(max_length=36100000, min_length=1)] = None
    """
    The image bytes as standard base64 (line breaks allowed) or a data URI `data:image/<png|jpeg|webp|gif>;base64,<base64>`, at most 25 MiB decoded. For clients that cannot pass an OpenAI file reference. Not together with `file`; a data URI's type must match the bytes.
    """
    file_name: Annotated[
        str | None, Field(alias='fileName', max_length=255, min_length=1)
    ] = None
    """
    File name (no folder) for the default `images/` folder, e.g. `cover` or `cover.png`; the canonical extension is added when missing, a wrong one is refused. Not allowed together with `targetPath`.
    """
    alt_text: Annotated[str, Field(alias='altText', max_length=1000)] = ''
    """
    Alternative text for the returned Markdown link (line breaks become spaces; `\\`, `[`, `]` are escaped).
    """
    target_path: Annotated[
        str | None,
        Field(
            alias='targetPath',
            max_length=1024,
            min_length=1,
            pattern='\\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$',
        ),
    ] = None
    """
    Full root-relative destination including file name and an extension matching the image format, e.g. `docs/img/diagram.png`. Missing folders are created. Not allowed together with `fileName`.
    """


class KbSearchArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbSearchRequest


class KbSearchResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    results: list[SearchResult]
    """
    Best first; empty when nothing matched.
    """
    warning: str | None
    """
    Set when the search ran in a reduced mode, e.g. `hybrid` fell back to lexical because embeddings are off or failing. Our extension: also set when no indexed chunk (in the searched scope) contains any word of the query, with what to try: `lexical` then returns nothing, `hybrid` returns the model's nearest passages, which match by meaning alone: right for a paraphrase, unrelated for a misspelt name, which would otherwise look like an answer. `semantic` runs no word match and gets no such warning.
    """


class ListChunksResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    chunks: list[Chunk]
    next_cursor: Annotated[str | None, Field(alias='nextCursor')]
    """
    Null when this was the last page.
    """


class ReindexResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    scanned_files: Annotated[int, Field(alias='scannedFiles', ge=0)]
    indexed_files: Annotated[int, Field(alias='indexedFiles', ge=0)]
    skipped_files: Annotated[int, Field(alias='skippedFiles', ge=0)]
    """
    Files left as they were because they did not change.
    """
    deleted_files: Annotated[int, Field(alias='deletedFiles', ge=0)]
    chunks_indexed: Annotated[int, Field(alias='chunksIndexed', ge=0)]
    warning: str | None
    unreadable_files: Annotated[int, Field(alias='unreadableFiles', ge=0)]
    """
    Files that could not be read or parsed (not UTF-8, binary, unreadable, not a regular file, over 8 MiB, vanished while read). They are left out of the index; every other file is indexed.
    """
    unreadable: Annotated[list[UnreadableFile], Field(max_length=20)]
    """
    The first 20 unreadable files in path order, each with its reason.
    """


class StatusProject(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    root: str
    """
    Absolute path of the knowledge-base root.
    """
    documents: Annotated[int, Field(ge=0)]
    chunks: Annotated[int, Field(ge=0)]
    last_indexed_at_utc: Annotated[str | None, Field(alias='lastIndexedAtUtc')]
    """
    When the index last changed, a document indexed or removed (never earlier after a removal, decision 770); null before anything was indexed. A reindex that finds nothing changed leaves it as it was.
    """
    unreadable_files: Annotated[int, Field(alias='unreadableFiles', ge=0)]
    """
    Markdown files left out of the index because they could not be read or parsed (not UTF-8, binary, unreadable, not a regular file, over 8 MiB), as the last reindex or re-index of each found them; kept across restarts. Fixing a file and re-indexing it (an edit, the watcher, kb_reindex) removes it from the count.
    """
    unreadable: Annotated[list[UnreadableFile], Field(max_length=20)]
    """
    The first 20 unreadable files in path order, each with its reason.
    """


class StatusSynchronization(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    pending_files: Annotated[int, Field(alias='pendingFiles', ge=0)]
    """
    Paths still to be re-indexed (queued, running, held by the watcher, or failed with a retry still scheduled); the `failed` ones are not counted (decision 782).
    """
    paths: list[str]
    """
    Every path listed here: the pending ones and the failed ones, in path order.
    """
    last_error: Annotated[str | None, Field(alias='lastError')]
    failed_files: Annotated[int, Field(alias='failedFiles', ge=0)]
    """
    Paths whose last re-index failed and that nothing retries until they change again (an edit, the watcher, kb_reindex).
    """
    failed: Annotated[list[UnreadableFile], Field(max_length=20)]
    """
    The first 20 failed paths in path order, each with its reason.
    """
    comparing: bool
    """
    True while the server compares every file with the index to find what changed without it hearing (at start; while it watches, every 5 minutes and after the watcher lost events): the files that compare finds changed are not in `pendingFiles` yet. On a large tree or a slow disk it can outlast kb_status's 5 s wait; poll until it is false (decision 986).
    """


class TableCellUpdate(BaseModel):
    """
    One cell to set. Give exactly one of `rowIndex` / `where` and exactly one of `column` / `columnIndex`.
    """

    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    value: Annotated[str, Field(max_length=10000)]
    """
    The new cell content (may be empty).
    """
    row_index: Annotated[int | None, Field(alias='rowIndex', ge=0)] = None
    """
    Zero-based data row.
    """
    where: TableRowMatch | None = None
    """
    The single row whose cell in a given column equals a value.
    """
    column: Annotated[str | None, Field(min_length=1)] = None
    """
    Column header name.
    """
    column_index: Annotated[int | None, Field(alias='columnIndex', ge=0)] = None
    """
    Zero-based column.
    """
    value_format: Annotated[Literal['text', 'markdown'], Field(alias='valueFormat')] = (
        'text'
    )
    """
    `text` escapes the value so it displays literally (`&`, `<`, `>` become entities; backslash, `|`, `*`, `_`, backtick, `[`, `]`, `!`, `~` and `#` get a backslash); `markdown` writes it verbatim (inline Markdown allowed, an unescaped `|` is refused).
    """


class TableProjection(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    column_count: Annotated[int, Field(alias='columnCount', ge=1)]
    """
    Number of columns (header cells).
    """
    row_count: Annotated[int, Field(alias='rowCount', ge=0)]
    """
    Number of data rows (header and delimiter rows excluded).
    """
    columns: list[TableColumn]
    rows: list[TableRow]
    editable: bool
    """
    False when kb_edit_table will refuse this table (a row has more cells than the header; the extra cells are hidden from `rows`).
    """


class KbEditTableArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of the document holding the table.
    """
    pointer: Annotated[str, Field(max_length=512, min_length=1, pattern='\\S')]
    """
    Hashed anchor of a standalone table (`tN` or `<section>.tN`), v2 as returned by kb_read (v1 `tN~selfHash` accepted). The table must not have been changed since.
    """
    action: Literal['update_cells', 'insert_row', 'delete_row', 'insert_column', 'delete_column', 'rename_column', 'set_alignment']
    """
    The edit to make; decides which other fields are allowed (see the tool description).
    """
    updates: Annotated[
        list[TableCellUpdate] | None, Field(max_length=1000, min_length=1)
    ] = None
    """
    `update_cells`: the cells to set, all resolved against the table as it was before this call; the same cell may appear only once.
    """
    row_index: Annotated[int | None, Field(alias='rowIndex', ge=0)] = None
    """
    `delete_row`: zero-based data row to delete (alternative to `where`).
    """
    where: TableRowMatch | None = None
    """
    `delete_row`: delete the single row whose cell in the given column equals a value (alternative to `rowIndex`).
    """
    column: Annotated[str | None, Field(min_length=1)] = None
    """
    `delete_column`, `rename_column`, `set_alignment`: the column by header name (alternative to `columnIndex`; a column with an empty name must be selected by index).
    """
    column_index: Annotated[int | None, Field(alias='columnIndex', ge=0)] = None
    """
    `delete_column`, `rename_column`, `set_alignment`: zero-based column index (alternative to `column`).
    """
    values: Annotated[list[str] | None, Field(max_length=1000)] = None
    """
    `insert_row`: the new row's cells, exactly one per column, left to right, written as `valueFormat` says (plain text by default). Alternative to `valuesByColumn`.
    """
    values_by_column: Annotated[
        dict[Annotated[str, StringConstraints(min_length=1)], ValuesByColumnAdditionalProperty] | None,
        Field(alias='valuesByColumn'),
    ] = None
    """
    `insert_row`: the new row's cells by column name, written as `valueFormat` says (plain text by default); columns not named get an empty cell; every name must match exactly one column. Alternative to `values`.
    """
    value_format: Annotated[
        Literal['text', 'markdown'] | None, Field(alias='valueFormat')
    ] = None
    """
    Our extension. `insert_row`: how the new row's cells are written, as for `updates` (default `text`: escaped so they display literally; `markdown`: verbatim, inline Markdown such as `` `code` `` or links allowed, an unescaped `|` refused).
    """
    before_row_index: Annotated[int | None, Field(alias='beforeRowIndex', ge=0)] = None
    """
    `insert_row`: insert before this zero-based data row (must be less than the row count). Omit to append after the last row.
    """
    before_column: Annotated[str | None, Field(alias='beforeColumn', min_length=1)] = (
        None
    )
    """
    `insert_column`: insert before the column with this name. Omit both `beforeColumn` and `beforeColumnIndex` to append a last column.
    """
    before_column_index: Annotated[
        int | None, Field(alias='beforeColumnIndex', ge=0)
    ] = None
    """
    `insert_column`: insert before this zero-based column (must be less than the column count).
    """
    name: Annotated[
        str | None, Field(max_length=10000, min_length=1, pattern='\\S')
    ] = None
    """
    `insert_column`: header text of the new column (plain text, escaped).
    """
    new_name: Annotated[
        str | None,
        Field(alias='newName', max_length=10000, min_length=1, pattern='\\S'),
    ] = None
    """
    `rename_column`: the new header text (plain text, escaped). It may equal another column's name (duplicate headers are valid); that name then selects neither column (CONFLICT), so select them by index.
    """
    default_value: Annotated[
        str | None, Field(alias='defaultValue', max_length=10000)
    ] = None
    """
    `insert_column`: plain-text value put in every existing row of the new column (default empty).
    """
    alignment: Literal['none', 'left', 'center', 'right'] | None = None
    """
    `set_alignment` (required) and `insert_column` (optional, default `none`): the column's alignment.
    """


class KbPatchArguments(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    request: KbPatchRequest


class KbReadResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: Annotated[str, Field(max_length=1024, min_length=1, pattern='\\.[mM][dD]$')]
    """
    Root-relative path of a Markdown (`.md`) document.
    """
    pointer: str
    """
    `document` for a read from the top, otherwise the current v2 anchor of the first element returned (after relocation).
    """
    elements: list[ReadElement]
    """
    The addressable elements in this page, in source order; empty for an empty document.
    """
    markdown: str
    """
    The exact source text of the page, from the start of the first element's line (from offset 0 for a `document` read) to the line start of `nextPointer`'s element, or to the end of the file.
    """
    next_pointer: Annotated[
        str | None,
        Field(
            alias='nextPointer',
            pattern='^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$',
        ),
    ]
    """
    v2 anchor of the first element not included; pass it as `pointer` to read on. Null when this page reaches the end of the file.
    """
    source_hash: Annotated[str, Field(alias='sourceHash', pattern='^[0-9a-fA-F]{64}$')]
    """
    SHA-256 of the whole file's bytes as read (lowercase hex).
    """
    table: TableProjection | None
    """
    Structured view of the table when the read starts at a table element (not for `document` reads); null otherwise.
    """


class ReindexOutcome(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    scope: Literal['changed', 'all']
    force: bool
    started_at_utc: Annotated[str, Field(alias='startedAtUtc')]
    """
    UTC time in ISO 8601 with a `Z` suffix.
    """
    completed_at_utc: Annotated[str, Field(alias='completedAtUtc')]
    """
    UTC time in ISO 8601 with a `Z` suffix.
    """
    outcome: Literal['succeeded', 'failed', 'cancelled']
    result: ReindexResult | None
    error: str | None


class StatusIndexing(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    is_running: Annotated[bool, Field(alias='isRunning')]
    current: ReindexProgress | None
    last: ReindexOutcome | None


class KbStatusResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    database_path: Annotated[str, Field(alias='databasePath')]
    """
    Absolute path of the index database.
    """
    index_exists: Annotated[bool, Field(alias='indexExists')]
    """
    Whether the index database file exists yet.
    """
    schema_version: Annotated[str, Field(alias='schemaVersion')]
    chunker_version: Annotated[str, Field(alias='chunkerVersion')]
    """
    The contract's chunk format: `6`. Our revision of the chunker (decisions 781, 1025, 1195: v6's chunks, plus chunks for a document of headings alone, the visible text of HTML blocks and the text of footnote definitions CommonMark reads as reference definitions) is kept in the index manifest (decision 630).
    """
    embedding_text_builder_version: Annotated[
        str, Field(alias='embeddingTextBuilderVersion')
    ]
    embedding_provider: Annotated[
        Literal['none', 'local', 'openai-compatible'], Field(alias='embeddingProvider')
    ]
    embedding_model: Annotated[str, Field(alias='embeddingModel')]
    """
    Model name, or `none` in lexical mode.
    """
    embedding_dimensions: Annotated[int | None, Field(alias='embeddingDimensions')]
    index_mode: Annotated[
        Literal['lexical', 'vector-enabled'], Field(alias='indexMode')
    ]
    allow_writes: Annotated[bool, Field(alias='allowWrites')]
    watch_files: Annotated[bool, Field(alias='watchFiles')]
    project: StatusProject
    synchronization: StatusSynchronization | None
    """
    Targeted re-indexing queued by edits and the file watcher, counting the files the watcher saw change and holds until they have been quiet for 0.4 s; null when nothing is pending and nothing failed. A path whose re-index failed and that nothing retries by itself (a FIFO or a file it may not read named `.md`, text that is not UTF-8; also in `project.unreadable`) is in `failed`, not counted in `pendingFiles`, until it changes again. More than 200 files settling at once (a folder renamed, a checkout) are re-indexed by one `changed` reindex, shown in `indexing`, instead; so once this is null, or its `pendingFiles` is 0 and `comparing` false, and `indexing.isRunning` is false, search reflects every change the server has heard of (minus the `failed` paths). A server hears of what changed while none ran by comparing every file with the index after its first call; a kb_status call starts that compare if it has not started and waits for it (up to 5 s), so the changes it finds are counted here (decision 698); one still running after that shows as `comparing` (decision 986).
    """
    indexing: StatusIndexing
    vectors: StatusVectors | None
    """
    Progress of the embedding pass that follows lexical indexing; null in lexical mode, unless the index was built with embeddings and this run has none (`embedding.provider none`), when it counts the vectors kept and the chunks that wait for the model's next run (decision 630). Search works while chunks are pending (semantic and hybrid cover the embedded ones and say so in `warning`).
    """
    compatibility: StatusCompatibility


OutlineHeading.model_rebuild()
