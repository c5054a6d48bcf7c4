"""dispatch.py (named apart from tests/markdown/test_dispatch.py, which pytest would confuse it with):
what the dispatcher makes of arguments before a handler sees them."""

from __future__ import annotations

from typing import Any

import pytest
from lvsm_contract.registry import BY_NAME

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.errors import InvalidArgument, InvalidPath, KbError

# A valid value for every required property the cases below need.
REQUIRED: dict[str, dict[str, Any]] = {
    "kb_read": {"path": "a.md"},
    "kb_search": {"query": "x"},
    "kb_create_pdf_book": {"path": "a.md"},
    "kb_move": {"sourcePath": "a.md", "targetPath": "b.md", "expectedSourceHash": "0" * 64},
    "kb_move_image": {"sourcePath": "a.png", "targetPath": "b.png"},
    "kb_save_image": {"data": "iVBORw0KGgo="},
    "get_chunk": {"id": "md:a.md#0"},
}
UPSERT = {"sourcePath": "s", "chunkIndex": 0, "content": "c", "embedding": [1.0]}


def _optional_properties(tool: str) -> list[str]:
    spec = BY_NAME[tool]
    schema = spec.input_schema()
    defs = schema.get("$defs", {})
    if spec.envelope == "request":
        schema = defs[schema["properties"]["request"]["$ref"].rsplit("/", 1)[-1]]
    required = set(schema.get("required", []))
    return [name for name in schema.get("properties", {}) if name not in required]


def _arguments(tool: str, fields: dict[str, Any]) -> dict[str, Any]:
    request = {**REQUIRED.get(tool, {}), **fields}
    return {"request": request} if BY_NAME[tool].envelope == "request" else request


TOOLS = ["kb_reindex", "kb_search", "kb_read", "kb_list_files", "kb_create_pdf_book", "kb_list_images"]
TOOLS += ["kb_links", "kb_move", "kb_move_image", "kb_save_image", "get_chunk", "list_chunks"]
CASES = [
    (tool, name)
    for tool in TOOLS
    for name in _optional_properties(tool)
    if not (tool == "kb_save_image" and name == "data")
]


@pytest.mark.parametrize(("tool", "name"), CASES, ids=[f"{t}.{n}" for t, n in CASES])
def test_an_explicit_null_for_an_optional_argument_means_omitted(tool: str, name: str) -> None:
    """Decision 280: clients that spell "absent" as ``null`` (strict-mode function calling sends
    every property) get the default, on every optional property, whether or not it has one."""
    spec = BY_NAME[tool]
    with_null = dispatch.validate_arguments(spec, _arguments(tool, {name: None}))
    omitted = dispatch.validate_arguments(spec, _arguments(tool, {}))
    assert with_null == omitted


def test_null_stays_an_error_for_a_required_argument() -> None:
    with pytest.raises(InvalidArgument, match="query"):
        dispatch.validate_arguments(BY_NAME["kb_search"], {"request": {"query": None}})
    with pytest.raises(InvalidArgument, match="request"):
        dispatch.validate_arguments(BY_NAME["kb_read"], {"request": None})


def test_a_meaningful_null_is_kept() -> None:
    """A metadata filter value may be null (equality with null): it is not dropped."""
    spec = BY_NAME["search_knowledge"]
    parsed = dispatch.validate_arguments(spec, {"query": "x", "filter": {"metadata": {"status": None}}})
    assert parsed is not None
    assert parsed.filter is not None and parsed.filter.metadata == {"status": None}  # type: ignore[attr-defined]


def test_null_inside_array_items_means_omitted_too() -> None:
    spec = BY_NAME["kb_edit_table"]
    update = {"rowIndex": 0, "column": "a", "value": "v"}
    base = {"path": "a.md", "pointer": "t1~0000000000000000", "action": "update_cells"}
    with_null = dispatch.validate_arguments(spec, {**base, "updates": [{**update, "valueFormat": None}]})
    omitted = dispatch.validate_arguments(spec, {**base, "updates": [update]})
    assert with_null == omitted


