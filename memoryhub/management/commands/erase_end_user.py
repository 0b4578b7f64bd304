"""Erase a person as the API does, and print the receipt with its verification."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memoryhub.management.base import MemoryhubCommand
from memoryhub.services.end_users import (
    RECEIPT_LABELS,
    ErasureReceipt,
    erase_end_user,
    preview_erasure,
)


class Command(MemoryhubCommand):
    help = (
        "Erase an end user (the same erasure as DELETE /api/v1/end-users/{id}) and print a"
        " receipt: what went per kind, and a search afterwards that finds nothing of theirs."
        " --dry-run erases inside a transaction that is rolled back: the exact counts, no change."
    )
    deletes = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace id (ws_...) or name")
        parser.add_argument("person", help="the end user's id, as the runtime sends it")

    def handle(self, *args: Any, workspace: str, person: str, **options: Any) -> None:
        principal = self.principal(self.workspace(workspace))
        self.end_user(principal.workspace, person)  # a clear refusal for an unknown person
        erase = preview_erasure if self.dry_run else erase_end_user
        receipt = erase(principal, person)
        self.emit({**receipt.as_dict(), "dry_run": self.dry_run}, lambda: self._text(receipt))
        if not receipt.verified:
            raise CommandError(f"the search after the erase still found {receipt.remaining}")

    def _text(self, receipt: ErasureReceipt) -> str:
        done = "would erase" if self.dry_run else "erased"
        lines = [f"{done} {receipt.end_user}; the audit trail calls them {receipt.pseudonym}"]
        lines += [
            f"  {label:<40}{getattr(receipt, key):>8}" for key, label in RECEIPT_LABELS.items()
        ]
        if receipt.verified:
            lines.append("verified: a search afterwards found nothing of theirs")
        if self.dry_run:
            lines.append("dry run: rolled back, nothing changed")
        return "\n".join(lines)
