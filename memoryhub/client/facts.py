"""A run's facts memory (``/v0/memory``): ``inv.memory`` and the folders of ``at(path)``."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoryhub.client.http import Http
from memoryhub.client.tools import Tools, fact_tools


@dataclass(frozen=True)
class Fact:
    """One fact as memoryhub answers it; ``score`` only from a search (None for the newest)."""

    id: str
    path: str
    text: str
    tags: list[str]
    confidence: float
    version: int
    created_at: datetime
    updated_at: datetime
    run_id: str | None
    written_by: str
    score: float | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fact:
        source = data.get("source") or {}
        return cls(
            id=data["id"],
            path=data["path"],
            text=data["text"],
            tags=list(data.get("tags", [])),
            confidence=data.get("confidence", 1.0),
            version=data.get("version", 1),
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            run_id=source.get("run_id"),
            written_by=source.get("written_by", "code"),
            score=data.get("score"),
        )


class FactPage(list[Fact]):
    """One page of a listing, newest first; ``next`` is the ``before=`` of the next page."""

    def __init__(self, facts: list[Fact], next: str | None) -> None:
        super().__init__(facts)
        self.next = next


def _facts(answer: dict, field: str = "facts") -> list[Fact]:
    return [Fact.from_json(item) for item in answer[field]]


def _without_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def path_list(paths: Sequence[str] | None) -> list[str] | None:
    """``paths`` as a list; a string or an empty list would widen to the whole memory."""
    if paths is None:
        return None
    if isinstance(paths, str):
        raise TypeError("paths is a list of folders, such as ['users/{user}/']")
    if not paths:
        raise ValueError("paths is empty; leave it out to mean the whole memory")
    return list(paths)


class Memory:
    """The agent's facts memory as this run sees it; ``at(path)`` gives one folder."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def at(self, path: str) -> Folder:
        return Folder(self, path)

    def search(
        self,
        query: str,
        *,
        path: str | None = None,
        tags: list[str] | None = None,
        k: int | None = None,
    ) -> list[Fact]:
        """Best first, each with a ``score``; an empty query lists the newest."""
        body = _without_none(query=query, path=path, tags=tags, k=k)
        return _facts(self._http.request("POST", "/v0/memory/search", json=body, safe=True))

    def list(
        self,
        *,
        path: str | None = None,
        tags: list[str] | None = None,
        limit: int | None = None,
        before: str | None = None,
    ) -> FactPage:
        """Newest first; pass ``before=page.next`` for the next page."""
        params = _without_none(
            path=path, tags=",".join(tags) if tags else None, limit=limit, before=before
        )
        answer = self._http.request("GET", "/v0/memory/facts", params=params, safe=True)
        return FactPage(_facts(answer), answer.get("next"))

    def get(self, fact_id: str) -> Fact:
        return Fact.from_json(self._http.request("GET", f"/v0/memory/facts/{fact_id}", safe=True))

    def versions(self, fact_id: str) -> builtins.list[Fact]:
        """Every version of a fact, newest first."""
        path = f"/v0/memory/facts/{fact_id}/versions"
        return _facts(self._http.request("GET", path, safe=True), "versions")

    def forget(self, fact_id: str) -> None:
        """Delete a fact with all its versions (not retried: a repeat would answer 404)."""
        self._http.request("DELETE", f"/v0/memory/facts/{fact_id}", safe=False)

    def _remember(
        self,
        path: str,
        text: str,
        *,
        tags: builtins.list[str] | None = None,
        key: str | None = None,
        replaces: str | None = None,
        confidence: float | None = None,
    ) -> Fact:
        body = _without_none(
            path=path, text=text, tags=tags, key=key, replaces=replaces, confidence=confidence
        )
        # A keyed write answers what was written the first time, so it is safe to repeat.
        answer = self._http.request("POST", "/v0/memory/facts", json=body, safe=key is not None)
        return Fact.from_json(answer)

    def context(self, query: str, *, paths: Sequence[str] | None = None, k: int = 8) -> str:
        """The ``<memory>…</memory>`` block for a prompt, or ``""`` when nothing matches."""
        body = _without_none(query=query, paths=path_list(paths), k=k)
        return self._http.request("POST", "/v0/memory/context", json=body, safe=True)["context"]

    def tools(self, paths: Sequence[str] | None = None) -> Tools:
        """search_memory, save_memory and forget_memory, confined to ``paths``."""
        return fact_tools(self._http, path_list(paths))


class Folder:
    """One folder of the memory: search, list and remember under ``path``."""

    def __init__(self, memory: Memory, path: str) -> None:
        self.memory = memory
        self.path = path

    def search(
        self, query: str, *, tags: list[str] | None = None, k: int | None = None
    ) -> list[Fact]:
        return self.memory.search(query, path=self.path, tags=tags, k=k)

    def list(
        self, *, tags: list[str] | None = None, limit: int | None = None, before: str | None = None
    ) -> FactPage:
        return self.memory.list(path=self.path, tags=tags, limit=limit, before=before)

    def remember(
        self,
        text: str,
        *,
        tags: builtins.list[str] | None = None,
        key: str | None = None,
        replaces: str | None = None,
        confidence: float | None = None,
    ) -> Fact:
        """Save ``text`` here; ``replaces`` writes a new version of that fact (moved here)."""
        return self.memory._remember(
            self.path, text, tags=tags, key=key, replaces=replaces, confidence=confidence
        )
