"""Word and line diffs between two versions of a text, as segments and lines a template
escapes and marks, within a budget per page.

What is diffed is what agents wrote, so the work is bounded whatever the content. Small
texts go to difflib as they always did (at that size its worst case is about 10 ms); larger
ones to Myers' diff in Google's diff-match-patch, which stops refining at a deadline, with
each word or line mapped to one character the way its ``diff_linesToChars`` maps lines. The
diffs of one page share one ``Budget`` of CPU time and of rows to render; a diff that would
overspend it comes back ``rough``: the changed middle shown whole, removed then added (a
linear pass), and the page says so."""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from diff_match_patch import diff_match_patch

_TOKENS = re.compile(r"\s+|[^\s]+")  # words and the spaces between them, nothing lost

PAGE_SECONDS = 0.2  # the diffing one page may do, all its diffs together
PAGE_ROWS = 2000  # the segments and lines it may render (about 50 µs each in a template)
SMALL = 200  # tokens of both versions together that difflib diffs (its cost grows as n³)
BLOCK_LINES = 40  # the lines of a rough diff's removed or added block that a page shows

Op = tuple[str, int, int, int, int]  # difflib's opcodes: tag, old[i1:i2], new[j1:j2]


class Budget:
    """What the diffs of one page may spend together; the view makes one per page and passes
    it to each diff, so a page of 50 versions costs one budget, not 50."""

    def __init__(self, seconds: float = PAGE_SECONDS, rows: int = PAGE_ROWS) -> None:
        self.ends = time.monotonic() + seconds
        self.each = seconds / 2  # one pathological pair leaves time for the ordinary ones
        self.rows = rows

    def deadline(self) -> float | None:
        """The wall-clock time (diff-match-patch's clock) the next diff must end by; None
        when the page has no time, or no rows, left for one."""
        left = min(self.ends - time.monotonic(), self.each)
        return time.time() + left if left > 0 and self.rows > 0 else None

    def take(self, rows: int) -> bool:
        """Spend ``rows`` if that many are left (a later, smaller diff may still fit)."""
        if rows > self.rows:
            return False
        self.rows -= rows
        return True


class Diff(list):
    """The segments or lines of one diff. ``rough`` when the budget ran out before it was
    exact: some of the change is then shown as whole removed and added text (still a true
    account of the change, only not the smallest one)."""

    def __init__(self, items=(), rough: bool = False) -> None:
        super().__init__(items)
        self.rough = rough


def _as_chars(old: list[str], new: list[str]) -> tuple[str, str]:
    """Each distinct token as one character, so the diff compares whole words or lines."""
    codes: dict[str, int] = {}

    def encode(tokens: list[str]) -> str:
        return "".join(chr(codes.setdefault(token, len(codes))) for token in tokens)

    return encode(old), encode(new)


def _myers(old: list[str], new: list[str], deadline: float) -> tuple[list[Op], bool]:
    """The opcodes of a diff that stops refining at ``deadline`` (what is left then is one
    removal and one addition), and whether it finished before it."""
    dmp = diff_match_patch()
    # No deadline-less half-match speedup: it takes seconds on 64 KiB of repeated lines.
    dmp.Diff_Timeout = 0
    a, b = _as_chars(old, new)
    try:
        diffs = dmp.diff_main(a, b, False, deadline)
    except RecursionError:  # its merge pass recurses once per sweep: never a 500 for a diff
        return _trimmed(old, new), False
    ops: list[Op] = []
    i = j = 0
    for kind, text in diffs:
        i1, j1 = i, j
        if kind != dmp.DIFF_INSERT:
            i += len(text)
        if kind != dmp.DIFF_DELETE:
            j += len(text)
        if kind == dmp.DIFF_EQUAL:
            ops.append(("equal", i1, i, j1, j))
        elif ops and ops[-1][0] == "replace":  # a removal and an addition side by side
            ops[-1] = ("replace", ops[-1][1], i, ops[-1][3], j)
        else:
            ops.append(("replace", i1, i, j1, j))
    return ops, time.time() <= deadline


def _trimmed(old: list[str], new: list[str]) -> list[Op]:
    """The common start and end kept, everything between replaced: linear, for pages whose
    budget is spent."""
    start, most = 0, min(len(old), len(new))
    while start < most and old[start] == new[start]:
        start += 1
    end = 0
    while end < most - start and old[-end - 1] == new[-end - 1]:
        end += 1
    ops = [("equal", 0, start, 0, start)] if start else []
    if start < len(old) - end or start < len(new) - end:
        ops.append(("replace", start, len(old) - end, start, len(new) - end))
    if end:
        ops.append(("equal", len(old) - end, len(old), len(new) - end, len(new)))
    return ops


def _is_exact(ops: list[Op]) -> bool:
    """Whether a trimmed diff is also the smallest: one side empty, or one token for one."""
    return all(
        tag == "equal" or (i2 - i1 <= 1 and j2 - j1 <= 1) or i1 == i2 or j1 == j2
        for tag, i1, i2, j1, j2 in ops
    )


