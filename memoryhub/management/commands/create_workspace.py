from typing import Any

from django.core.management.base import CommandParser

from memoryhub.management.base import MemoryhubCommand
from memoryhub.services.workspaces import create_workspace


class Command(MemoryhubCommand):
    help = "Create a workspace and print its id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="what people call it (1-200 characters)")

    def handle(self, *args: Any, name: str, **options: Any) -> None:
        workspace = create_workspace(name)
        self.emit({"id": workspace.id, "name": workspace.name}, workspace.id)
