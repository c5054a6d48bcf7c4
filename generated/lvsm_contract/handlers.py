# generated from spec/ by tools/generate.py, do not edit
"""The signature each tool's handler must have: one generic alias per tool of spec/.

``KbSearch[Workspace]`` is ``Callable[[Workspace, KbSearchRequest], KbSearchResult]``. The
server binds every handler through a function whose return type is its alias, so mypy refuses
a handler that takes or returns anything but the spec's models (see
``local_vector_search_mcp/handlers/__init__.py``). Tools without arguments take only the
workspace; content-only tools return a :class:`~lvsm_contract.content.ContentResult`.

The workspace type is a parameter so the contract does not depend on the server. This module
imports the models: the server imports it under ``TYPE_CHECKING`` only, so start-up stays lazy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, TypeVar

from .content import ContentResult
from .models import (
    DeleteChunkArguments,
    DeleteChunkResult,
    GetChunkArguments,
    GetChunkResult,
    IndexNoteArguments,
    IndexNoteResult,
    KbCreatePdfBookRequest,
    KbCreatePdfBookResult,
    KbCreateRequest,
    KbCreateResult,
    KbDeleteImageArguments,
    KbDeleteImageResult,
    KbDeleteRequest,
    KbDeleteResult,
    KbDownloadFileRequest,
    KbEditTableArguments,
    KbEditTableResult,
    KbLinksRequest,
    KbLinksResult,
    KbListFilesRequest,
    KbListFilesResult,
    KbListImagesArguments,
    KbListImagesResult,
    KbLoadImageArguments,
    KbMoveImageRequest,
    KbMoveImageResult,
    KbMoveRequest,
    KbMoveResult,
    KbOutlineRequest,
    KbOutlineResult,
    KbPatchRequest,
    KbPatchResult,
    KbReadRequest,
    KbReadResult,
    KbReindexRequest,
    KbReindexResult,
    KbSaveImageArguments,
    KbSaveImageResult,
    KbSearchRequest,
    KbSearchResult,
    KbStatusResult,
    ListChunksArguments,
    ListChunksResult,
    SearchKnowledgeArguments,
    SearchKnowledgeResult,
    SearchVectorsArguments,
    SearchVectorsResult,
    UpdateChunkArguments,
    UpdateChunkResult,
    UpsertVectorArguments,
    UpsertVectorResult,
)

W = TypeVar("W")

KbStatus: TypeAlias = Callable[[W], KbStatusResult]
KbReindex: TypeAlias = Callable[[W, KbReindexRequest], KbReindexResult]
KbSearch: TypeAlias = Callable[[W, KbSearchRequest], KbSearchResult]
KbRead: TypeAlias = Callable[[W, KbReadRequest], KbReadResult]
KbPatch: TypeAlias = Callable[[W, KbPatchRequest], KbPatchResult]
KbEditTable: TypeAlias = Callable[[W, KbEditTableArguments], KbEditTableResult]
KbCreate: TypeAlias = Callable[[W, KbCreateRequest], KbCreateResult]
KbMove: TypeAlias = Callable[[W, KbMoveRequest], KbMoveResult]
KbDelete: TypeAlias = Callable[[W, KbDeleteRequest], KbDeleteResult]
KbListFiles: TypeAlias = Callable[[W, KbListFilesRequest], KbListFilesResult]
KbOutline: TypeAlias = Callable[[W, KbOutlineRequest], KbOutlineResult]
KbCreatePdfBook: TypeAlias = Callable[[W, KbCreatePdfBookRequest], KbCreatePdfBookResult]
KbDownloadFile: TypeAlias = Callable[[W, KbDownloadFileRequest], ContentResult]
KbSaveImage: TypeAlias = Callable[[W, KbSaveImageArguments], KbSaveImageResult]
KbListImages: TypeAlias = Callable[[W, KbListImagesArguments], KbListImagesResult]
KbLoadImage: TypeAlias = Callable[[W, KbLoadImageArguments], ContentResult]
KbDeleteImage: TypeAlias = Callable[[W, KbDeleteImageArguments], KbDeleteImageResult]
KbMoveImage: TypeAlias = Callable[[W, KbMoveImageRequest], KbMoveImageResult]
KbLinks: TypeAlias = Callable[[W, KbLinksRequest], KbLinksResult]
IndexNote: TypeAlias = Callable[[W, IndexNoteArguments], IndexNoteResult]
UpsertVector: TypeAlias = Callable[[W, UpsertVectorArguments], UpsertVectorResult]
SearchVectors: TypeAlias = Callable[[W, SearchVectorsArguments], SearchVectorsResult]
SearchKnowledge: TypeAlias = Callable[[W, SearchKnowledgeArguments], SearchKnowledgeResult]
GetChunk: TypeAlias = Callable[[W, GetChunkArguments], GetChunkResult]
ListChunks: TypeAlias = Callable[[W, ListChunksArguments], ListChunksResult]
UpdateChunk: TypeAlias = Callable[[W, UpdateChunkArguments], UpdateChunkResult]
DeleteChunk: TypeAlias = Callable[[W, DeleteChunkArguments], DeleteChunkResult]