def test_every_tool_declares_invalid_argument() -> None:
    """A malformed call (a missing, unknown or ill-typed property) is INVALID_ARGUMENT on every
    tool, kb_status included, so each one's error list says so (decision 286)."""
    for name, spec in BY_NAME.items():
        assert "INVALID_ARGUMENT" in spec.errors, name


@pytest.mark.parametrize(
    ("tool", "arguments", "where"),
    [
        ("kb_search", {"request": {"query": "x", "tags": [""]}}, "request.tags.0"),
        ("kb_search", {"request": {"query": "x", "tags": ["ok", "t" * 201]}}, "request.tags.1"),
        ("kb_search", {"request": {"query": "x", "includeGlobs": ["g" * 513]}}, "request.includeGlobs.0"),
        (
            "kb_edit_table",
            {"path": "a.md", "pointer": "t1~0", "action": "insert_row", "values": ["v" * 10001]},
            "values.0",
        ),
    ],
)
def test_array_items_are_held_to_their_published_constraints(tool: str, arguments: Any, where: str) -> None:
    """Decision 287: the published schema bounds array items (a tag is 1..200 characters, a cell
    at most 10,000); the models keep items plain, so the dispatcher checks them."""
    with pytest.raises(InvalidArgument, match=f"{where}: String should"):
        dispatch.validate_arguments(BY_NAME[tool], arguments)


def test_items_within_their_constraints_pass() -> None:
    parsed = dispatch.validate_arguments(BY_NAME["kb_search"], {"request": {"query": "x", "tags": ["a", "b/c"]}})
    assert parsed is not None and parsed.tags == ["a", "b/c"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("tool", "arguments", "where"),
    [
        ("kb_reindex", {"request": {"force": "yes"}}, "request.force"),
        ("kb_reindex", {"request": {"force": 1}}, "request.force"),
        ("kb_move", {"request": {**REQUIRED["kb_move"], "updateLinks": "true"}}, "request.updateLinks"),
        ("kb_read", {"request": {"path": "a.md", "maxElements": True}}, "request.maxElements"),
        ("kb_search", {"request": {"query": "x", "topK": False}}, "request.topK"),
        ("kb_list_images", {"pageSize": True}, "pageSize"),
        # JSON Schema's `number` excludes them too (decision 730): an embedding [true, false] was
        # stored as the vector (1, 0)
        ("upsert_vector", {**UPSERT, "embedding": [True, False]}, "embedding.0"),
        ("search_vectors", {"embedding": [0.5, False]}, "embedding.1"),
        ("update_chunk", {"id": "e", "embedding": [1, True]}, "embedding.1"),
    ],
)
def test_booleans_and_numbers_are_not_interchangeable(tool: str, arguments: Any, where: str) -> None:
    """Decision 288: JSON Schema's integer excludes true/false and its boolean is only true/false."""
    with pytest.raises(InvalidArgument, match=f"{where}: Input should be a valid"):
        dispatch.validate_arguments(BY_NAME[tool], arguments)


@pytest.mark.parametrize(
    ("tool", "arguments", "where"),
    [
        # Python's json and the SDK read NaN / Infinity, which JSON has not: a metadata value was
        # stored as null, and a filter on one matched every chunk without the field (decision 731)
        ("upsert_vector", {**UPSERT, "metadata": {"score": float("inf")}}, "metadata.score"),
        ("upsert_vector", {**UPSERT, "metadata": {"deep": [{"x": float("nan")}]}}, "metadata.deep.0.x"),
        ("update_chunk", {"id": "e", "metadata": {"score": float("-inf")}}, "metadata.score"),
        ("search_vectors", {"embedding": [1.0], "filter": {"metadata": {"k": float("inf")}}}, "filter.metadata.k"),
        ("search_knowledge", {"query": "x", "filter": {"metadata": {"k": float("nan")}}}, "filter.metadata.k"),
        ("upsert_vector", {**UPSERT, "embedding": [float("nan")]}, "embedding.0"),
        ("search_vectors", {"embedding": [0.25, 1e308, float("-inf"), 0.5]}, "embedding.2"),
    ],
)
def test_nan_and_infinity_are_refused_wherever_they_are_sent(tool: str, arguments: Any, where: str) -> None:
    with pytest.raises(InvalidArgument, match=f"{where}: not a finite number"):
        dispatch.validate_arguments(BY_NAME[tool], arguments)


