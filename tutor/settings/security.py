"""What browsers are allowed: the Content-Security-Policy, CORS for apps on other origins, and the
origins whose session writes pass CSRF."""

from __future__ import annotations

from .env import env_bool, env_origins

# --- Content-Security-Policy (django-csp) on every response -------------------------------------
# The pages (web/, the admin, the API docs) load scripts, styles, fonts and images from this
# server only, and their scripts write text with textContent: no inline script anywhere. The API
# docs' pages add inline styles (web.views.DOCS_CSP). Django 5.2 has no CSP of its own (6.0 has).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Browsers: CORS for apps on other origins, sessions and CSRF for the web ---------------------
# Origins allowed to call the API from a browser, comma-separated (e.g. https://app.school.org).
CORS_ALLOWED_ORIGINS = env_origins("CORS_ALLOWED_ORIGINS")
CORS_URLS_REGEX = r"^/api/.*$"
# Cookies (a session) cross-origin too; token clients need not.
CORS_ALLOW_CREDENTIALS = env_bool("CORS_ALLOW_CREDENTIALS", False)
CORS_EXPOSE_HEADERS = ["Retry-After"]
# Origins whose session-authenticated writes pass the CSRF check (defaults to the CORS origins).
CSRF_TRUSTED_ORIGINS = env_origins("CSRF_TRUSTED_ORIGINS", ",".join(CORS_ALLOWED_ORIGINS))
CSRF_FAILURE_VIEW = "core.errors.csrf_failure"
