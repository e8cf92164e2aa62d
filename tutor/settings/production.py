"""Production settings: the base settings plus security, and no start without real secrets."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import (
    DEV_SECRET_KEY,
    LOG_FORMATS,
    LOG_LEVEL,
    SECRET_KEY,
    WEB_ACCESS_LOG,
    env_bool,
    env_choice,
    env_int,
    logging_config,
)

if not SECRET_KEY or SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a long random value in production, or DJANGO_SECRET_KEY_FILE "
        "name a file holding one (python -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )

DEBUG = False
# One JSON object per log line, for a log collector (tutor.settings.logs).
LOG_FORMAT = env_choice("LOG_FORMAT", "json", LOG_FORMATS)
LOGGING = logging_config(LOG_FORMAT, LOG_LEVEL, WEB_ACCESS_LOG)
ALLOW_DEMO_DATA = False
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 60, minimum=0)
SECURE_CONTENT_TYPE_NOSNIFF = True
