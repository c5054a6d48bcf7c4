"""Exports of knowledge-base documents into other formats (PDF books)."""
