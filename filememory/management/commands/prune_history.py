"""Trim file memories' history: revisions beyond a count per file, or older than a date."""

from __future__ import annotations

from argparse import ArgumentTypeError
from datetime import UTC, datetime

from django.core.management.base import CommandError
from django.db import transaction

from filememory.services.revisions import prune_history
from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import Memory


def _date(value: str) -> datetime:
    """An ISO date or date and time; without a zone, UTC (a bare date is its midnight)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ArgumentTypeError(f"not an ISO date such as 2026-01-31: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class Command(MemoryhubCommand):
    help = (
        "Drop file-memory revisions beyond the newest --keep N of each file, and/or older than"
        " --before DATE, in every file memory of a workspace or one (--memory). The files"
        " themselves stay; facts keep every version (the document promises it)."
    )
    deletes = True

    def add_arguments(self, parser) -> None:
        parser.add_argument("workspace", help="workspace id (ws_...) or name")
        parser.add_argument("--memory", help="only this file memory (mem_...)")
        parser.add_argument("--keep", type=int, help="revisions to keep per file (0 or more)")
        parser.add_argument("--before", type=_date, help="drop revisions older than this date")

    def handle(self, *args, workspace: str, memory: str | None, **options) -> None:
        keep, before = options["keep"], options["before"]
        if keep is None and before is None:
            raise CommandError("give --keep N, --before DATE, or both")
        if keep is not None and keep < 0:
            raise CommandError("--keep is 0 or more")
        principal = self.principal(self.workspace(workspace))
        memories = Memory.objects.filter(workspace=principal.workspace, kind="file")
        if memory:
            memories = memories.filter(pk=memory)
            if not memories.exists():
                raise CommandError(f"no file memory {memory!r} in {principal.workspace.id}")
        rows = []
        with transaction.atomic():
            for target in self.progress(list(memories.order_by("id")), desc="memories"):
                deleted, freed = prune_history(principal, target.id, keep=keep, before=before)
                rows.append({"memory": target.id, "revisions": deleted, "bytes": freed})
            transaction.set_rollback(self.dry_run)
        verb = "would drop" if self.dry_run else "dropped"
        line = "{memory}: " + verb + " {revisions} revisions, {bytes} bytes"
        text = "\n".join(line.format(**row) for row in rows) or "no file memories"
        self.emit({"memories": rows, "dry_run": self.dry_run}, text)
