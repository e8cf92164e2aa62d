"""`manage.py check --deploy` with core.middleware in MIDDLEWARE.

Django's deployment checks of security find its middleware by name (`"django.middleware.security.
SecurityMiddleware" in MIDDLEWARE`): with core.middleware's subclasses named instead, they would
report the middleware missing and skip what depends on it (HSTS, the SSL redirect, the
X-Frame-Options, the CSRF and session cookies). `deploy_checks_install` (CoreConfig.ready) has
each of them run with MIDDLEWARE naming the library's class where it names one of those
subclasses (core.middleware.LIBRARY_NAMES), so that they answer as for the library's own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage
from django.core.checks.registry import registry

from core.middleware import LIBRARY_NAMES

Check = Callable[..., list[CheckMessage]]
SECURITY_CHECKS = "django.core.checks.security."


def with_library_names(check: Check) -> Check:
    """`check`, run with MIDDLEWARE naming the library's classes."""

    @functools.wraps(check)
    def run(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
        from django.test.utils import override_settings

        with override_settings(MIDDLEWARE=[LIBRARY_NAMES.get(path, path) for path in settings.MIDDLEWARE]):
            return check(app_configs, **kwargs)

    return run


def deploy_checks_install() -> None:
    """Replace each of Django's deployment checks of security with itself run `with_library_names`."""
    for check in list(registry.deployment_checks):
        if check.__module__.startswith(SECURITY_CHECKS):
            registry.deployment_checks.discard(check)
            registry.register(with_library_names(check), *check.tags, deploy=True)
