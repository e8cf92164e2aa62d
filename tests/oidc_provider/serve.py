"""Start the test provider: `python -m tests.oidc_provider.serve <port>`, with OIDC_PROVIDER_DIR
(holding seed.json) and OIDC_PROVIDER_KEY_FILE set. Migrates its SQLite database, seeds the
accounts and the confidential client of seed.json, then serves on 127.0.0.1:<port> until stopped.

seed.json: {"client_id", "client_secret", "redirect_uris": [...],
            "users": {"<username>": {"password", "claims": {...}}}}"""

import json
import os
import sys
from pathlib import Path

import django
from django.core.management import call_command


def seed() -> None:
    from django.contrib.auth.models import User
    from oauth2_provider.models import Application

    data = json.loads((Path(os.environ["OIDC_PROVIDER_DIR"]) / "seed.json").read_text())
    for username, account in data["users"].items():
        User.objects.create_user(username=username, password=account["password"])
    Application.objects.create(
        name="Tutor",
        client_id=data["client_id"],
        client_secret=data["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(data["redirect_uris"]),
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.oidc_provider.settings"
    django.setup()
    call_command("migrate", verbosity=0)
    seed()
    call_command("runserver", f"127.0.0.1:{sys.argv[1]}", use_reloader=False, skip_checks=True)


if __name__ == "__main__":
    main()
