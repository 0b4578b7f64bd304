"""Recompute the facts' folded search text and the term statistics, online and resumable."""

from __future__ import annotations

from django.core.management.base import CommandError

from facts.models import Fact
from facts.services import checks
from facts.services.rebuild import refold_all
from memoryhub.management.base import MemoryhubCommand


class Command(MemoryhubCommand):
    help = (
        "Recompute every fact's folded search text (after a change to the folding rules) and"
        " with it the term statistics. Works in batches of short transactions, so writers"
        " keep working; prints the last fact id of each batch on stderr, and --after ID"
        " resumes there. Ends by checking the term statistics and recounting them if need be."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--after", type=int, help="resume after this fact id")
        parser.add_argument("--batch", type=int, default=500, help="facts per transaction")

    def handle(self, *args, after: int | None, batch: int, **options) -> None:
        if batch < 1:
            raise CommandError("--batch is 1 or more")
        remaining = Fact.objects.filter(id__gt=after) if after is not None else Fact.objects
        seen = changed = 0
        with self.bar(remaining.count(), desc="facts") as bar:
            for done in refold_all(after, batch):
                seen, changed = seen + done.seen, changed + done.changed
                bar.update(done.seen)
                self.stderr.write(f"done through fact {done.last_id}")
        recounted = bool(checks.term_differences())
        if recounted:
            checks.repair_terms()
        data = {"facts": seen, "refolded": changed, "terms_recounted": recounted}
        self.emit(
            data,
            f"{seen} facts read, {changed} refolded; term statistics "
            + ("recounted" if recounted else "were right"),
        )
