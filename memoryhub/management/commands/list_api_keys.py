from typing import Any

from django.core.management.base import CommandParser

from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import ApiKey


class Command(MemoryhubCommand):
    help = "List a workspace's API keys (never their secrets), revoked ones with --all."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace id (ws_...) or name")
        parser.add_argument("--all", action="store_true", help="revoked keys too")

    def handle(self, *args: Any, workspace: str, all: bool, **options: Any) -> None:
        keys = ApiKey.objects.filter(workspace=self.workspace(workspace)).order_by("created_at")
        if not all:
            keys = keys.filter(revoked_at__isnull=True)
        rows = [
            {
                "id": key.id,
                "name": key.name,
                "permission": key.permission,
                "created_at": key.created_at.isoformat(),
                "last_used_at": key.last_used_at and key.last_used_at.isoformat(),
                "revoked_at": key.revoked_at and key.revoked_at.isoformat(),
            }
            for key in keys
        ]
        columns = ["id", "permission", "name", "created_at", "last_used_at", "revoked_at"]
        lines = ["\t".join(columns)]
        lines += ["\t".join(str(row[c] or "-") for c in columns) for row in rows]
        self.emit(rows, "\n".join(lines))
