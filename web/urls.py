from django.urls import path

from web import cards, views

app_name = "web"

urlpatterns = [
    path("", views.student_page, name="student"),
    path("teacher/", views.teacher_page, name="teacher"),
    path("guardian/", views.guardian_page, name="guardian"),
    # The safety queue, where alerts link (SAFETY_QUEUE_URL + "#flag-<id>"): the same page.
    path("teacher/safety/", views.teacher_page, name="teacher-safety"),
    # A class's sign-in cards, to print (web.cards).
    path("teacher/classes/<id:classroom_id>/cards/", cards.class_cards, name="class-cards"),
]
