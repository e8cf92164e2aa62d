"""The provider's claims: each test account's, from the seed file (`claims`), as a real provider
would send them: `sub`, `email`, `email_verified`, Entra's `oid`..."""

import json
import os
from pathlib import Path
from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class ClaimsValidator(OAuth2Validator):
    # Every claim of the account goes in the ID token, whatever the scopes.
    oidc_claim_scope = None

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        seed = json.loads((Path(os.environ["OIDC_PROVIDER_DIR"]) / "seed.json").read_text())
        return dict(seed["users"][request.user.username]["claims"])
