"""The layer contract (pyproject.toml's [tool.importlinter], checked by import-linter): the
repository keeps it, and on small fake project trees each contract catches the import that
breaks it (a tree that keeps them all passes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

# Every app imports only apps below it (retention, then privacy and web, on top), tutor imports apps, tasks import
# services and services enqueue tasks by name, and no module of an app imports one that imports it.
CLEAN = {
    "core/errors.py": "class ApplicationError(Exception): ...\n",
    "core/background.py": "def enqueue(name): ...\n",
    "audit/models.py": "from core.errors import ApplicationError\n",
    "accounts/models.py": "from core.errors import ApplicationError\nfrom audit import models\n",
    "llm/gateway.py": "import core.errors\nfrom accounts import models\n",
    "memory/models.py": "from accounts import models\n",
    "memory/services.py": """\
        from core.background import enqueue
        from memory.models import Fact


        def remember():
            from llm import gateway

            enqueue("memory.tasks.consolidate")
        """,
    "memory/tasks.py": "from . import services\n",
    "learning/models.py": "",
    "learning/services.py": "from memory.services import remember\n",
    "conversations/services.py": "def reply():\n    from learning import services\n",
    "safety/models.py": "from conversations import services\n",
    "insights/asking.py": "from memory import services\n",
    "privacy/models.py": "",
    "privacy/services.py": """\
        from conversations import services
        from memory.tasks import consolidate
        from safety import models
        """,
    "web/views.py": "import core.errors\nfrom insights import asking\n",
    "webhooks/delivery.py": "from accounts import models\nfrom core import background\n",
    "retention/services.py": "from privacy import services\nfrom safety import models\n",
    "sso/views.py": "from accounts import models\nimport core.errors\n",
    "lti/models.py": "from accounts import models\n",
    "tutor/settings.py": "",
    "tutor/urls.py": "from web import views\nfrom memory import tasks\n",
}


def contracts() -> dict[str, Any]:
    """The repository's import-linter configuration, without the ignores of its current cycles."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for contract in config["contracts"]:
        contract.pop("ignore_imports", None)
        contract.pop("unmatched_ignore_imports_alerting", None)
    return config


def _toml(config: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(item) for item in v) + "]"
        return f'"{v}"'

    lines = ["[tool.importlinter]"]
    lines += [f"{key} = {value(v)}" for key, v in config.items() if key != "contracts"]
    for contract in config["contracts"]:
        lines += ["", "[[tool.importlinter.contracts]]"]
        lines += [f"{key} = {value(v)}" for key, v in contract.items()]
    return "\n".join(lines) + "\n"


def lint(root: Path, **changes: str) -> subprocess.CompletedProcess[str]:
    """Write CLEAN with `changes` (path with '__' for '/') under root, then lint-imports there."""
    files = CLEAN | {name.replace("__", "/") + ".py": text for name, text in changes.items()}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for directory in [path for path in root.rglob("*") if path.is_dir()]:
        (directory / "__init__.py").touch()
    (root / "pyproject.toml").write_text(_toml(contracts()))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=root,
        env={"PATH": str(LINT_IMPORTS.parent), "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=False,
    )


def broken(result: subprocess.CompletedProcess[str]) -> str:
    """The report's part on the broken contracts."""
    return result.stdout.partition("Broken contracts")[2]


def test_the_repository_keeps_its_contracts() -> None:
    """`make lint` runs lint-imports on the repository: every contract is kept."""
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_tree_that_keeps_every_contract_passes(tmp_path: Path) -> None:
    result = lint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("changes", "contract", "named"),
    [
        # An app importing one above it, lazily inside a function too.
        (
            {"accounts__models": "def owner():\n    from memory import models\n"},
            "Apps import one way",
            "accounts.models -> memory.models",
        ),
        ({"core__errors": "from llm import gateway\n"}, "Apps import one way", "core.errors -> llm.gateway"),
        (
            {"safety__models": "from insights import asking\n"},
            "Apps import one way",
            "safety.models -> insights.asking",
        ),
        ({"memory__models": "from tutor import settings\n"}, "No app imports tutor", "memory.models -> tutor.settings"),
        (
            {"memory__services": "from memory import tasks\n"},
            "An app's services never import its tasks",
            "memory.services -> memory.tasks",
        ),
        (
            {"memory__models": "from memory import search\n", "memory__search": "from memory.models import Fact\n"},
            "No import cycle between the modules of an app",
            "memory",
        ),
    ],
)
def test_each_contract_catches_the_import_that_breaks_it(
    tmp_path: Path, changes: dict[str, str], contract: str, named: str
) -> None:
    result = lint(tmp_path, **changes)
    assert result.returncode == 1, result.stdout
    assert f"\n{contract}" in broken(result), result.stdout
    assert named in broken(result)


def test_an_import_that_runs_only_for_the_type_checker_is_not_a_dependency(tmp_path: Path) -> None:
    result = lint(
        tmp_path, core__errors="from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from llm import gateway\n"
    )
    assert result.returncode == 0, result.stdout
