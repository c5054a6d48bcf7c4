"""Images and files as bytes: the engine behind the five image tools and kb_download_file.

::

    formats.py   the four image formats: signatures, extensions, MIME types, the 25 MiB cap
    naming.py    file-name policy for saved images, collision suffixes, the Markdown link
    download.py  the secure HTTPS fetch (checked and pinned addresses, redirects, size cap)
    store.py     create-new publishing of a staged file, folder creation that can be undone
    images.py    save, list (cursor pages), load (GIF preview), delete, move
    files.py     bounded reads of any file under the root (kb_download_file)

Nothing here parses Markdown, schedules indexing or embeds: an image operation only
touches the files it names (contract §11.1).
"""
