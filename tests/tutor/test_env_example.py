"""`.env.example` lists every environment variable the project reads, and nothing it does not:
what the settings and the server modules read (`env_*("NAME", ...)`, `os.environ`) and what the start scripts
read (`${NAME...}`)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

SETTINGS_READ = re.compile(
    r"""(?:env_[a-z]+\(\s*|os\.environ(?:\.get|\.setdefault)?[(\[]\s*)["']([A-Z][A-Z0-9_]+)["']"""
)
SCRIPT_READ = re.compile(r"\$\{([A-Z][A-Z0-9_]+)")
# Read by the start scripts for their own use, not configuration an operator sets.
SCRIPT_INTERNAL = {"VENV", "PY", "WORKER", "ADDR"}
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]+)=", re.MULTILINE)


def read_by_the_project() -> set[str]:
    names = set()
    for path in [*(ROOT / "tutor" / "settings").glob("*.py"), *(ROOT / "tutor").glob("*.py")]:
        if path.name != "test.py":
            names |= set(SETTINGS_READ.findall(path.read_text()))
    for script in ("serve.sh", "run_dev.sh"):
        names |= set(SCRIPT_READ.findall((ROOT / "scripts" / script).read_text())) - SCRIPT_INTERNAL
    return names


def test_env_example_lists_exactly_what_the_project_reads():
    """A variable read but not listed (an operator cannot find it) or listed but never read (it
    does nothing) fails, naming it."""
    listed = set(LISTED.findall((ROOT / ".env.example").read_text()))
    read = read_by_the_project() | {"DJANGO_SETTINGS_MODULE"}  # read by Django itself
    assert len(read) > 100  # the patterns still find the settings' reads
    assert sorted(read - listed) == [], "read but missing from .env.example"
    assert sorted(listed - read) == [], "in .env.example but read nowhere"
