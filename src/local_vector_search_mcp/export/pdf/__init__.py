"""PDF books from Markdown with reportlab.

::

    book.py       which documents make the book; title page, TOC, outline, page template
    flowables.py  one element of the element model -> reportlab flowables
    inline.py     inline Markdown (markdown-it tokens) -> reportlab paragraph markup
    sites.py      a documentation site's markup (:::containers, MDX, Liquid, Hugo) as its site shows it
    images.py     local pictures through the path guard, downsampled per profile
    styles.py     page formats, the five typographic styles, image profiles
    fonts.py      TrueType faces via fontconfig, CJK fallback runs, missing glyphs
"""

from .book import MAX_BOOK_BYTES, BookOptions, render_book, render_file

__all__ = ["MAX_BOOK_BYTES", "BookOptions", "render_book", "render_file"]
