"""List the purges of deleted record memories, and start stuck, failed or skipped ones over."""

from __future__ import annotations

from memoryhub.management.base import MemoryhubCommand
from records.models import PurgeJob
from records.services import purges


class Command(MemoryhubCommand):
    help = (
        "Lists the purges of deleted record memories (all but done ones unless --status says"
        " otherwise; skipped: a live memory on the same backend uses the namespace, the"
        " records stay); --retry ID starts one over with a full set of tries (not while a"
        " try of it is under way)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--status",
            choices=[*PurgeJob.Status.values, "all"],
            help="list only purges with this status (default: pending, failed and skipped)",
        )
        parser.add_argument("--retry", metavar="ID", help="start this purge over")

    def handle(self, *args, **options) -> None:
        if options["retry"]:
            job = purges.retry(options["retry"])
            self.emit({"id": job.id, "status": job.status}, f"{job.id} queued again")
            return
        jobs = PurgeJob.objects.order_by("created_at", "id")
        status = options["status"]
        if status is None:
            jobs = jobs.exclude(status=PurgeJob.Status.DONE)
        elif status != "all":
            jobs = jobs.filter(status=status)
        rows = [
            {
                "id": job.id,
                "status": job.status,
                "attempts": job.attempts,
                "workspace": job.workspace_id,
                "provider": job.provider_id,
                "namespace": job.namespace,
                "last_error": job.last_error,
            }
            for job in jobs
        ]
        self.emit(rows, lambda: "\n".join([COLUMNS, *map(_line, rows)]))


COLUMNS = "id\tstatus\tattempts\tworkspace\tprovider\tnamespace\tlast_error"


def _line(row: dict) -> str:
    values = [*list(row.values())[:-1], row["last_error"].replace("\n", " ")[:200]]
    return "\t".join(str(value) for value in values)
