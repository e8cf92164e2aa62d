from django.urls import path

from web import views

app_name = "web"

urlpatterns = [
    path("", views.student_page, name="student"),
    path("teacher/", views.teacher_page, name="teacher"),
]
