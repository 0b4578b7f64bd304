from django.core.management.base import BaseCommand, CommandError

from memoryhub.errors import ApiError
from memoryhub.models import Permission, Workspace
from memoryhub.services.workspaces import create_api_key


class Command(BaseCommand):
    help = "Create an API key and print its secret, alone on one line. It is shown only once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--workspace", required=True, help="workspace id (ws_...)")
        parser.add_argument("--permissions", required=True, choices=Permission.values)
        parser.add_argument("--name", default="", help="a label for the key")

    def handle(self, *args, workspace: str, permissions: str, name: str, **options) -> None:
        ws = Workspace.objects.filter(pk=workspace).first()
        if ws is None:
            raise CommandError(f"no workspace {workspace}")
        try:
            _, secret = create_api_key(ws, permissions, name=name)
        except ApiError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(secret)
