"""Where the apps plug into the shared kernel, so that ``memoryhub`` imports no app.

Each app registers its hooks in its ``AppConfig.ready()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Called inside the erase transaction with (principal, end_user): remove what the app keeps
# about that person.
end_user_erasers: list[Callable[[Any, Any], None]] = []


def register_end_user_eraser(fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    end_user_erasers.append(fn)
    return fn


# Called inside the delete transaction with (principal, memory), before its row goes: react
# to what the database cascade is about to remove (a thread's mounts of it).
memory_deleters: list[Callable[[Any, Any], None]] = []


def register_memory_deleter(fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    memory_deleters.append(fn)
    return fn
