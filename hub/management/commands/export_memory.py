"""Export a workspace, one agent or one memory as JSON Lines with a manifest."""

from __future__ import annotations

from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from django.core.management.base import CommandError, OutputWrapper

from hub.transfer import Scope, export_lines
from memoryhub.management.base import MemoryhubCommand
from memoryhub.models import Memory


class Command(MemoryhubCommand):
    help = (
        "Export a workspace (or --agent, or --memory) as JSON Lines: agents, end users,"
        " threads with their mounts, facts with every version, file memories with their files"
        " and revisions, record memories with their records (read from mem0; providers without"
        " their credential), and a manifest with counts, a checksum and the format version."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("workspace", help="workspace id (ws_...) or name")
        parser.add_argument("--agent", help="only this agent (id or name) and what it uses")
        parser.add_argument("--memory", help="only this memory (mem_...)")
        parser.add_argument("--output", "-o", default="-", help="the file (default: stdout)")
        parser.add_argument(
            "--no-records", action="store_true", help="leave out the records kept in mem0"
        )

    def handle(self, *args, workspace: str, output: str, **options) -> None:
        scope = self._scope(workspace, options["agent"], options["memory"])
        if output == "-" and self.as_json:
            raise CommandError("--json prints the summary on stdout: give --output FILE")
        counts: Counter[str] = Counter()
        with ExitStack() as stack:
            target: OutputWrapper | TextIO = self.stdout
            if output != "-":
                target = stack.enter_context(Path(output).open("w", encoding="utf-8"))
            lines = export_lines(scope, with_records=not options["no_records"])
            for kind, line in self.progress(lines, desc="rows"):
                target.write(line)
                counts[kind] += 1
        if output != "-":
            counts.pop("header"), counts.pop("manifest")
            summary = {"file": output, "counts": dict(counts), **scope.describe()}
            listed = ", ".join(f"{kind} {n}" for kind, n in counts.items())
            self.emit(summary, f"exported to {output}: {listed}")

    def _scope(self, workspace: str, agent: str | None, memory: str | None) -> Scope:
        ws = self.workspace(workspace)
        if agent and memory:
            raise CommandError("give --agent or --memory, not both")
        if memory:
            found = Memory.objects.filter(workspace=ws, pk=memory).first()
            if found is None:
                raise CommandError(f"no memory {memory!r} in workspace {ws.id}")
            return Scope(ws, memory=found)
        return Scope(ws, agent=self.agent(ws, agent) if agent else None)
