"""scripts/check_imports.py on small fake project trees: for each rule, a tree that breaks it and one that keeps it."""

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_imports.py"

# A tree that keeps every rule: each app imports only apps below it (privacy and web on top
# import any), tutor imports apps, tasks import services and services enqueue tasks by name.
CLEAN = {
    "core/errors.py": "class ApplicationError(Exception): ...\n",
    "core/background.py": "def enqueue(name): ...\n",
    "accounts/models.py": "from core.errors import ApplicationError\n",
    "llm/gateway.py": "import core.errors\n",
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
    "privacy/models.py": "",
    "privacy/services.py": """\
        from conversations import services
        from memory.tasks import consolidate
        from web import views
        """,
    "web/views.py": "from privacy.models import Request\nimport core.errors\n",
    "tutor/settings.py": "",
    "tutor/urls.py": "from web import views\nfrom memory import tasks\n",
}


def check(root: Path, **changes: str | None) -> subprocess.CompletedProcess[str]:
    """Write CLEAN with `changes` (path with '__' for '/', None: no such file) under root, then run the script."""
    files = CLEAN | {name.replace("__", "/") + ".py": text for name, text in changes.items()}
    for name, text in files.items():
        if text is None:
            continue
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for directory in [path for path in root.rglob("*") if path.is_dir()]:
        (directory / "__init__.py").touch()
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, check=False
    )


def test_clean_tree_passes(tmp_path):
    result = check(tmp_path)
    assert result.returncode == 0, result.stdout
    assert "OK" in result.stdout


def test_cycle_between_apps_fails_with_its_path(tmp_path):
    result = check(tmp_path, privacy__models="from web.views import Page\n")
    assert result.returncode == 1
    assert "cycle between apps: privacy.models -> web.views -> privacy.models" in result.stdout
    assert "privacy/models.py:1 imports web.views" in result.stdout
    assert "web/views.py:1 imports privacy.models" in result.stdout


def test_cycle_closed_by_a_lazy_import_fails(tmp_path):
    result = check(tmp_path, accounts__models="import core.errors\n\n\ndef owner():\n    from memory import models\n")
    assert result.returncode == 1
    assert "cycle between apps: accounts.models -> memory.models -> accounts.models" in result.stdout
    assert "accounts/models.py:5 imports memory.models" in result.stdout


def test_imports_under_type_checking_are_ignored(tmp_path):
    result = check(
        tmp_path,
        accounts__models="from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from memory import models\n",
    )
    assert result.returncode == 0, result.stdout


def test_services_importing_tasks_back_fails(tmp_path):
    result = check(tmp_path, memory__services="def remember():\n    from memory.tasks import consolidate\n")
    assert result.returncode == 1
    assert "services-tasks cycle in memory: memory.services -> memory.tasks" in result.stdout
    assert "memory/services.py:2 imports memory.tasks" in result.stdout
    assert "memory/tasks.py:1 imports memory.services" in result.stdout


def test_services_package_reaching_tasks_through_another_module_fails(tmp_path):
    result = check(
        tmp_path,
        memory__services__reads="def remember(): ...\n",
        memory__services__writes="def write():\n    from ..helpers import flush\n",
        memory__helpers="from memory.tasks import consolidate\n",
        memory__tasks="from memory.services.reads import remember\n",
        memory__services=None,
    )
    assert result.returncode == 1
    assert "services-tasks cycle in memory: memory.services.writes -> memory.helpers -> memory.tasks" in result.stdout
    assert "memory/services/writes.py:2 imports memory.helpers" in result.stdout
    assert "and back: memory.tasks -> memory.services.reads" in result.stdout


def test_app_importing_tutor_fails(tmp_path):
    result = check(tmp_path, learning__models="def limit():\n    from tutor import settings\n")
    assert result.returncode == 1
    assert "app imports the project wiring: learning.models -> tutor.settings" in result.stdout
    assert "learning/models.py:2" in result.stdout


def test_import_module_with_a_literal_name_counts(tmp_path):
    result = check(tmp_path, core__errors="import importlib\n\nimportlib.import_module('tutor.settings')\n")
    assert result.returncode == 1
    assert "app imports the project wiring: core.errors -> tutor.settings" in result.stdout


def test_core_importing_an_app_fails(tmp_path):
    result = check(tmp_path, core__background="def enqueue(name):\n    import accounts.models\n")
    assert result.returncode == 1
    assert "core imports an app: core.background -> accounts.models" in result.stdout
    assert "core/background.py:2" in result.stdout


def test_app_importing_an_app_above_it_fails(tmp_path):
    result = check(tmp_path, memory__models="from learning.models import Topic\n")
    assert result.returncode == 1
    assert "layer order broken (memory may not import learning): memory.models -> learning.models" in result.stdout
    assert "memory/models.py:1" in result.stdout
    assert "cycle" not in result.stdout


def test_an_app_may_not_import_an_app_above_it(tmp_path):
    result = check(tmp_path, accounts__models="from llm.gateway import complete\n")
    assert result.returncode == 1
    assert "layer order broken (accounts may not import llm): accounts.models -> llm.gateway" in result.stdout


def test_top_apps_may_import_any_app(tmp_path):
    result = check(
        tmp_path,
        web__views="from privacy.models import Request\nfrom learning import services\nimport llm.gateway\n",
        privacy__services="import accounts.models\nfrom memory.tasks import consolidate\nfrom web.views import page\n",
    )
    assert result.returncode == 0, result.stdout


def test_root_defaults_to_the_repository(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert f"under {SCRIPT.parents[1]}" in result.stdout + result.stderr
