"""`.env.example` lists every environment variable the project reads, and nothing it does not:
what the settings and the server modules read (`env_*("NAME", ...)`, `os.environ`) and what the start scripts
read (`${NAME...}`); and it names the `<NAME>_FILE` of every secret the settings read."""

from __future__ import annotations

import re

from tests.conftest import ROOT

SETTINGS_READ = re.compile(
    r"""(?:env_[a-z]+\(\s*|os\.environ(?:\.get|\.setdefault)?[(\[]\s*)["']([A-Z][A-Z0-9_]+)["']"""
)
# A read with `secret=True` before the call's closing parenthesis (no default holds one).
SECRET_READ = re.compile(r"""env_[a-z]+\(\s*["']([A-Z][A-Z0-9_]+)["'][^)]*\bsecret=True""")
SCRIPT_READ = re.compile(r"\$\{([A-Z][A-Z0-9_]+)")
# Read by the start scripts for their own use, not configuration an operator sets.
SCRIPT_INTERNAL = {"VENV", "PY", "WORKER", "ADDR"}
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]+)=", re.MULTILINE)


def settings_sources() -> list[str]:
    paths = [*(ROOT / "tutor" / "settings").glob("*.py"), *(ROOT / "tutor").glob("*.py")]
    return [path.read_text() for path in paths if path.name != "test.py"]


def read_by_the_project() -> set[str]:
    names = set()
    for source in settings_sources():
        names |= set(SETTINGS_READ.findall(source))
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


def test_env_example_names_the_file_variant_of_every_secret():
    """Each secret the settings read may come from `<NAME>_FILE`, and `.env.example` says which:
    exactly those."""
    secrets = {name for source in settings_sources() for name in SECRET_READ.findall(source)}
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "LLM_API_KEY", "EMBEDDINGS_API_KEY"} <= secrets
    named = set(re.findall(r"\b([A-Z][A-Z0-9_]+)_FILE\b", (ROOT / ".env.example").read_text())) - {"NAME"}
    assert sorted(secrets - named) == [], "secret without its _FILE in .env.example"
    assert sorted(named - secrets) == [], "_FILE in .env.example for a variable not read as a secret"
