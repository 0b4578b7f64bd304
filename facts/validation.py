"""The limits of a fact's fields and of the facts API's arguments (422 beyond them)."""

from __future__ import annotations

import math
import re

from facts.models import FACT_ID_PREFIX, WrittenBy
from memoryhub.errors import ApiError
from memoryhub.rules import Rule

MAX_TEXT = 4000
MAX_TAGS = 20
TAG_RE = re.compile(r"[A-Za-z0-9._:-]{1,50}")
KEY_RE = re.compile(r"[A-Za-z0-9._:-]{1,200}")
FACT_ID_RE = re.compile(re.escape(FACT_ID_PREFIX) + r"([1-9][0-9]{0,17})")
K_DEFAULT, K_MAX = 5, 50
CONTEXT_K_DEFAULT = 8  # facts per path in a context block (facts-memory.md: k=8)
LIMIT_DEFAULT, LIMIT_MAX = 50, 200


def text(value: object) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_TEXT or not value.strip():
        raise ApiError(422, f"text is 1-{MAX_TEXT} characters, not only spaces")
    if "\x00" in value:
        raise ApiError(422, "text may not contain NUL characters")
    return value


def tags(value: object) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        raise ApiError(422, f"tags is a list of at most {MAX_TAGS} tags")
    for tag in value:
        if not isinstance(tag, str) or not TAG_RE.fullmatch(tag):
            raise ApiError(422, "each tag is 1-50 of A-Z a-z 0-9 . _ : -")
    return list(dict.fromkeys(value))


def tags_param(value: str | None) -> list[str]:
    """``?tags=a,b`` (empty or absent: no filter)."""
    if not value:
        return []
    return tags(value.split(","))


def confidence(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise ApiError(422, "confidence is a number from 0 to 1")
    return float(value)


def key(value: object) -> str:
    if not isinstance(value, str) or not KEY_RE.fullmatch(value):
        raise ApiError(422, "key is 1-200 of A-Z a-z 0-9 . _ : -")
    return value


API_WRITERS = (WrittenBy.CODE, WrittenBy.MODEL)  # a person corrects in the panel only


def written_by(value: object) -> str:
    if value not in API_WRITERS:
        raise ApiError(422, "written_by is code or model")
    return str(value)


def fact_pk(value: object, field: str = "id") -> int:
    """The primary key inside a fact id ``m_<n>`` (422 for anything else)."""
    match = FACT_ID_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ApiError(422, f"{field} must be a fact id like {FACT_ID_PREFIX}123")
    return int(match.group(1))


def bounded_int(value: object, field: str, default: int, maximum: int) -> int:
    """An integer from 1 to ``maximum`` (a JSON number; see ``from_query`` for URLs)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise ApiError(422, f"{field} is an integer from 1 to {maximum}")
    return value


def k(value: object) -> int:
    return bounded_int(value, "k", K_DEFAULT, K_MAX)


def from_query(value: str | None) -> object:
    """A query-string number as an int; anything else as it is, for the check to refuse."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,6}", value):
        return int(value)
    return value


def limit(value: str | None) -> int:
    """``?limit=`` from a query string."""
    return bounded_int(from_query(value), "limit", LIMIT_DEFAULT, LIMIT_MAX)


def query(value: object) -> str:
    """Any string (the body limit bounds it; search uses its first words)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError(422, "query must be a string")
    return value


# -- the rules: each check with the JSON schema that documents it ---------------------------
def _anchored(regex: re.Pattern) -> str:
    return f"^{regex.pattern}$"


def _integer(maximum: int) -> dict:
    return {"type": "integer", "minimum": 1, "maximum": maximum}


TAGS_HELP = f"At most {MAX_TAGS} tags, each 1-50 of A-Z a-z 0-9 . _ : -."
TAG_SCHEMA = {"type": "string", "pattern": _anchored(TAG_RE), "maxLength": 50}
_TAG = TAG_RE.pattern

TEXT = Rule(text, {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": r"\S"})
TAGS = Rule(tags, {"type": "array", "items": TAG_SCHEMA, "maxItems": MAX_TAGS})
# ?tags=a,b: 1 to MAX_TAGS tags, comma-separated ("" filters nothing).
TAGS_PARAM = Rule(
    tags_param, {"type": "string", "pattern": f"^(?:{_TAG}(?:,{_TAG}){{0,{MAX_TAGS - 1}}})?$"}
)
CONFIDENCE = Rule(confidence, {"type": "number", "minimum": 0, "maximum": 1})
KEY = Rule(key, {"type": "string", "pattern": _anchored(KEY_RE), "maxLength": 200})
WRITTEN_BY = Rule(
    written_by, {"type": "string", "enum": [str(w) for w in API_WRITERS]}, component="WrittenBy"
)
FACT_ID_SCHEMA = {"type": "string", "pattern": _anchored(FACT_ID_RE)}
REPLACES = Rule(lambda value: fact_pk(value, "replaces"), FACT_ID_SCHEMA)  # -> the pk
BEFORE = Rule(lambda value: fact_pk(value, "before"), FACT_ID_SCHEMA)  # -> the pk
QUERY = Rule(query, {"type": "string"})
K = Rule(k, _integer(K_MAX))
CONTEXT_K = Rule(lambda value: bounded_int(value, "k", CONTEXT_K_DEFAULT, K_MAX), _integer(K_MAX))
# Query strings: digits become a number, anything else meets the check as it is.
K_PARAM = Rule(lambda value: k(from_query(value)), _integer(K_MAX))
LIMIT = Rule(limit, _integer(LIMIT_MAX))
