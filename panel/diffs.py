"""Word diffs between two versions of a text, as segments a template escapes and marks."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKENS = re.compile(r"\s+|[^\s]+")  # words and the spaces between them, nothing lost


@dataclass(frozen=True)
class Segment:
    kind: str  # "same", "added" or "removed"
    text: str


def word_diff(before: str, after: str) -> list[Segment]:
    """``after`` against ``before``, word by word (whole texts are short: facts, lines)."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            segments.append(Segment("same", "".join(old[a1:a2])))
            continue
        if a2 > a1:
            segments.append(Segment("removed", "".join(old[a1:a2])))
        if b2 > b1:
            segments.append(Segment("added", "".join(new[b1:b2])))
    return segments
