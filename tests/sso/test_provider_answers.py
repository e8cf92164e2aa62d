"""What the provider answers, checked by the relying party (Authlib) and refused with a clear
page, never a 500: an ID token tampered with, expired, for another audience or from another
issuer (the real provider's token, altered by a proxy and signed again with its own key), an
answer that is not JSON, and a provider that cannot be reached."""

from __future__ import annotations

import base64
import html
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from joserfc import jws, jwt
from joserfc.jwk import RSAKey

from tests.conftest import free_port
from tests.sso.conftest import CLIENT_ID, make_provider, sign_in_at_provider
from tests.sso.test_sign_in import callback_path, signed_in_user, start


@pytest.fixture
def proxied(school: dict[str, Any], proxy: Any, oidc_provider: Any, sso_settings: Any) -> Iterator[dict[str, Any]]:
    """School A's provider behind the proxy (its issuer the proxy's), and its teacher."""
    school["teacher_a"].external_id = "hopper-sub"
    school["teacher_a"].save(update_fields=["external_id"])
    proxy.alter = None
    yield {**school, "provider": make_provider(school["school"], proxy.issuer)}
    proxy.alter = None


def _resigned(key_pem: bytes, change: dict[str, Any]) -> Any:
    """An alteration of the token answer: its ID token's claims changed by `change`, signed
    again with the provider's own key and key id, so that only the claim is wrong."""

    def alter(answer: dict[str, Any]) -> dict[str, Any]:
        token = answer["id_token"]
        header = jws.extract_compact(token.encode()).protected
        claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        answer["id_token"] = jwt.encode(header, {**claims, **change}, RSAKey.import_key(key_pem))
        return answer

    return alter


def _tampered(answer: dict[str, Any]) -> dict[str, Any]:
    """Another subject put in the ID token, its signature kept."""
    head, payload, signature = answer["id_token"].split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["sub"] = "someone-else"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    answer["id_token"] = f"{head}.{forged}.{signature}"
    return answer


def _sign_in(client: Client, provider_id: int) -> Any:
    return client.get(callback_path(sign_in_at_provider(start(client, provider_id), "ms.hopper")))


def test_the_proxy_alone_changes_nothing(proxied):
    """Through the proxy, unaltered, the teacher signs in: what the other tests refuse is their
    alteration's doing."""
    client = Client()
    assert _sign_in(client, proxied["provider"].pk).status_code == 302
    assert signed_in_user(client) == proxied["teacher_a"].pk


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("tampered", "bad_signature"),
        ("expired", "The token is expired"),
        ("audience", "Invalid claim: 'aud'"),
        ("audience_naming_us_as_azp", "Invalid claim: 'aud'"),
        ("issuer", "Invalid claim: 'iss'"),
        ("no_id_token", "no ID token"),
        ("not_json", "not valid"),
    ],
)
def test_an_answer_that_cannot_be_trusted_is_a_502(proxied, proxy, oidc_provider, case, why):
    """A tampered ID token (its signature fails), one expired an hour ago, one for another
    client (naming us as its authorized party or not), one signed by the provider but naming
    another issuer, an answer without an ID token, and one that is not JSON: a 502 page, nobody
    signed in."""
    now = int(time.time())
    proxy.alter = {
        "tampered": _tampered,
        "expired": _resigned(oidc_provider.key_pem, {"exp": now - 3600, "iat": now - 7200}),
        "audience": _resigned(oidc_provider.key_pem, {"aud": "another-client"}),
        "audience_naming_us_as_azp": _resigned(oidc_provider.key_pem, {"aud": ["another-client"], "azp": CLIENT_ID}),
        "issuer": _resigned(oidc_provider.key_pem, {"iss": oidc_provider.issuer}),
        "no_id_token": lambda answer: {key: value for key, value in answer.items() if key != "id_token"},
        "not_json": lambda answer: b"<html>Maintenance</html>",
    }[case]
    client = Client()
    response = _sign_in(client, proxied["provider"].pk)
    assert response.status_code == 502, response.content
    assert response["Content-Type"].startswith("text/html")
    assert why in html.unescape(response.content.decode())
    assert signed_in_user(client) is None


def test_a_provider_that_cannot_be_reached_is_a_503(school, sso_settings):
    """Nothing listens at the issuer: the login is a 503 page saying to try again later."""
    provider = make_provider(school["school"], f"http://127.0.0.1:{free_port()}/o")
    response = Client().get(f"/auth/oidc/{provider.pk}/login/")
    assert response.status_code == 503
    assert "cannot be reached" in response.content.decode()


def test_a_discovery_document_of_another_issuer_is_a_502(school, oidc_provider, proxy, sso_settings):
    """The proxy's address given as the real provider's issuer: the document names another
    issuer, refused before anyone is sent there."""
    provider = make_provider(school["school"], oidc_provider.issuer.replace(oidc_provider.base, proxy.base) + "/")
    provider.issuer = proxy.base + "/o-other"
    provider.save()
    response = Client().get(f"/auth/oidc/{provider.pk}/login/")
    assert response.status_code == 502


def test_a_provider_on_a_private_network_is_refused_unless_allowed(school, oidc_provider, settings):
    """Without OIDC_ALLOW_PRIVATE_ISSUERS a provider on the loopback is not even asked."""
    settings.OIDC_ALLOW_PRIVATE_ISSUERS = False
    provider = make_provider(school["school"], oidc_provider.issuer)
    response = Client().get(f"/auth/oidc/{provider.pk}/login/")
    assert response.status_code == 502 and "may not be used" in response.content.decode()
