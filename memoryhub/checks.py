"""What ``manage.py verify`` reports: one difference between stored and derived data."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Difference:
    check: str  # which check found it (fact_counters, memory_bytes, ...)
    object: str  # what it is about (an agent and scope, a memory id, a row)
    # Any, not object: inside the class, ``object`` names the field above.
    stored: Any  # what the database holds
    expected: Any  # what it holds by the rule
    repairable: bool  # derived data that --repair recomputes

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
