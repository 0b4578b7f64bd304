"""What the simulated runtimes were told: every write a server acknowledged (2xx), the
timings of every call, and whatever answered unexpectedly.

The checker reads the database against it afterwards. Each write carries a *marker*, a
string unique to that write, so a write that happened twice is visible as its marker twice.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field


def new_marker(kind: str) -> str:
    """A word of its own for one write: letters and digits, so search folds it unchanged."""
    return f"mk{kind}{uuid.uuid4().hex[:16]}"


@dataclass
class Journal:
    # (fact pk, version, marker) of each acknowledged fact write
    facts: list[tuple[int, int, str]] = field(default_factory=list)
    # (run id, key, fact pk, version) of each acknowledged keyed save
    keys: list[tuple[str, str, int, int]] = field(default_factory=list)
    # (run id, call id, kind: fact|file|record, marker) of each acknowledged tool call
    tool_calls: list[tuple[str, str, str, str]] = field(default_factory=list)
    # (memory id, path, version, marker) of each acknowledged file edit (REST or tool)
    files: list[tuple[str, str, int, str]] = field(default_factory=list)
    # (memory id, record id or "" when a tool answered it, marker) of each record write
    records: list[tuple[str, str, str]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)  # runs whose end was acknowledged
    # (memory id, marker of its record) of each record memory deleted: mem0 must lose it
    purges: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # 5xx, lost answers, wrong repeats
    # A fault run (--fault) expects the documented outage answers (503 ``unavailable``,
    # 409 ``write_unconfirmed``): they are counted, not problems, and never acknowledged.
    outages: bool = False
    # (kind: fact|file, marker) of each write answered so: it must not be stored
    refused: list[tuple[str, str]] = field(default_factory=list)
    # (run id, key) of each keyed save refused, then sent again with the same key
    resent_keys: list[tuple[str, str]] = field(default_factory=list)
    phase: str = "run"  # before / during / after a fault
    # phase -> what the API answered ("201", "503 unavailable database", "no answer")
    answers: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    slowest: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    timings: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    retries: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, kind: str, entry: object) -> None:
        with self.lock:
            getattr(self, kind).append(entry)

    def answered(self, label: str, seconds: float) -> None:
        with self.lock:
            self.answers[self.phase][label] += 1
            self.slowest[self.phase] = max(self.slowest[self.phase], seconds)

    def timed(self, operation: str, seconds: float) -> None:
        with self.lock:
            self.timings[operation].append(seconds)

    def retried(self, operation: str) -> None:
        with self.lock:
            self.retries[operation] += 1

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)
