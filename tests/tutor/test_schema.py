"""The OpenAPI schema: published, valid, complete, and enforced on every test's responses."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from openapi_spec_validator import validate

from memory.serializers import MemoryOutput
from tests import schema
from tests.conftest import ROOT
from tutor import urls


def test_schema_is_served_and_valid(client, db):
    """GET /api/schema/ (no login) is an OpenAPI 3 document that validates, with the envelope
    and the turn's events as components; /api/docs/ serves its assets from this server."""
    resp = client.get("/api/schema/?format=json")
    assert resp.status_code == 200
    document = resp.json()
    validate(document)
    assert document["openapi"].startswith("3.")
    components = document["components"]["schemas"]
    for name in ("ErrorEnvelope", "TurnEvent", "MessagePage", "PaginatedMemoryOutputList", "TurnOutput"):
        assert name in components, name
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn" not in html.lower()


@pytest.mark.parametrize(
    ("query", "accept", "status", "code"),
    [("?format=xml", "", 404, "not_found"), ("", "application/xml", 406, "not_acceptable")],
)
def test_a_schema_format_it_does_not_publish_is_an_error_in_the_json_envelope(client, db, query, accept, status, code):
    """/api/schema/ asked for XML (by `?format=` or by Accept) answers the error in the JSON
    envelope, like every other error, not in the YAML the document is published in."""
    resp = client.get(f"/api/schema/{query}", HTTP_ACCEPT=accept or "*/*")
    assert resp.status_code == status
    assert resp["Content-Type"].startswith("application/json")
    error = resp.json()["error"]
    assert error["code"] == code and error["retry_safe"] is False


def _api_routes(patterns: list, prefix: str = "") -> list[str]:
    routes = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            routes += _api_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            routes.append(prefix + str(pattern.pattern))
    return routes


def test_every_endpoint_is_documented(db):
    """Each /api/v1/ URL has its operations in the schema, every one with the error envelope."""
    paths = schema.published_schema()["paths"]
    routes = [r for r in _api_routes(get_resolver(urls).url_patterns) if r.startswith("api/v1/")]
    assert len(routes) >= 14
    for route in routes:
        path = "/" + route.replace("<id:", "{").replace(">", "}")
        assert path in paths, path
        for operation in paths[path].values():
            errors = {code for code in operation["responses"] if code >= "400"}
            assert {"400", "401", "404", "500"} <= errors, (path, errors)
            envelope = operation["responses"]["404"]["content"]["application/json"]["schema"]
            assert envelope == {"$ref": "#/components/schemas/ErrorEnvelope"}


def test_every_operation_has_a_summary(db):
    """Each operation has a summary of its own (`extend_schema(summary=...)`): the heading that
    ReDoc and Swagger UI show in place of the raw operation id."""
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, methods in schema.published_schema()["paths"].items()
        for method, operation in methods.items()
    ]
    assert len(operations) >= 50
    missing = [name for name, operation in operations if not operation.get("summary", "").strip()]
    assert not missing, f"operations without a summary: {missing}"
    summaries = [operation["summary"] for _name, operation in operations]
    assert len(set(summaries)) == len(summaries), "two operations share a summary"


def test_a_response_outside_the_schema_fails_the_test(clients, school, monkeypatch):
    """The check is real: a memory without its title, or a status the operation does not
    document, fails whichever test received it."""
    from memory.services.notes import teacher_note_create

    note = teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk, title="Prefers short worked examples", content="x"
    )
    original = MemoryOutput.to_representation

    def without_title(self, instance):
        body = original(self, instance)
        body.pop("title")
        return body

    monkeypatch.setattr(MemoryOutput, "to_representation", without_title)
    with pytest.raises(AssertionError, match="title"):
        clients["alice"].get(f"/api/v1/memories/{note.pk}/")


PROBE = """
from django.test import Client


def test_a():
    assert Client().get("/api/v1/auth/csrf/").status_code == 200


def test_b():
    assert Client().get("/api/v1/auth/csrf/").status_code == 200


def test_c():
    assert Client().get("/api/v1/auth/csrf/").status_code == 200
"""


def test_the_closing_line_counts_the_responses_of_every_xdist_worker(tmp_path):
    """Under pytest-xdist (-n 2), "responses checked against the OpenAPI schema: N" is the sum
    of the workers' counts: three tests of one checked response each give 3, not the
    controller's own 0."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    # The suite's hooks and fixtures, as they reach any test under tests/.
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n")
    # A run of its own: no database (the probe needs none), not an xdist worker of this run, and
    # runtime directories of its own (its end removes them: never this run's, nor its servers' logs).
    unset = ("DATABASE_URL", "REQUIRE_POSTGRES", "TUTOR_VAR_DIR", "TUTOR_TEST_VAR_WORKER")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in unset}
    command = [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), str(probe)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "3 passed" in done.stdout, done.stdout + done.stderr
    assert "responses checked against the OpenAPI schema: 3" in done.stdout, done.stdout
