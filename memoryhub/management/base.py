"""What every memoryhub management command shares (after paperless-ngx's command base).

``--json`` prints one JSON document for scripts instead of the text; commands that delete
(``deletes = True``) take ``--dry-run``; ``progress()`` draws a tqdm bar on stderr when it
is a terminal; the ``workspace()``/``agent()``/``end_user()`` look-ups and any ``ApiError``
from a service become a ``CommandError`` (exit status 1, nothing written).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memoryhub.errors import ApiError
from memoryhub.models import Agent, EndUser, Workspace
from memoryhub.principals import Principal

T = TypeVar("T")


class MemoryhubCommand(BaseCommand):
    deletes = False  # True adds --dry-run

    as_json: bool = False
    dry_run: bool = False

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON document"
        )
        if self.deletes:
            parser.add_argument(
                "--dry-run", action="store_true", help="say what would go, change nothing"
            )
        return parser

    def execute(self, *args: Any, **options: Any) -> str | None:
        self.as_json = bool(options.get("as_json"))
        self.dry_run = bool(options.get("dry_run"))
        try:
            return super().execute(*args, **options)
        except ApiError as error:  # a service refused: the operator sees its message
            raise CommandError(error.message) from None

    def emit(self, data: Any, text: str | Callable[[], str]) -> None:
        """The JSON document with --json, else the text (a callable is only called then)."""
        if self.as_json:
            self.stdout.write(json.dumps(data, indent=2, default=str))
        else:
            self.stdout.write(text() if callable(text) else text)

    def progress(
        self, items: Iterable[T], *, total: int | None = None, desc: str = ""
    ) -> Iterator[T]:
        """A progress bar on stderr, drawn only when stderr is a terminal."""
        return iter(tqdm(items, total=total, desc=desc, file=sys.stderr, disable=None, leave=False))

    def bar(self, total: int, desc: str = "") -> tqdm:
        """A progress bar to ``update(n)`` by hand, for work counted in batches."""
        return tqdm(total=total, desc=desc, file=sys.stderr, disable=None, leave=False)

    def workspace(self, ref: str) -> Workspace:
        """A workspace by id, or by its name when exactly one has it."""
        found = Workspace.objects.filter(pk=ref).first()
        if found is not None:
            return found
        named = list(Workspace.objects.filter(name=ref)[:2])
        if len(named) == 1:
            return named[0]
        if named:
            raise CommandError(f"more than one workspace is named {ref!r}: give its id")
        raise CommandError(f"no workspace {ref!r}")

    def agent(self, workspace: Workspace, ref: str) -> Agent:
        """An agent of the workspace by id, or by its name when exactly one has it."""
        agents = Agent.objects.filter(workspace=workspace)
        found = agents.filter(pk=ref).first()
        if found is not None:
            return found
        named = list(agents.filter(name=ref)[:2])
        if len(named) == 1:
            return named[0]
        if named:
            raise CommandError(f"more than one agent is named {ref!r}: give its id")
        raise CommandError(f"no agent {ref!r} in workspace {workspace.id}")

    def end_user(self, workspace: Workspace, external_id: str) -> EndUser:
        found = EndUser.objects.filter(workspace=workspace, external_id=external_id).first()
        if found is None:
            raise CommandError(f"no end user {external_id!r} in workspace {workspace.id}")
        return found

    def principal(self, workspace: Workspace) -> Principal:
        """Commands act as the system principal: the audit trail names them so."""
        return Principal.system(workspace)
