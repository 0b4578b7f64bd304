"""How files and revisions look on the wire (ids and paths; content only where asked)."""

from __future__ import annotations

from django.utils.crypto import salted_hmac

from filememory.models import File, Revision
from memoryhub.api.representations import iso

_ETAG_SALT = "memoryhub.filememory.etag"


def file_token(file_id: int) -> str:
    """The opaque name of one file row in its ETags.

    A keyed hash, not the row id: the ids are one sequence across all workspaces, and a
    tenant comparing two of its ETags must not learn how many files others created. The
    row still counts, so a file deleted and created again never matches an old tag.
    """
    return salted_hmac(_ETAG_SALT, str(file_id), algorithm="sha256").hexdigest()[:16]


def file_etag(file: File) -> str:
    return f'"{file_token(file.id)}-{file.version}"'


def names_file(token: str, file: File) -> bool:
    """Whether an ETag's first part names ``file``.

    Tags of the old ``"<row id>-<version>"`` shape no longer match (a client holding one
    gets 412 and the current file): accepting them would let a tenant probe its files' ids.
    """
    return token == file_token(file.id)


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
