"""kb_save_image, kb_list_images, kb_load_image, kb_delete_image, kb_move_image (contract §11).

Thin over :mod:`local_vector_search_mcp.assets.images`: translate the generated request
models into engine calls and the engine's dataclasses into result models or content blocks.
"""

from __future__ import annotations

from typing import Literal, cast

from lvsm_contract.content import ContentResult, ImageBlock, TextBlock
from lvsm_contract.models import (
    ImageEntry,
    KbDeleteImageArguments,
    KbDeleteImageResult,
    KbListImagesArguments,
    KbListImagesResult,
    KbLoadImageArguments,
    KbMoveImageRequest,
    KbMoveImageResult,
    KbSaveImageArguments,
    KbSaveImageResult,
    LoadedImage,
)

from ..assets import images
from ..assets.download import DownloadPolicy
from ..assets.formats import ImageFormat
from ..errors import InvalidArgument
from ..workspace import Workspace
from ..writer import move_with_rewrites
from .documents import relink_rewrites, skipped_entries
from .files import utc_iso
from .link_breaks import broken_by_image_delete, broken_by_image_move, reported
from .sync import queue_sync

ImageMime = Literal["image/png", "image/jpeg", "image/webp", "image/gif"]


def _mime(fmt: ImageFormat) -> ImageMime:
    return cast(ImageMime, fmt.mime)


def download_policy(ws: Workspace) -> DownloadPolicy:
    downloads = ws.config.downloads
    return DownloadPolicy.from_hosts(
        (item.root for item in downloads.allowed_hosts),
        deadline=downloads.timeout_seconds,
        read_timeout=downloads.read_timeout_seconds,
    )


def kb_save_image(ws: Workspace, request: KbSaveImageArguments) -> KbSaveImageResult:
    # "Exactly one of file / data" is a schema rule the published schema cannot carry
    # (no top-level oneOf, spec/decisions.md), so it is checked first, like the schema.
    if (request.file is None) == (request.data is None):
        raise InvalidArgument(
            "Pass exactly one of file (an OpenAI file reference) or data (base64 or a data:image/...;base64 URI)."
        )
    ws.require_writes()
    source: images.RemoteImage | images.InlineImage
    if request.file is not None:
        source = images.RemoteImage(request.file.download_url, request.file.mime_type, request.file.file_name)
    else:
        assert request.data is not None
        source = images.decode_image_data(request.data)
    saved = images.save_image(
        ws,
        source,
        file_name=request.file_name,
        alt_text=request.alt_text,
        target_path=request.target_path,
        policy=download_policy(ws),
    )
    return KbSaveImageResult(
        path=saved.path,
        mime_type=_mime(saved.format),
        bytes=saved.size,
        sha256=saved.sha256,
        markdown=saved.markdown,
    )


def kb_list_images(ws: Workspace, request: KbListImagesArguments) -> KbListImagesResult:
    page = images.list_images(ws, request.cursor, request.page_size)
    return KbListImagesResult(
        images=[
            ImageEntry(
                path=entry.path,
                mime_type=_mime(entry.format),
                bytes=entry.size,
                last_write_time_utc=utc_iso(entry.mtime),
            )
            for entry in page.images
        ],
        next_cursor=page.next_cursor,
    )


def kb_load_image(ws: Workspace, request: KbLoadImageArguments) -> ContentResult:
    loaded = images.load_image(ws, request.path)
    meta = LoadedImage(
        path=loaded.path,
        mime_type=_mime(loaded.format),
        bytes=loaded.size,
        sha256=loaded.sha256,
    )
    return ContentResult(
        blocks=(
            ImageBlock(data=loaded.shown, mime_type=loaded.shown_mime),
            TextBlock(text=meta.model_dump_json(by_alias=True, indent=2)),
        )
    )


def kb_delete_image(ws: Workspace, request: KbDeleteImageArguments) -> KbDeleteImageResult:
    rel = images.delete_image(ws, request.path)
    # after the delete, which stands whatever the report says (decision 1041)
    return reported(KbDeleteImageResult(path=rel, deleted=True), broken_by_image_delete(ws, rel))


def kb_move_image(ws: Workspace, request: KbMoveImageRequest) -> KbMoveImageResult:
    if not request.update_links:
        moved = images.move_image(ws, request.source_path, request.target_path, request.expected_sha256)
        breaks = broken_by_image_move(ws, moved.previous_path, moved.path, {})
        return reported(
            KbMoveImageResult(previous_path=moved.previous_path, path=moved.path, sha256=moved.sha256), breaks
        )
    move = images.check_move(ws, request.source_path, request.target_path, request.expected_sha256)
    unlisted: list[tuple[str, str]] = []
    rewrites = relink_rewrites(ws, move.src_rel, move.dst_rel, is_document=False, unlisted=unlisted)
    sha = move_with_rewrites(
        ws, (move.src_rel, move.src, move.dst_rel, move.dst, move.sha256), None, rewrites, guard_document=False
    )
    # what the rewrite left broken (normally none), read before the index re-reads the rewritten pages
    texts = {rel: (old, new) for rel, (_, old, new) in rewrites.items()}
    breaks = broken_by_image_move(ws, move.src_rel, move.dst_rel, texts)
    queue_sync(ws, sorted(rewrites))
    count, entries = skipped_entries(unlisted)
    result = KbMoveImageResult(
        previous_path=move.src_rel,
        path=move.dst_rel,
        sha256=sha,
        updated_paths=sorted(rewrites),
        skipped_folders=count,
        skipped=entries,
    )
    return reported(result, breaks)