def _diff(old: list[str], new: list[str], budget: Budget) -> tuple[list[Op], bool]:
    """Opcodes of ``new`` against ``old``, and whether they are exact."""
    deadline = budget.deadline()
    if deadline is None:
        ops = _trimmed(old, new)
        return ops, _is_exact(ops)
    if len(old) + len(new) <= SMALL:  # ordinary edits keep the very diff they always had
        return list(difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()), True
    return _myers(old, new, deadline)


@dataclass(frozen=True)
class Segment:
    kind: str  # "same", "added" or "removed"
    text: str


def _segments(old: list[str], new: list[str], ops: list[Op]) -> list[Segment]:
    segments: list[Segment] = []
    for tag, a1, a2, b1, b2 in ops:
        if tag == "equal":
            segments.append(Segment("same", "".join(old[a1:a2])))
            continue
        if a2 > a1:
            segments.append(Segment("removed", "".join(old[a1:a2])))
        if b2 > b1:
            segments.append(Segment("added", "".join(new[b1:b2])))
    return segments


def word_diff(before: str, after: str, budget: Budget | None = None) -> Diff:
    """``after`` against ``before``, word by word, within ``budget`` (a page's; else one of
    its own)."""
    budget = budget or Budget()
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    ops, exact = _diff(old, new, budget)
    segments = _segments(old, new, ops)
    if not budget.take(len(segments)):  # too many to render: at most four segments instead
        ops = _trimmed(old, new)
        segments, exact = _segments(old, new, ops), _is_exact(ops)
    return Diff(segments, rough=not exact)


@dataclass(frozen=True)
class Line:
    kind: str  # "same", "added", "removed", or "gap" (unchanged lines left out)
    old: int | None  # its number in ``before`` (1-based), None for an added line or a gap
    new: int | None  # its number in ``after``, None for a removed line or a gap
    text: str  # in a rough diff a removed or added Line may hold a block of lines
    more: int = 0  # a block's lines left out after ``text`` (the revision shows them whole)


def _grouped(ops: list[Op], context: int) -> Iterator[list[Op]]:
    """The changes with ``context`` unchanged lines around each, as difflib groups them."""
    ops = list(ops)
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _rows(groups: list[list[Op]]) -> int:
    """How many Lines the groups make line by line: their lines, and the gaps between."""
    lines = sum(
        i2 - i1 + (j2 - j1 if tag != "equal" else 0)
        for group in groups
        for tag, i1, i2, j1, j2 in group
    )
    return lines + len(groups) + 1


def _block(kind: str, old: int | None, new: int | None, texts: list[str]) -> Line:
    """A rough diff's removed or added lines as one Line, its first :data:`BLOCK_LINES` shown:
    a rewritten 64 KiB file would otherwise put some 65,000 lines on one page."""
    shown = texts[:BLOCK_LINES]
    return Line(kind, old, new, "\n".join(shown), more=len(texts) - len(shown))


def _lines(old: list[str], new: list[str], groups: list[list[Op]], blocks: bool) -> list[Line]:
    """The Lines of the groups; with ``blocks``, each change's removed lines as one Line and
    its added lines as another (a few rows to render, however many lines changed)."""
    lines: list[Line] = []
    for group in groups:
        if lines or group[0][1] > 0:  # unchanged lines left out before this change
            lines.append(Line("gap", None, None, ""))
        for op, a1, a2, b1, b2 in group:
            if op == "equal":
                lines.extend(
                    Line("same", a1 + i + 1, b1 + i + 1, old[a1 + i]) for i in range(a2 - a1)
                )
            elif blocks:
                if a2 > a1:
                    lines.append(_block("removed", a1 + 1, None, old[a1:a2]))
                if b2 > b1:
                    lines.append(_block("added", None, b1 + 1, new[b1:b2]))
            else:
                lines.extend(Line("removed", i + 1, None, old[i]) for i in range(a1, a2))
                lines.extend(Line("added", None, i + 1, new[i]) for i in range(b1, b2))
    if groups and groups[-1][-1][2] < len(old):
        lines.append(Line("gap", None, None, ""))  # and after the last change
    return lines


def line_diff(before: str, after: str, context: int = 3, budget: Budget | None = None) -> Diff:
    """``after`` against ``before``, line by line, for files: each change with ``context``
    unchanged lines around it and a gap where more are left out; empty when nothing changed.
    Within ``budget`` (a page's; else one of its own)."""
    old, new = before.splitlines(), after.splitlines()
    if old == new:
        return Diff()
    budget = budget or Budget()
    ops, exact = _diff(old, new, budget)
    groups = list(_grouped(ops, context))
    if budget.take(_rows(groups)):
        return Diff(_lines(old, new, groups, blocks=False), rough=not exact)
    ops = _trimmed(old, new)  # too many rows to render: the changed middle as two blocks
    return Diff(_lines(old, new, list(_grouped(ops, context)), blocks=True), rough=True)