def test_large_finite_numbers_still_pass() -> None:
    parsed = dispatch.validate_arguments(BY_NAME["upsert_vector"], {**UPSERT, "metadata": {"big": 1e308, "n": 2**70}})
    assert parsed is not None and parsed.metadata.root == {"big": 1e308, "n": 2**70}  # type: ignore[attr-defined]


def test_numbers_written_as_strings_still_pass() -> None:
    """As in the reference (.NET's web defaults read numbers from strings)."""
    parsed = dispatch.validate_arguments(BY_NAME["kb_search"], {"request": {"query": "x", "topK": "5"}})
    assert parsed is not None and parsed.top_k == 5  # type: ignore[attr-defined]
    parsed = dispatch.validate_arguments(BY_NAME["kb_reindex"], {"request": {"force": True}})
    assert parsed is not None and parsed.force is True  # type: ignore[attr-defined]


def test_the_largest_image_wrapped_in_crlf_lines_passes_the_schema():
    """`data` allows line breaks (decision 402): 25 MiB as base64 wrapped at 64 characters with
    CRLF, PEM's width, is about 36.0M characters, beyond the unwrapped 34,952,536."""
    import base64

    from local_vector_search_mcp.assets.formats import MAX_BYTES
    from local_vector_search_mcp.assets.images import decode_image_data

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    flat = base64.b64encode(png + bytes(MAX_BYTES - len(png))).decode()
    wrapped = "data:image/png;base64," + "\r\n".join(flat[i : i + 64] for i in range(0, len(flat), 64))
    parsed = dispatch.validate_arguments(BY_NAME["kb_save_image"], {"data": wrapped, "fileName": "big"})
    assert parsed is not None and len(decode_image_data(parsed.data).data) == MAX_BYTES  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"request": {"query": "x", "tags": ["ok", "bad\ud800"]}}, "request.tags.1"),
        ({"request": {"query": "x", "pathGlobs": ["docs/**", "\udfff"]}}, "request.pathGlobs.1"),
    ],
)
def test_a_lone_surrogate_in_a_list_is_refused_with_its_place(arguments: Any, where: str) -> None:
    """The walk skips plain numbers in lists for speed (an embedding is 384 of them); strings in a
    list are still read."""
    with pytest.raises(InvalidArgument, match=f"{where}: not valid Unicode text"):
        dispatch.validate_arguments(BY_NAME["kb_search"], arguments)


