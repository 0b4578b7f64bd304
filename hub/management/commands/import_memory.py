"""Import an export_memory file: checked whole first, then written in one transaction."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from hub.transfer import Refused, check, import_lines, read_lines
from memoryhub.management.base import MemoryhubCommand


class Command(MemoryhubCommand):
    help = (
        "Import a file written by export_memory. The whole file is checked first: its"
        " integrity (format version, every line whole, counts and checksum against the"
        " manifest), then every row by the API's own rules (paths, sizes, owners, limits,"
        " the outbound policy) with every reference inside the workspace the file carries."
        " Any problem refuses the file, naming its line, before anything is written. Ids"
        " are kept; rows whose id exists already are left as they are (an agent, memory or"
        " thread with what it holds), so importing twice adds nothing. Records stay in mem0."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the .jsonl file export_memory wrote")

    def handle(self, *args, file: str, **options) -> None:
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"no file {file}")
        try:
            with path.open(encoding="utf-8") as stream:
                checked = check(self.progress(read_lines(stream), desc="checking"))
            with path.open(encoding="utf-8") as stream:
                added = import_lines(self.progress(read_lines(stream), desc="importing"), checked)
        except (Refused, UnicodeDecodeError) as error:
            raise CommandError(f"{file} refused, nothing written: {error}") from None
        counts = checked.counts
        listed = ", ".join(f"{kind} {added.get(kind, 0)}/{n}" for kind, n in counts.items())
        self.emit(
            {"file": file, "in_file": counts, "added": added},
            f"imported {file} (added/in file): {listed}",
        )
