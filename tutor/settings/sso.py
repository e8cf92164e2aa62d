"""Single sign-on with the schools' OpenID Connect providers (sso/, docs/sso.md)."""

from __future__ import annotations

from .env import env_bool, env_float, env_int, env_list

# The redirect URIs a native app may ask the sign-in to come back to with its one-time code
# (`/auth/oidc/{id}/login/?redirect_uri=...`), exactly as the app sends them; empty: none.
OIDC_APP_REDIRECT_URIS = env_list("OIDC_APP_REDIRECT_URIS")
# How long a provider's discovery document is kept before it is fetched again.
OIDC_DISCOVERY_CACHE_SECONDS = env_int("OIDC_DISCOVERY_CACHE_SECONDS", 300, minimum=0)
# Each request to a provider (discovery, keys, token) gives up after this long.
OIDC_TIMEOUT_SECONDS = env_float("OIDC_TIMEOUT_SECONDS", 5.0, minimum=0.1)
# Providers on a loopback, private, link-local or reserved address are refused (at creation and
# at each fetch) unless this is on: a provider on the school's own network, or a test's.
OIDC_ALLOW_PRIVATE_ISSUERS = env_bool("OIDC_ALLOW_PRIVATE_ISSUERS", False)
# How long an app's one-time code may wait for its exchange (POST /api/v1/auth/oidc/token/).
OIDC_APP_CODE_SECONDS = env_int("OIDC_APP_CODE_SECONDS", 120, minimum=10)
