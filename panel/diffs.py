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


@dataclass(frozen=True)
class Line:
    kind: str  # "same", "added", "removed", or "gap" (unchanged lines left out)
    old: int | None  # its number in ``before`` (1-based), None for an added line or a gap
    new: int | None  # its number in ``after``, None for a removed line or a gap
    text: str


def line_diff(before: str, after: str, context: int = 3) -> list[Line]:
    """``after`` against ``before``, line by line, for files: each change with ``context``
    unchanged lines around it and a gap where more are left out; [] when nothing changed."""
    old, new = before.splitlines(), after.splitlines()
    if old == new:
        return []
    lines: list[Line] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        if lines or group[0][1] > 0:  # unchanged lines left out before this change
            lines.append(Line("gap", None, None, ""))
        for op, a1, a2, b1, b2 in group:
            if op == "equal":
                lines.extend(
                    Line("same", a1 + i + 1, b1 + i + 1, old[a1 + i]) for i in range(a2 - a1)
                )
                continue
            lines.extend(Line("removed", i + 1, None, old[i]) for i in range(a1, a2))
            lines.extend(Line("added", None, i + 1, new[i]) for i in range(b1, b2))
    if lines and lines[-1].old is not None and lines[-1].old < len(old):
        lines.append(Line("gap", None, None, ""))  # and after the last change
    return lines
