"""Where the apps plug into the shared kernel, so that ``memoryhub`` imports no app.

Each app registers its hooks in its ``AppConfig.ready()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# Called inside the erase transaction with (principal, end_user): remove what the app keeps
# about that person, and return how much went per kind (the erase receipt's counts).
EndUserEraser = Callable[[Any, Any], "Mapping[str, int] | None"]
end_user_erasers: list[EndUserEraser] = []


def register_end_user_eraser(fn: EndUserEraser) -> EndUserEraser:
    end_user_erasers.append(fn)
    return fn


# Called after an erase with (workspace_id, end_user_id): what the app still keeps of that
# person, per kind (the erase receipt's verification; zero everywhere when it worked).
EndUserLeftovers = Callable[[str, str], Mapping[str, int]]
end_user_leftovers: list[EndUserLeftovers] = []


def register_end_user_leftovers(fn: EndUserLeftovers) -> EndUserLeftovers:
    end_user_leftovers.append(fn)
    return fn


# Called inside the delete transaction with (principal, memory), before its row goes: react
# to what the database cascade is about to remove (a thread's mounts of it).
memory_deleters: list[Callable[[Any, Any], None]] = []


def register_memory_deleter(fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    memory_deleters.append(fn)
    return fn
