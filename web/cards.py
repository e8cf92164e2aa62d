"""The printable sheet of a class's sign-in cards (accounts.codes, docs/api.md#sign-in-cards).

`GET /app/teacher/classes/<id>/cards/` asks the teacher to confirm (the cards replace the class's
earlier ones); its form POSTs back, which makes the codes and answers the sheet: one card per
student with their first name, the class, the code and a QR code of the sign-in link, drawn as
inline SVG by segno (no script, no image from elsewhere), laid out for A4 with cut lines
(web/static/web/cards.css). The codes are in this answer only, so it is never cached.

Session authentication, as the pages: the class's teachers, its school's administrators and
staff (accounts.selectors.classroom_get_overseen); anyone else, signed in or not, gets the 404
of a class that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

import segno
from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.cache import add_never_cache_headers
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods

from accounts.code_apis import sign_in_url
from accounts.codes import DAYS_DEFAULT, DAYS_MAX, sign_in_codes_create
from accounts.models import Classroom, User
from accounts.selectors import classroom_get_overseen
from core.errors import NotFound

# The QR code: error correction M (15 % of it may be smudged or folded), the standard quiet zone
# of 4 modules; its size on paper is the stylesheet's.
QR_ERROR = "m"
QR_SVG = {"scale": 1, "border": 4, "omitsize": True, "svgclass": "qr", "lineclass": "qr-modules"}


def qr_svg(link: str) -> SafeString:
    """`link` as a QR code, an inline SVG element (segno writes only its own markup)."""
    return mark_safe(segno.make(link, error=QR_ERROR, micro=False).svg_inline(**QR_SVG))  # noqa: S308


@dataclass(frozen=True)
class Card:
    first_name: str
    code: str
    link: str
    qr: SafeString


class CardsForm(forms.Form):
    days = forms.IntegerField(min_value=1, max_value=DAYS_MAX, initial=DAYS_DEFAULT)


def _classroom(request: HttpRequest, classroom_id: int) -> Classroom:
    try:
        return classroom_get_overseen(user=request.user, classroom_id=classroom_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


@require_http_methods(["GET", "HEAD", "POST"])
def class_cards(request: HttpRequest, classroom_id: int) -> HttpResponse:
    """GET: the form that makes the class's cards. POST (CSRF-checked): new codes for every
    active student of the class (their earlier ones of the class revoked), as a sheet to print;
    an invalid `days` shows the form again with its error (400)."""
    classroom = _classroom(request, classroom_id)
    assert isinstance(request.user, User)  # classroom_get_overseen admits signed-in users only
    with translation.override(request.user.language):
        response = _answer(request, classroom)
    add_never_cache_headers(response)
    return response


def _answer(request: HttpRequest, classroom: Classroom) -> HttpResponse:
    assert isinstance(request.user, User)
    form = CardsForm(request.POST if request.method == "POST" else None)
    context = {"classroom": classroom, "form": form, "days_max": DAYS_MAX}
    if request.method != "POST":
        response = render(request, "web/cards.html", context)
    elif not form.is_valid():
        response = render(request, "web/cards.html", context, status=400)
    else:
        issued = sign_in_codes_create(classroom=classroom, created_by=request.user, days=form.cleaned_data["days"])
        cards = []
        for card in issued:
            link = sign_in_url(request, card.code)
            cards.append(
                Card(
                    first_name=card.student.first_name or card.student.username,
                    code=card.code,
                    link=link,
                    qr=qr_svg(link),
                )
            )
        expires_at = issued[0].expires_at if issued else None
        context.update({"cards": cards, "expires_at": expires_at})
        response = render(request, "web/cards_sheet.html", context)
    return response