@pytest.mark.parametrize(
    ("tool", "arguments", "hint"),
    [
        # the fields a `request` tool expects, sent without the envelope (as flat tools take theirs)
        (
            "kb_search",
            {"query": "x", "topK": 3},
            'kb_search takes its arguments inside one `request` object: {"request": {"query": ..., "topK": ...}}',
        ),
        (
            "kb_read",
            {"path": "a.md"},
            'kb_read takes its arguments inside one `request` object: {"request": {"path": ...}}',
        ),
        (
            "kb_reindex",
            {"scope": "all"},
            'kb_reindex takes its arguments inside one `request` object: {"request": {"scope": ...}}',
        ),
        # the envelope sent to a flat tool
        (
            "kb_load_image",
            {"request": {"path": "a.png"}},
            'kb_load_image takes its arguments directly, not inside a `request` object: {"path": ...}',
        ),
        # the envelope with nothing in it, to a flat tool whose fields are all optional (decision 1007)
        (
            "kb_list_images",
            {"request": {}},
            "kb_list_images takes its arguments directly, not inside a `request` object: {}",
        ),
        # anything sent to the tool that takes none
        ("kb_status", {"request": {}}, "kb_status takes no arguments: send {}"),
    ],
)
def test_a_wrong_envelope_is_named_with_the_right_one(tool: str, arguments: dict[str, Any], hint: str) -> None:
    """Decision 851: a client that sends a `request` tool's fields flat (or wraps a flat tool's) got
    "request: Field required; query: unknown field", true but no help to a model that must fix
    its call; the message now also shows the shape the tool takes. The code stays INVALID_ARGUMENT."""
    with pytest.raises(InvalidArgument) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert raised.value.message.endswith(f". {hint}.")  # a sentence of its own (decision 983)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("kb_search", {"request": {"query": "x", "limit": 3}}),  # a wrong field inside the envelope
        ("kb_search", {"request": {"query": "x"}, "extra": 1}),  # a stray field beside it
        ("kb_search", {"quarry": "x"}),  # flat, but nothing the tool knows
    ],
)
def test_other_argument_errors_get_no_envelope_hint(tool: str, arguments: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgument) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert "takes its arguments" not in raised.value.message and "unknown field" in raised.value.message


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("kb_search", {"request": "aardvark"}, "request: Input should be a JSON object"),
        ("kb_search", {"request": ["aardvark"]}, "request: Input should be a JSON object"),
        (
            "kb_edit_table",
            {"path": "a.md", "pointer": "1.t1", "action": "delete_row", "where": "x"},
            "where: Input should be a JSON object",
        ),
    ],
)
def test_a_non_object_where_an_object_belongs_names_no_internal_class(
    tool: str, arguments: dict[str, Any], expected: str
) -> None:
    """Decision 855: pydantic's words named our generated class ("a valid dictionary or instance
    of KbSearchRequest"), a name no client can know; JSON calls it an object."""
    with pytest.raises(InvalidArgument) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert expected in raised.value.message and "instance of" not in raised.value.message


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("kb_search", {"request": {"query": "x", "topk": 3}}, "request.topk: unknown field (did you mean 'topK'?)"),
        ("kb_search", {"request": {"query": "x", "top_k": 3}}, "request.top_k: unknown field (did you mean 'topK'?)"),
        (
            "kb_read",
            {"request": {"path": "a.md", "max_bytes": 10}},
            "request.max_bytes: unknown field (did you mean 'maxBytes'?)",
        ),
        ("kb_search", {"Request": {"query": "x"}}, "Request: unknown field (did you mean 'request'?)"),
        (
            "kb_edit_table",
            {"path": "a.md", "pointer": "1.t1", "action": "delete_row", "RowIndex": 0},
            "RowIndex: unknown field (did you mean 'rowIndex'?)",
        ),
    ],
)
def test_a_field_in_another_spelling_is_named_with_the_published_one(
    tool: str, arguments: dict[str, Any], expected: str
) -> None:
    """Decision 855: notes §1 publish camelCase names; a client writing `top_k` or `topk` was told
    "unknown field" and left to guess the spelling."""
    with pytest.raises(InvalidArgument) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert expected in raised.value.message


@pytest.mark.parametrize(
    ("tool", "arguments", "error", "expected"),
    [
        ("kb_read", {"request": {"path": "notes.txt"}}, InvalidPath, "request.path: should name a Markdown document"),
        ("kb_load_image", {"path": "doc.md"}, InvalidPath, "path: should name an image ending in .png, .jpg"),
        (
            "kb_create_pdf_book",
            {"request": {"path": "a.md", "outputPath": "a.md"}},
            InvalidPath,
            "request.outputPath: should name a PDF ending in .pdf",
        ),
        ("kb_search", {"request": {"query": " \n\t"}}, InvalidArgument, "request.query: should hold a character other"),
        (
            "kb_move_image",
            {"request": {"sourcePath": "a.png", "targetPath": "b.png", "expectedSha256": "xyz"}},
            InvalidArgument,
            "request.expectedSha256: should be a SHA-256 as 64 hex digits",
        ),
        ("upsert_vector", {**UPSERT, "collection": "-x"}, InvalidArgument, "collection: should start with a letter"),
        ("get_chunk", {"id": "  "}, InvalidArgument, "id: should hold a character other than whitespace"),
    ],
)
def test_a_value_off_its_pattern_is_told_in_words(
    tool: str, arguments: dict[str, Any], error: type[KbError], expected: str
) -> None:
    """Decision 1055: `notes.txt` to kb_read was "String should match pattern '\\.[mM][dD]$'", and a
    blank query "should match pattern '\\S'": a regular expression to decode for what was wrong."""
    with pytest.raises(error) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert expected in raised.value.message and "pattern" not in raised.value.message


