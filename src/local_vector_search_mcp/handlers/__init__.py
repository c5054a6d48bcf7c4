"""Hand-written tool handlers, thin over the engine.

``HANDLERS`` maps a tool name to ``"module:function"`` inside this package. A
handler is a plain function ``(ws, request) -> dict`` (``(ws) -> dict`` for
tools without arguments) that returns the JSON of the tool's result schema or
raises a :class:`~local_vector_search_mcp.errors.KbError`. Only tools listed
here are published; modules are imported on first call.
"""

HANDLERS: dict[str, str] = {
    "kb_status": "status:kb_status",
    "kb_reindex": "indexing:kb_reindex",
    "kb_search": "search:kb_search",
    "kb_list_files": "files:kb_list_files",
    "kb_read": "reading:kb_read",
    "kb_outline": "reading:kb_outline",
    "kb_create": "documents:kb_create",
    "kb_move": "documents:kb_move",
    "kb_delete": "documents:kb_delete",
    "kb_patch": "editing:kb_patch",
    "kb_edit_table": "editing:kb_edit_table",
}
