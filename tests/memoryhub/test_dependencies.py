"""A plain install (``pip install .``, as ``make run`` does with no extras) holds every
package the app imports when it loads: numpy once came only with the mem0 extra, and
without it every fact search failed to import."""

from __future__ import annotations

import ast
import sys
from importlib import metadata
from pathlib import Path

from django.conf import settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

APPS = ["facts", "filememory", "hub", "memoryhub", "panel", "records", "threads"]
# Imported at module level, but only in modules that an extra brings in (their own
# entry points, never loaded by the server).
OPTIONAL = {"agents": "memoryhub/adapters/openai_agents.py"}


def module_level_imports(path: Path) -> set[str]:
    """Top-level packages a module imports when it loads (not inside a function or a
    ``try``, which are how a module makes an import optional)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def base_install() -> set[str]:
    """The distributions ``pip install .`` brings: memoryhub's dependencies without extras,
    and theirs, with the extras each asks for."""
    seen: set[tuple[str, frozenset]] = set()
    wanted = [(canonicalize_name("memoryhub"), frozenset())]
    while wanted:
        name, extras = wanted.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in {"", *extras}):
                wanted.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return {name for name, _ in seen}


def test_a_plain_install_holds_every_package_the_app_loads():
    root = Path(settings.BASE_DIR)
    local = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    providers = metadata.packages_distributions()
    installed = base_install()
    missing = {}
    for app in APPS:
        for path in (root / app).rglob("*.py"):
            relative = str(path.relative_to(root))
            for name in module_level_imports(path) - local - set(sys.stdlib_module_names):
                if OPTIONAL.get(name) == relative:
                    continue
                if not {canonicalize_name(d) for d in providers.get(name, [])} & installed:
                    missing.setdefault(name, relative)
    assert not missing, f"imported but not installed by `pip install .`: {missing}"