def _patterns(node: object) -> set[str]:
    if isinstance(node, dict):
        own = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return own.union(*(_patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(value) for value in node))
    return set()


def test_every_published_pattern_has_words() -> None:
    """A pattern added to spec/ without words would be reported as the bare expression again."""
    published = set().union(*(_patterns(spec.input_schema()) for spec in BY_NAME.values()))
    assert published and published <= set(dispatch.PATTERN_WORDS)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "kb_search",
            {"request": {"query": "x", "topK": 0}},
            "request.topK: Input should be greater than or equal to 1 (got 0)",
        ),
        ("kb_search", {"request": {"query": "x", "mode": "fuzzy"}}, "request.mode: Input should be 'lexical', "),
        ("kb_search", {"request": {"query": "x", "mode": "fuzzy"}}, "'hybrid' (got 'fuzzy')"),
        (
            "kb_links",
            {"request": {"path": "a.md", "depth": 9}},
            "request.depth: Input should be less than or equal to 5 (got 9)",
        ),
        (
            "kb_read",
            {"request": {"path": "a.md", "maxBytes": True}},
            "request.maxBytes: Input should be a valid integer (got true)",
        ),
        ("kb_read", {"request": {"path": None}}, "request.path: Input should be a valid string (got null)"),
        ("kb_read", {"request": "a.md"}, "request: Input should be a JSON object (got 'a.md')"),
        (
            "kb_search",
            {"request": {"query": "x", "tags": ["a", ""]}},
            "request.tags.1: String should have at least 1 character(s) (got '')",
        ),
        (
            "kb_search",
            {"request": {"query": "q" * 5000}},
            "request.query: String should have at most 4096 characters (got 5000 characters)",
        ),
        ("kb_read", {"request": {"path": "notes.txt"}}, "(a path ending in .md) (got 'notes.txt')"),
        (
            "kb_reindex",
            {"request": {"force": "yes"}},
            "request.force: Input should be a valid boolean (true or false) (got 'yes')",
        ),
    ],
)
def test_a_refused_value_is_named_after_what_was_wrong_with_it(
    tool: str, arguments: dict[str, Any], expected: str
) -> None:
    """Decision 1115: "topK: Input should be greater than or equal to 1" named the argument and the
    bound, not the value sent; an agent that computed it from a list could not see which one was
    wrong. A string is trimmed, a long one counted."""
    with pytest.raises(KbError) as raised:
        dispatch.validate_arguments(BY_NAME[tool], arguments)
    assert expected in raised.value.message


def test_a_shown_value_is_trimmed_and_an_absolute_path_is_not_repeated() -> None:
    with pytest.raises(InvalidArgument) as raised:
        dispatch.validate_arguments(BY_NAME["kb_read"], {"request": {"path": "a.md", "maxBytes": "z" * 500}})
    assert f"(got '{'z' * dispatch.SHOWN_CHARS}...')" in raised.value.message
    with pytest.raises(InvalidPath) as refused:
        dispatch.validate_arguments(BY_NAME["kb_read"], {"request": {"path": "/home/someone/notes.txt"}})
    assert "(got an absolute path)" in refused.value.message and "/home" not in refused.value.message
    with pytest.raises(InvalidPath) as drive:
        dispatch.validate_arguments(
            BY_NAME["kb_create_pdf_book"], {"request": {"path": "a.md", "outputPath": "C:\\x.txt"}}
        )
    assert "(got an absolute path)" in drive.value.message and "x.txt" not in drive.value.message
