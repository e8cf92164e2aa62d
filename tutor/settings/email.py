"""Outgoing email (the safety alerts, safety.alerts): Django's email settings from the environment.

- `EMAIL_URL` unset: the console backend (messages are printed by the process that sends them,
  the Celery worker), so development sends nothing.
- `EMAIL_URL=smtp://user:pass@host:25`: plain SMTP, `smtp+tls://...` with STARTTLS (port 587 by
  default), `smtp+ssl://...` with implicit TLS (port 465 by default). User and password are
  percent-decoded; the URL holds a password, so it may come from `EMAIL_URL_FILE`. django-environ
  parses it (`environ.Env.email_url_config`).
- `EMAIL_BACKEND` overrides the backend the URL chose, with a dotted path (the tests use
  `django.core.mail.backends.filebased.EmailBackend`, writing to `EMAIL_FILE_PATH`).
- `EMAIL_TIMEOUT_SECONDS`: an SMTP server that does not answer in time fails the send, which the
  alert's task retries, instead of holding a worker for ever (Django's default has no limit).
"""

from __future__ import annotations

import environ

from .django import VAR_DIR
from .env import SettingsError, env_float, env_str, env_url

_SCHEMES = ("smtp", "smtp+tls", "smtp+ssl")

EMAIL_URL = env_url("EMAIL_URL", "", schemes=_SCHEMES, secret=True)
try:
    _parsed: dict[str, object] = environ.Env.email_url_config(EMAIL_URL) if EMAIL_URL else {}
except ValueError as exc:  # a port that is not a number
    raise SettingsError(f"EMAIL_URL must be a smtp://user:password@host:port URL: {type(exc).__name__}") from exc

# Empty or unset: the URL's backend.
EMAIL_BACKEND = env_str("EMAIL_BACKEND") or str(
    _parsed.get("EMAIL_BACKEND") or "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = str(_parsed.get("EMAIL_HOST") or "localhost")
EMAIL_HOST_USER = str(_parsed.get("EMAIL_HOST_USER") or "")
EMAIL_HOST_PASSWORD = str(_parsed.get("EMAIL_HOST_PASSWORD") or "")
EMAIL_USE_TLS = bool(_parsed.get("EMAIL_USE_TLS", False))
EMAIL_USE_SSL = bool(_parsed.get("EMAIL_USE_SSL", False))
# Without a port in the URL: the usual one for the scheme (submission with STARTTLS, SMTPS, SMTP).
EMAIL_PORT = int(str(_parsed.get("EMAIL_PORT") or (587 if EMAIL_USE_TLS else 465 if EMAIL_USE_SSL else 25)))
EMAIL_TIMEOUT = env_float("EMAIL_TIMEOUT_SECONDS", 10.0, minimum=0.1)
# The filebased backend's directory (one file per message).
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", "") or str(VAR_DIR / "mail")
