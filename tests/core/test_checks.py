"""`check --deploy` with core.middleware's classes in MIDDLEWARE (core.checks)."""

from __future__ import annotations

from django.core.checks import run_checks


def deploy_check_ids() -> set[str]:
    return {message.id for message in run_checks(include_deployment_checks=True) if message.id}


def test_djangos_deploy_checks_find_its_middleware_under_core_names(settings):
    """Django's deployment checks count core.middleware's subclasses as its own middleware (no
    W001-W003) and check what depends on them (HSTS unset is W004); without the security
    middleware at all, W001 again, and nothing checked of what it would do."""
    settings.SECURE_HSTS_SECONDS = 0
    ids = deploy_check_ids()
    assert "security.W004" in ids
    assert not {"security.W001", "security.W002", "security.W003"} & ids
    settings.MIDDLEWARE = [path for path in settings.MIDDLEWARE if path != "core.middleware.SecurityMiddleware"]
    ids = deploy_check_ids()
    assert "security.W001" in ids and "security.W004" not in ids
