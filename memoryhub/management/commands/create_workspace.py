from django.core.management.base import BaseCommand, CommandError

from memoryhub.errors import ApiError
from memoryhub.services.workspaces import create_workspace


class Command(BaseCommand):
    help = "Create a workspace and print its id."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")

    def handle(self, *args, name: str, **options) -> None:
        try:
            workspace = create_workspace(name)
        except ApiError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(workspace.id)
