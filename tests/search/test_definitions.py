"""Definitions (decision 1057): an identifier finds the list item or table row that defines it."""

from __future__ import annotations

from pathlib import Path

from kb_fakes import indexed_kb

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.definitions import defined_name, defines, promote_defined


def hit(cid: int, text: str) -> ChunkHit:
    return ChunkHit(cid, f"p{cid}.md", f"1.p{cid}~0~0", "H", text, "s" * 64)


def test_the_name_a_definition_opens_with_is_the_one_piece_of_code_of_the_query() -> None:
    assert defined_name("keepAliveTimeout") == "keepAliveTimeout"
    assert defined_name("`index.knn`") == "index.knn"
    assert defined_name("hijack()") == "hijack"
    assert defined_name("--save-dev") == "--save-dev"
    assert defined_name("timeout") is None  # a word, not code
    assert defined_name("keepAliveTimeout option") is None  # two pieces


def test_a_list_item_or_table_row_opening_with_the_name_defines_it() -> None:
    assert defines("Options:\n\n* **keepAliveTimeout** `number` - Default: `4e3`.", "keepAliveTimeout")
    assert defines("1. `keepAliveTimeout`\n", "keepAliveTimeout")
    assert defines("| Setting | Type |\n|---|---|\n| `index.knn` | Boolean |", "index.knn")
    assert defines("- cluster.max_shards_per_node (Integer): limits shards", "cluster.max_shards_per_node") is False
    assert defines("- cluster.max_shards_per_node: limits the shards", "cluster.max_shards_per_node")
    assert defines("`hijack()`: interrupts the normal lifecycle", "hijack")
    assert defines("keepAliveTimeout: 5", "keepAliveTimeout")  # a line that opens with the term and a colon


def test_a_mention_is_not_a_definition() -> None:
    wrapped = "reference count, which we get by calling the\n`Rc::strong_count` and `Rc::weak_count`."
    assert not defines(wrapped, "Rc::strong_count")  # a wrapped line of a sentence
    assert not defines("Set `keepAliveTimeout` to a lower value.", "keepAliveTimeout")
    assert not defines("* `keepAliveTimeoutThreshold` - the margin", "keepAliveTimeout")  # another name
    assert not defines("* `index.knn.space_type` - the space", "index.knn")
    assert not defines("* keepAliveTimeout is how long", "keepAliveTimeout")  # bare, no separator: prose
    # a key set in a code example is a use (review of 1057)
    assert not defines("Set it:\n\n```yaml\ncluster.name: my-cluster\n```\n", "cluster.name")
    assert not defines("~~~js\nconst agent = new Agent({\n  keepAliveTimeout: 10\n})\n", "keepAliveTimeout")
    assert defines("```sh\nnpm i\n```\n\n- `keepAliveTimeout`: idle time\n", "keepAliveTimeout")


def test_defining_hits_go_first_in_their_own_order() -> None:
    hits = [
        hit(1, "Call `setGlobalDispatcher(agent)` first."),
        hit(2, "* `connect` - options\n* `keepAliveTimeout` - idle time"),
        hit(3, "Lower `keepAliveTimeout` in tests."),
        hit(4, "| `keepAliveTimeout` | number |"),
    ]
    assert [h.chunk_id for h in promote_defined(hits, "keepAliveTimeout")] == [2, 4, 1, 3]
    assert promote_defined(hits, "keep alive timeout") == hits  # prose: no definition looked for


def test_an_option_finds_the_option_list_before_the_examples_that_set_it(tmp_path: Path) -> None:
    options = "\n".join(
        f"* **{name}** `number` - {text}"
        for name, text in [
            ("bodyTimeout", "the timeout after which a request will time out, in milliseconds"),
            ("headersTimeout", "the amount of time the parser will wait to receive the complete headers"),
            ("keepAliveMaxTimeout", "the maximum allowed keep-alive timeout when overridden by the server"),
            ("keepAliveTimeout", "the timeout after which a socket without active requests will time out"),
            ("maxHeaderSize", "the maximum length of request headers in bytes"),
            ("pipelining", "the amount of concurrent requests to be sent over the single connection"),
        ]
    )
    client = f"# Client\n\n## new Client(url, options)\n\nCreates a client for one origin.\n\n{options}\n"
    testing = (
        "# Testing\n\nSockets kept alive keep the test runner waiting: lower `keepAliveTimeout` "
        "(`keepAliveTimeout: 10`) so the suite exits.\n"
    )
    svc = indexed_kb(tmp_path, {"client.md": client, "testing.md": testing})
    top = svc.search(query="keepAliveTimeout", mode="lexical", top_k=3)["results"]
    assert top[0]["path"] == "client.md"
