"""Writing webhooks: a school's administrator (or staff) subscribes a URL to events, and removes
it (docs/webhooks.md). Delivering them is webhooks.delivery."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.selectors import is_staff_account, schools_administered_by
from core import signed_post
from core.errors import ApplicationError, NotFound
from webhooks.models import Webhook
from webhooks.selectors import webhook_get, webhook_list


def webhook_create(
    *, user: Any, url: str, events: list[str], school_id: int | None, secret: str = "", description: str = ""
) -> Webhook:
    """Subscribe `url` to `events` for the students of school `school_id` (and the schools under
    it), or of every school when None (staff only). The secret is generated (`whsec_...`) when
    not given; the caller shows it once. Forbidden for a user who manages no webhook; NotFound
    for a school outside the user's; invalid for a URL refused by `url_refusal` (a private or
    loopback address, unless WEBHOOKS_ALLOW_PRIVATE_URLS) or a secret that is not a whsec_ one."""
    webhook_list(user=user)  # Forbidden for a role that manages none
    if school_id is None:
        if not is_staff_account(user):
            raise ApplicationError(_("Choose the school whose events this webhook receives."), details={"school": []})
        school = None
    else:
        school = schools_administered_by(user).filter(pk=school_id).first()
        if school is None:
            raise NotFound(_("School not found."))
    _check_url(url)
    secret = secret or signed_post.secret_generate()
    try:
        signed_post.signer(secret)
    except signed_post.PostImpossible as exc:
        raise ApplicationError(
            _("The secret must be whsec_ followed by base64."), details={"secret": [str(exc)]}
        ) from exc
    return Webhook.objects.create(
        school=school,
        url=url,
        secret=secret,
        events=sorted(set(events)),
        description=description,
        created_by=user,
    )


def webhook_update(
    *,
    user: Any,
    webhook_id: int,
    url: str | None = None,
    events: list[str] | None = None,
    description: str | None = None,
    active: bool | None = None,
) -> Webhook:
    """Change a webhook `user` manages (NotFound as `webhook_get`); what is None stays. Turning
    it on again (`active`) clears its failure count and the reason it was disabled: the next
    events are sent (those that came while it was off are not). Turning it off records that it
    was by hand; its pending deliveries are cancelled when their task runs. A new URL is checked
    as at creation (`invalid`)."""
    hook = webhook_get(user=user, webhook_id=webhook_id)
    if url is not None:
        _check_url(url)
        hook.url = url
    if events is not None:
        hook.events = sorted(set(events))
    if description is not None:
        hook.description = description
    if active is True and not hook.active:
        hook.active, hook.consecutive_failures, hook.disabled_at, hook.disabled_reason = True, 0, None, ""
    elif active is False and hook.active:
        hook.active, hook.disabled_at = False, timezone.now()
        hook.disabled_reason = f"disabled by {user.get_username()}"
    hook.save()
    return hook


def _check_url(url: str) -> None:
    """`invalid` for a URL refused by `url_refusal` (a private or loopback address, unless
    WEBHOOKS_ALLOW_PRIVATE_URLS)."""
    refusal = signed_post.url_refusal(url, allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_URLS)
    if refusal:
        raise ApplicationError(
            _("This URL cannot receive webhooks: %(why)s.") % {"why": refusal}, details={"url": [refusal]}
        )


def webhook_delete(*, user: Any, webhook_id: int) -> None:
    """Remove a webhook `user` manages and its delivery log (NotFound as `webhook_get`); its
    deliveries still pending are not sent."""
    webhook_get(user=user, webhook_id=webhook_id).delete()
