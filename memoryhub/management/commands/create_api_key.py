from typing import Any

from django.core.management.base import CommandParser

from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import Permission
from memoryhub.services.workspaces import create_api_key


class Command(MemoryhubCommand):
    help = "Create an API key and print its secret, alone on one line. It is shown only once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, help="workspace id (ws_...) or name")
        parser.add_argument("--permissions", required=True, choices=Permission.values)
        parser.add_argument("--name", default="", help="a label for the key")

    def handle(
        self, *args: Any, workspace: str, permissions: str, name: str, **options: Any
    ) -> None:
        key, secret = create_api_key(self.workspace(workspace), permissions, name=name)
        data = {"id": key.id, "workspace": key.workspace_id, "permission": key.permission}
        self.emit({**data, "name": key.name, "secret": secret}, secret)
