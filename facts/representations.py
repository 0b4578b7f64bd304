"""How facts and their versions look on the wire."""

from __future__ import annotations

from facts.models import FACT_ID_PREFIX, Fact, FactVersion
from memoryhub.api.representations import iso

_NO_SCORE = object()


def fact_json(fact: Fact, score: object = _NO_SCORE) -> dict:
    data = {
        "id": fact.public_id,
        "path": fact.path,
        "text": fact.text,
        "tags": list(fact.tags),
        "confidence": fact.confidence,
        "version": fact.version,
        "created_at": iso(fact.created_at),
        "updated_at": iso(fact.updated_at),
        "source": {"run_id": fact.run_id, "written_by": fact.written_by},
    }
    if score is not _NO_SCORE:
        data["score"] = score
    return data


def version_json(version: FactVersion, created_at) -> dict:
    """One version of a fact, shaped like the fact was when that version was written."""
    return {
        "id": f"{FACT_ID_PREFIX}{version.fact_id}",
        "path": version.path,
        "text": version.text,
        "tags": list(version.tags),
        "confidence": version.confidence,
        "version": version.version,
        "created_at": iso(created_at),
        "updated_at": iso(version.created_at),
        "source": {"run_id": version.run_id, "written_by": version.written_by},
    }


def search_json(facts: list[Fact]) -> list[dict]:
    """Search results: each with its ``score`` (null when the query was empty)."""
    return [fact_json(f, round(f.score, 6) if hasattr(f, "score") else None) for f in facts]
