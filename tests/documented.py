"""The README's and the docs' fenced blocks, read as a reader meets them, for the tests that
run or check them (tests/test_docs.py, tests/client/test_distribution.py).

A block is skipped only where the line before its fence says so, with the reason:
``<!-- docs-test: skip: needs Claude Code's own command line -->``.
"""

from __future__ import annotations

import ast
import io
import re
import shlex
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```(\S*)\s*$")
SKIP = re.compile(r"^<!-- docs-test: skip: (?P<reason>\S.*?) -->$")
MARKER = re.compile(r"^<!--\s*docs-test", flags=re.M)  # any marker, even one not read right


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    skip: str | None  # the reason given, when the block is marked to be skipped

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line} ({self.language or 'no language'})"


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("**/*.md"))]


def blocks(page: Path) -> list[Block]:
    found: list[Block] = []
    lines = page.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if end == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{index + 1}: a fence never closed")
        before = next((line for line in reversed(lines[:index]) if line.strip()), "")
        skipped = SKIP.match(before.strip())
        found.append(
            Block(
                page,
                index + 1,
                opening.group(1),
                "\n".join(lines[index + 1 : end]) + "\n",
                skipped.group("reason") if skipped else None,
            )
        )
        index = end + 1
    return found


def all_blocks(language: str | None = None) -> list[Block]:
    return [
        block
        for page in pages()
        for block in blocks(page)
        if language is None or block.language == language
    ]


def commands(block: Block) -> list[list[str]]:
    """The commands of a shell block as argument lists (comments and continuations
    resolved); of a ``console`` block, those of its ``$`` lines."""
    text = block.text
    if block.language == "console":
        text = "\n".join(line[2:] for line in text.splitlines() if line.startswith("$ "))
    text = text.replace("\\\n", " ")
    return [words for line in text.splitlines() if (words := shlex.split(line, comments=True))]


def install_line() -> list[str]:
    """The README's ``pip install`` of the client, as words."""
    for block in blocks(README):
        for words in commands(block) if block.language == "sh" else []:
            if words[:2] == ["pip", "install"]:
                return words
    raise AssertionError("the README shows no pip install")


def printed(code: str) -> list[str]:
    """What the ``print`` calls of ``code`` are documented to print, in order: the comment
    on the line where the call ends, else the comment line right after it."""
    comments: dict[int, str] = {}
    lonely: set[int] = set()  # lines that hold only a comment
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string[1:].strip()
            if not token.line[: token.start[1]].strip():
                lonely.add(token.start[0])
    calls = sorted(
        (node for node in ast.walk(ast.parse(code)) if _is_print(node)),
        key=lambda node: node.lineno,
    )
    expected = []
    for call in calls:
        end = call.end_lineno
        if end in comments and end not in lonely:
            expected.append(comments[end])
        elif end + 1 in lonely:
            expected.append(comments[end + 1])
        else:
            raise AssertionError(f"line {call.lineno}: say what this print prints")
    return expected


def _is_print(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )


def matches(expected: str, actual: str) -> bool:
    """``...`` in a documented output stands for any text."""
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None
