"""The ``<memory>…</memory>`` block a runtime puts in its prompt."""

from __future__ import annotations

from collections.abc import Sequence

from facts import validation
from facts.models import Fact
from facts.paths import PATH_SCHEMA, normalize, resolve
from facts.scope import FactScope
from facts.services.reading import search_facts
from memoryhub.blocktext import escape_text
from memoryhub.errors import ApiError
from memoryhub.rules import Rule

MAX_PATHS = 20


WHOLE_MEMORY = ("",)  # the paths of a caller that names none


def given_paths(value: object, field: str = "paths") -> list[str]:
    """A list of 1-20 paths, normalized; left out (None) it is the whole memory.

    A string or an empty list is refused rather than quietly widened to everything.
    """
    if value is None:
        return list(WHOLE_MEMORY)
    if not isinstance(value, list) or not value:
        raise ApiError(422, f"{field} must be a non-empty list of paths")
    if len(value) > MAX_PATHS:
        raise ApiError(422, f"{field} holds at most {MAX_PATHS} paths")
    normalized = [normalize(p, field) for p in value]
    return list(dict.fromkeys(normalized))


PATHS = Rule(
    given_paths,
    {"type": "array", "items": PATH_SCHEMA, "minItems": 1, "maxItems": MAX_PATHS},
)


def build_context(
    scope: FactScope,
    *,
    query: str = "",
    paths: Sequence[str] = WHOLE_MEMORY,
    k: int = validation.CONTEXT_K_DEFAULT,
) -> str:
    """Under each of ``paths`` (normalized), the best matches for ``query`` (else the newest)."""
    sections = []
    for given in paths:
        folder = resolve(given, scope.viewer)
        facts = search_facts(scope, query, folders=[folder], k=k)
        if facts:
            lines = "\n".join(_line(fact) for fact in facts)
            sections.append(f"{escape_text(given or '/')}\n{lines}")
    if not sections:
        return ""
    return "<memory>\n" + "\n\n".join(sections) + "\n</memory>"


def _line(fact: Fact) -> str:
    # "<memory", "</memory", "< /MEMORY" ...: a fact must not open or close the block.
    text = escape_text(" ".join(fact.text.split()))
    return f"- {text} ({fact.updated_at.date().isoformat()}, {fact.public_id})"
