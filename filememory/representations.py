"""How files and revisions look on the wire (ids and paths; content only where asked)."""

from __future__ import annotations

from filememory.models import File, Revision
from memoryhub.api.representations import iso


def file_etag(file: File) -> str:
    # The id is part of the tag, so a file deleted and created again never matches.
    return f'"{file.id}-{file.version}"'


def file_json(file: File, *, content: bool = True) -> dict:
    data = {
        "path": file.path,
        "size": file.size,
        "version": file.version,
        "etag": file_etag(file),
        "created_at": iso(file.created_at),
        "updated_at": iso(file.updated_at),
        "principal_id": file.principal_id,
        "run_id": file.run_id,
        "tool_call_id": file.tool_call_id,
    }
    if content:
        data["content"] = file.content
    return data


def revision_json(revision: Revision, *, content: bool = False) -> dict:
    data = {
        "id": revision.public_id,
        "path": revision.path,
        "action": revision.action,
        "version": revision.version,
        "size": revision.size,
        "run_id": revision.run_id,
        "tool_call_id": revision.tool_call_id,
        "principal_id": revision.principal_id,
        "principal_type": revision.principal_type,
        "other_path": revision.other_path,
        "restored_from": revision.restored_from,
        "created_at": iso(revision.created_at),
    }
    if content:
        data["content"] = revision.content
    return data
