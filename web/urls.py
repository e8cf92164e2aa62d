from django.urls import path

from web import views

app_name = "web"

urlpatterns = [
    path("", views.student_page, name="student"),
    path("teacher/", views.teacher_page, name="teacher"),
    # The safety queue, where alerts link (SAFETY_QUEUE_URL + "#flag-<id>"): the same page.
    path("teacher/safety/", views.teacher_page, name="teacher-safety"),
]
