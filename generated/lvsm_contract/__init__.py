"""generated from spec/ by tools/generate.py, do not edit.

The wire contract of local-vector-search-mcp compiled from spec/:
``registry`` (the MCP registration table), ``models`` (pydantic models of
every tool's arguments and result), ``handlers`` (the typed signature of each
tool's handler), ``content`` (the blocks a content-only tool returns),
``config`` (the configuration model), ``cli`` (one ``call <tool>`` subcommand
per tool) and ``schemas/`` (JSON Schemas).
"""
