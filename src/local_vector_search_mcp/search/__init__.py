"""Search: CJK-aware lexical text, FTS5 query building, snippets, RRF fusion
and the search engine that combines lexical and semantic retrieval."""
