"""Error reasons and codes are named once, in memoryhub.reasons, and sent as plain strings.

The scan reads the source of the app packages: a string literal where a reason goes
(``reason=``, ``*_reason=``, the reason argument of the error helpers, a ``"reason"`` key,
a comparison with ``.reason``) or as the ``code=`` of an ApiError fails, so a new rule
gets a ``Reason`` member.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from memoryhub.errors import DEFAULT_CODES, ApiError
from memoryhub.reasons import Code, Reason

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memoryhub", "facts", "filememory", "records", "threads")

# Helpers that take the reason positionally: name -> index of the reason argument.
POSITIONAL_REASON = {
    "memory_gone": 1,
    "lock_memory": 2,
    "unavailable": 1,
}


def _sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _literal(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr)


def _is_reason_key(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == "reason"


def _is_reason_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "reason"


def _literal_reasons(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                named = keyword.arg and (keyword.arg == "reason" or keyword.arg.endswith("_reason"))
                if named and _literal(keyword.value):
                    found.append((node.lineno, f"{keyword.arg}={ast.unparse(keyword.value)}"))
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "ApiError":
                for keyword in node.keywords:
                    if keyword.arg == "code" and _literal(keyword.value):
                        found.append((node.lineno, f"code={ast.unparse(keyword.value)}"))
            index = POSITIONAL_REASON.get(name or "")
            if index is not None and len(node.args) > index and _literal(node.args[index]):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if _is_reason_key(key) and _literal(value):
                    found.append((node.lineno, f'"reason": {ast.unparse(value)}'))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_reason_attribute(side) for side in sides) and any(
                _literal(side) for side in sides
            ):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_string_literal_is_passed_as_a_reason():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in _sources()
        for line, text in _literal_reasons(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert not offenders, "use memoryhub.reasons.Reason, not a string:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "source",
    [
        'raise ApiError(409, "full", reason="memory_full")',
        'raise ApiError(409, "full", reason=f"memory_{kind}")',
        'writing(actor, memory_id, deleted_reason="memory_deleted")',
        'raise memory_gone(memory_id, "memory_deleted")',
        'raise self.unavailable("slow", "rate_limited")',
        'body = {"code": "conflict", "reason": "memory_full"}',
        'if error.reason == "write_unconfirmed": pass',
        'raise ApiError(409, "taken", code="already_exists")',
    ],
)
def test_the_scan_finds_a_literal_reason(source):
    assert _literal_reasons(ast.parse(source))


def test_the_scan_lets_a_named_reason_pass():
    source = (
        "raise ApiError(409, 'full', reason=Reason.MEMORY_FULL)\n"
        "raise memory_gone(memory_id, deleted_reason)\n"
        "if error.reason == Reason.WRITE_UNCONFIRMED: pass\n"
        "raise ApiError(409, 'taken', code=Code.ALREADY_EXISTS)\n"
    )
    assert _literal_reasons(ast.parse(source)) == []


def test_each_reason_is_its_name_in_lower_case_and_used():
    sources = "\n".join(path.read_text() for path in _sources() if path.name != "reasons.py")
    for reason in Reason:
        assert reason.value == reason.name.lower()
        assert f"Reason.{reason.name}" in sources, f"Reason.{reason.name} is never raised"
    assert len({reason.value for reason in Reason}) == len(Reason.__members__)


def test_each_code_is_its_name_in_lower_case():
    for code in Code:
        assert code.value == code.name.lower()
    assert len({code.value for code in Code}) == len(Code.__members__)
    assert all(isinstance(code, Code) for code in DEFAULT_CODES.values())


def test_a_reason_goes_on_the_wire_as_its_plain_value():
    error = ApiError(409, "this memory holds at most 3 facts", reason=Reason.MEMORY_FULL)
    body = error.as_dict()
    assert type(body["error"]["reason"]) is str
    assert type(body["error"]["code"]) is str
    assert json.dumps(body) == (
        '{"error": {"code": "conflict", "message": "this memory holds at most 3 facts", '
        '"reason": "memory_full"}}'
    )
    assert error.as_tool_text() == "error: memory_full: this memory holds at most 3 facts"
    assert repr(error) == (
        "ApiError(409, 'conflict', 'memory_full', 'this memory holds at most 3 facts')"
    )


def test_a_named_code_goes_on_the_wire_as_its_plain_value():
    error = ApiError(409, "a file exists at a.md", code=Code.ALREADY_EXISTS)
    assert json.dumps(error.as_dict()) == (
        '{"error": {"code": "already_exists", "message": "a file exists at a.md"}}'
    )
    assert error.as_tool_text() == "error: already_exists: a file exists at a.md"
    assert ApiError(418, "teapot").as_dict()["error"]["code"] == "error"
