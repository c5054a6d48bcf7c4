"""Search over the storage port: structured lexical queries and snippets (text.py), RRF fusion
and the engine combining lexical and semantic retrieval (engine.py), readiness and warnings
(service.py)."""
