"""What deleting a file memory takes, for the admin's confirmation page."""

from __future__ import annotations

from filememory.models import Revision
from memoryhub.admin import confirmation_notes
from memoryhub.models import Memory


@confirmation_notes(Memory)
def _files(memory: Memory) -> list[str]:
    if memory.kind != Memory.Kind.FILE:
        return []
    return [
        f"Files: {memory.file_count} ({memory.content_bytes} bytes)",
        f"Revisions: {Revision.objects.filter(memory=memory).count()}",
    ]
