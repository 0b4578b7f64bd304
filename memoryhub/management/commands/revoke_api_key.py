from typing import Any

from django.core.management.base import CommandError, CommandParser

from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import ApiKey
from memoryhub.services.workspaces import revoke_api_key


class Command(MemoryhubCommand):
    help = "Revoke an API key for good: it is refused from then on (the row stays, audited)."
    deletes = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", help="the key's id (key_..., from list_api_keys)")

    def handle(self, *args: Any, key: str, **options: Any) -> None:
        found = ApiKey.objects.select_related("workspace").filter(pk=key).first()
        if found is None:
            raise CommandError(f"no API key {key!r}")
        already = found.revoked_at is not None
        if not self.dry_run and not already:
            found = revoke_api_key(found, self.principal(found.workspace))
        state = "already revoked" if already else "would be revoked" if self.dry_run else "revoked"
        data = {"id": found.id, "workspace": found.workspace_id, "state": state}
        self.emit({**data, "dry_run": self.dry_run}, f"{found.id} {state}")
