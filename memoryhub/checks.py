"""What ``manage.py verify`` reports: one difference between stored and derived data."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Difference:
    check: str  # which check found it (fact_counters, memory_bytes, ...)
    object: str  # what it is about (an agent and scope, a memory id, a row)
    stored: object  # what the database holds
    expected: object  # what it holds by the rule
    repairable: bool  # derived data that --repair recomputes

    def as_dict(self) -> dict:
        return asdict(self)
