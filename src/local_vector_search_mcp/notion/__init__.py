"""One-way sync of the knowledge base to Notion (``local-vector-search-mcp notion push``).

``blocks`` turns Markdown into Notion block objects, ``client`` is the port and its
httpx adapter over Notion's REST API, ``push`` plans and applies the page updates and
keeps the document -> page mapping, ``ids`` reads the parent page's id in each form
people write it, ``command`` is the CLI entry point.
"""
