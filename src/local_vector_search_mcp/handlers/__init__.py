"""Hand-written tool handlers, thin over the engine, and their typed, lazy registration.

A handler takes the workspace and the generated request model and returns the generated
result model (``lvsm_contract.models``), or raises a :class:`~local_vector_search_mcp.errors.KbError`::

    def kb_search(ws: Workspace, request: KbSearchRequest) -> KbSearchResult
    def kb_status(ws: Workspace) -> KbStatusResult                  # tool without arguments
    def kb_load_image(ws: Workspace, request: KbLoadImageArguments) -> ContentResult  # content-only

``BINDINGS`` maps each built tool to a *binder*: a function that imports the handler's module on
first call and returns the handler. Its return type is the tool's alias from the generated
``lvsm_contract.handlers`` (``KbSearch[Workspace]`` = ``Callable[[Workspace, KbSearchRequest],
KbSearchResult]``), so ``make typecheck`` fails when a handler's request or result type differs
from spec/. Nothing here imports a handler module or the models at start-up.

Adding a tool: write ``kb_x`` in the module it belongs to, add a binder ``_kb_x() -> contract.KbX[W]``
below and its entry in ``BINDINGS``, and remove the tool from ``NOT_YET_BUILT`` in
``tests/handlers/test_registry.py``. Only tools in ``BINDINGS`` are listed by the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lvsm_contract import handlers as contract

    from ..workspace import Workspace as W

__all__ = ["BINDINGS", "Binder"]

Binder = Callable[[], Callable[..., object]]


def _kb_status() -> contract.KbStatus[W]:
    from .status import kb_status

    return kb_status


def _kb_reindex() -> contract.KbReindex[W]:
    from .indexing import kb_reindex

    return kb_reindex


def _kb_search() -> contract.KbSearch[W]:
    from .search import kb_search

    return kb_search


def _kb_list_files() -> contract.KbListFiles[W]:
    from .files import kb_list_files

    return kb_list_files


def _kb_read() -> contract.KbRead[W]:
    from .reading import kb_read

    return kb_read


def _kb_outline() -> contract.KbOutline[W]:
    from .reading import kb_outline

    return kb_outline


def _kb_create() -> contract.KbCreate[W]:
    from .documents import kb_create

    return kb_create


def _kb_move() -> contract.KbMove[W]:
    from .documents import kb_move

    return kb_move


def _kb_delete() -> contract.KbDelete[W]:
    from .documents import kb_delete

    return kb_delete


def _kb_patch() -> contract.KbPatch[W]:
    from .editing import kb_patch

    return kb_patch


def _kb_edit_table() -> contract.KbEditTable[W]:
    from .editing import kb_edit_table

    return kb_edit_table


def _kb_create_pdf_book() -> contract.KbCreatePdfBook[W]:
    from .export import kb_create_pdf_book

    return kb_create_pdf_book


def _kb_download_file() -> contract.KbDownloadFile[W]:
    from .downloads import kb_download_file

    return kb_download_file


def _kb_save_image() -> contract.KbSaveImage[W]:
    from .images import kb_save_image

    return kb_save_image


def _kb_list_images() -> contract.KbListImages[W]:
    from .images import kb_list_images

    return kb_list_images


def _kb_load_image() -> contract.KbLoadImage[W]:
    from .images import kb_load_image

    return kb_load_image


def _kb_delete_image() -> contract.KbDeleteImage[W]:
    from .images import kb_delete_image

    return kb_delete_image


def _kb_move_image() -> contract.KbMoveImage[W]:
    from .images import kb_move_image

    return kb_move_image


def _kb_links() -> contract.KbLinks[W]:
    from .links import kb_links

    return kb_links


def _index_note() -> contract.IndexNote[W]:
    from .chunks import index_note

    return index_note


def _upsert_vector() -> contract.UpsertVector[W]:
    from .chunks import upsert_vector

    return upsert_vector


def _search_vectors() -> contract.SearchVectors[W]:
    from .chunks import search_vectors

    return search_vectors


def _search_knowledge() -> contract.SearchKnowledge[W]:
    from .chunks import search_knowledge

    return search_knowledge


def _get_chunk() -> contract.GetChunk[W]:
    from .chunks import get_chunk

    return get_chunk


def _list_chunks() -> contract.ListChunks[W]:
    from .chunks import list_chunks

    return list_chunks


def _update_chunk() -> contract.UpdateChunk[W]:
    from .chunks import update_chunk

    return update_chunk


def _delete_chunk() -> contract.DeleteChunk[W]:
    from .chunks import delete_chunk

    return delete_chunk


BINDINGS: dict[str, Binder] = {
    "kb_status": _kb_status,
    "kb_reindex": _kb_reindex,
    "kb_search": _kb_search,
    "kb_list_files": _kb_list_files,
    "kb_read": _kb_read,
    "kb_outline": _kb_outline,
    "kb_links": _kb_links,
    "kb_create": _kb_create,
    "kb_move": _kb_move,
    "kb_delete": _kb_delete,
    "kb_patch": _kb_patch,
    "kb_edit_table": _kb_edit_table,
    "kb_create_pdf_book": _kb_create_pdf_book,
    "kb_download_file": _kb_download_file,
    "kb_save_image": _kb_save_image,
    "kb_list_images": _kb_list_images,
    "kb_load_image": _kb_load_image,
    "kb_delete_image": _kb_delete_image,
    "kb_move_image": _kb_move_image,
    "index_note": _index_note,
    "upsert_vector": _upsert_vector,
    "search_vectors": _search_vectors,
    "search_knowledge": _search_knowledge,
    "get_chunk": _get_chunk,
    "list_chunks": _list_chunks,
    "update_chunk": _update_chunk,
    "delete_chunk": _delete_chunk,
}
