"""kb_download_file: the exact bytes of any file under the root, as an embedded resource (§12.2)."""

from __future__ import annotations

from lvsm_contract.content import BlobResource, ContentResult, TextBlock
from lvsm_contract.models import DownloadedFile, KbDownloadFileRequest

from ..assets.files import read_file, resource_uri
from ..workspace import Workspace


def kb_download_file(ws: Workspace, request: KbDownloadFileRequest) -> ContentResult:
    found = read_file(ws, request.path)
    meta = DownloadedFile(path=found.path, mime_type=found.mime_type, bytes=len(found.data), sha256=found.sha256)
    return ContentResult(
        blocks=(
            BlobResource(uri=resource_uri(found.path), mime_type=found.mime_type, data=found.data),
            TextBlock(text=meta.model_dump_json(by_alias=True, indent=2)),
        )
    )
