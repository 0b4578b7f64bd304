"""Creates the demo workspace, API key and panel login once; prints them every time."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import CommandError
from django.core.management.base import CommandParser
from django.db import transaction

from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import Workspace
from memoryhub.services.workspaces import create_api_key, create_workspace


class Command(MemoryhubCommand):
    help = "Create the demo workspace, a write API key and a panel login (for make run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data-dir", required=True, help="where the demo credentials live")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="where memoryhub is served"
        )

    def handle(self, *args: Any, data_dir: str, base_url: str, **options: Any) -> None:
        path = Path(data_dir) / "demo-credentials.json"
        demo = json.loads(path.read_text()) if path.exists() else {}
        if not Workspace.objects.filter(pk=demo.get("workspace_id")).exists():
            # One step: credentials that could not be written leave no workspace behind.
            try:
                with transaction.atomic():
                    demo = self._create()
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(demo, indent=2))
                    path.chmod(0o600)
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
        self.emit(
            {key: demo[key] for key in ("workspace_id", "api_key", "username", "password")},
            "\n".join(
                [
                    "",
                    f"  demo workspace: {demo['workspace_id']}",
                    f"  demo API key (write): {demo['api_key']}",
                    f"  panel: {base_url}/panel/  user {demo['username']}"
                    f"  password {demo['password']}",
                    f"  admin: {base_url}/admin/ (the same login)",
                    "",
                ]
            ),
        )

    def _create(self) -> dict:
        workspace = create_workspace("Demo")
        _, secret = create_api_key(workspace, "write", name="demo")
        password = secrets.token_urlsafe(12)
        user_model = get_user_model()
        user = user_model.objects.filter(username="admin").first() or user_model(username="admin")
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        return {
            "workspace_id": workspace.id,
            "api_key": secret,
            "username": "admin",
            "password": password,
        }
