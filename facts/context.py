"""The ``<memory>…</memory>`` block a runtime puts in its prompt."""

from __future__ import annotations

import re

from facts import paths, validation
from facts.models import Fact
from facts.scope import FactScope
from facts.services.reading import search_facts
from memoryhub.errors import ApiError

MAX_PATHS = 20
# "<memory", "</memory", "< /MEMORY" ...: a fact must not open or close the block.
_TAG_RE = re.compile(r"<(?=\s*/?\s*memory)", re.IGNORECASE)


def given_paths(value: object, field: str = "paths") -> list[str]:
    """A list of 1-20 paths, normalized; left out (None) it is the whole memory.

    A string or an empty list is refused rather than quietly widened to everything.
    """
    if value is None:
        return [""]
    if not isinstance(value, list) or not value:
        raise ApiError(422, f"{field} must be a non-empty list of paths")
    if len(value) > MAX_PATHS:
        raise ApiError(422, f"{field} holds at most {MAX_PATHS} paths")
    normalized = [paths.normalize(p, field) for p in value]
    return list(dict.fromkeys(normalized))


def build_context(scope: FactScope, query: object, paths_value: object, k: object) -> str:
    """Under each path, the best matches for ``query`` (the newest when it is empty)."""
    query = validation.query(query)
    k = validation.bounded_int(k, "k", validation.CONTEXT_K_DEFAULT, validation.K_MAX)
    sections = []
    for given in given_paths(paths_value):
        folder = paths.resolve(given, scope.viewer)
        facts = search_facts(scope, query, folders=[folder], k=k)
        if facts:
            lines = "\n".join(_line(fact) for fact in facts)
            sections.append(f"{given or '/'}\n{lines}")
    if not sections:
        return ""
    return "<memory>\n" + "\n\n".join(sections) + "\n</memory>"


def _line(fact: Fact) -> str:
    text = _TAG_RE.sub("&lt;", " ".join(fact.text.split()))
    return f"- {text} ({fact.updated_at.date().isoformat()}, {fact.public_id})"
