"""List the purges of deleted record memories, and start stuck, failed or skipped ones over."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memoryhub.errors import ApiError
from records.models import PurgeJob
from records.services import purges


class Command(BaseCommand):
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
            try:
                job = purges.retry(options["retry"])
            except ApiError as error:
                raise CommandError(error.message) from None
            self.stdout.write(f"{job.id} queued again")
            return
        jobs = PurgeJob.objects.order_by("created_at", "id")
        status = options["status"]
        if status is None:
            jobs = jobs.exclude(status=PurgeJob.Status.DONE)
        elif status != "all":
            jobs = jobs.filter(status=status)
        self.stdout.write("id\tstatus\tattempts\tworkspace\tprovider\tnamespace\tlast_error")
        for job in jobs:
            self.stdout.write(
                "\t".join(
                    [
                        job.id,
                        job.status,
                        str(job.attempts),
                        job.workspace_id,
                        job.provider_id,
                        job.namespace,
                        job.last_error.replace("\n", " ")[:200],
                    ]
                )
            )
