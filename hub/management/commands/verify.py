"""Check what the limits and the search depend on; --repair recomputes derived data."""

from __future__ import annotations

from django.core.management.base import CommandError

from facts.services import checks as fact_checks
from filememory.services import checks as file_checks
from memoryhub.checks import Difference
from memoryhub.management.base import MemoryhubCommand

CHECKS = {
    "fact counters": fact_checks.counter_differences,
    "term statistics": fact_checks.term_differences,
    "fact orphans": fact_checks.orphan_differences,
    "file memory counters": file_checks.counter_differences,
    "revisions per file": file_checks.revision_differences,
}
REPAIRS = {
    "fact counters": fact_checks.repair_counters,
    "term statistics": fact_checks.repair_terms,
    "file memory counters": file_checks.repair_counters,
}


class Command(MemoryhubCommand):
    help = (
        "Check fact counts against their counter rows, file memories' byte counters against"
        " the real sums, term statistics against the facts, revisions per file within"
        " memory.revisions_per_file, and orphan rows; report each difference (exit 1 when"
        " any). --repair recomputes what is derived data (counters, term statistics) and"
        " checks again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--repair", action="store_true", help="recompute derived data")

    def handle(self, *args, repair: bool, **options) -> None:
        found = self._run_checks()
        repaired = []
        if repair:
            for name in self.progress(sorted({d.check_name for d in found}), desc="repairing"):
                if name in REPAIRS:
                    REPAIRS[name]()
                    repaired.append(name)
            found = self._run_checks() if repaired else found
        data = {"differences": [d.as_dict() for d in found], "repaired": repaired}
        self.emit(data, lambda: _text(found, repaired))
        if found:
            raise CommandError(f"{len(found)} difference(s) remain")

    def _run_checks(self) -> list[Named]:
        found = []
        for name, check in self.progress(CHECKS.items(), total=len(CHECKS), desc="checking"):
            found += [Named(name, difference) for difference in check()]
        return found


class Named:
    """A difference with the name of the check group that found it."""

    def __init__(self, check_name: str, difference: Difference) -> None:
        self.check_name, self.difference = check_name, difference

    def as_dict(self) -> dict:
        return {"group": self.check_name, **self.difference.as_dict()}


def _text(found: list[Named], repaired: list[str]) -> str:
    lines = [f"repaired: {name}" for name in repaired]
    for named in found:
        d = named.difference
        mend = "repairable" if d.repairable else "not derived data: look at it"
        lines.append(f"{d.check} {d.object}: stored {d.stored}, expected {d.expected} ({mend})")
    lines.append("no differences" if not found else f"{len(found)} difference(s)")
    return "\n".join(lines)
