from django.contrib import admin
from django.urls import path, re_path

from accounts import apis as accounts
from conversations import apis as conversations
from memory import apis as memory
from tutor.errors import handler404 as api_not_found

api = "api/v1/"

urlpatterns = [
    path("admin/", admin.site.urls),
    path(f"{api}auth/token/", accounts.TokenObtainApi.as_view(), name="auth-token"),
    path(f"{api}me/", accounts.MeApi.as_view(), name="me"),
    path(f"{api}students/", accounts.StudentListApi.as_view(), name="student-list"),
    path(f"{api}students/<int:student_id>/", accounts.StudentDetailApi.as_view(), name="student-detail"),
    path(f"{api}conversations/", conversations.ConversationListCreateApi.as_view(), name="conversation-list"),
    path(
        f"{api}conversations/<int:conversation_id>/",
        conversations.ConversationDetailApi.as_view(),
        name="conversation-detail",
    ),
    path(
        f"{api}conversations/<int:conversation_id>/messages/",
        conversations.message_send,
        name="message-send",
    ),
    path(
        f"{api}conversations/<int:conversation_id>/end/",
        conversations.ConversationEndApi.as_view(),
        name="conversation-end",
    ),
    path(f"{api}memories/", memory.MemoryListCreateApi.as_view(), name="memory-list"),
    path(f"{api}memories/<int:memory_id>/", memory.MemoryDetailApi.as_view(), name="memory-detail"),
    path(f"{api}memories/<int:memory_id>/archive/", memory.MemoryArchiveApi.as_view(), name="memory-archive"),
    # Unknown API URLs answer in the error envelope even with DEBUG on (Django's debug 404 is HTML).
    re_path(r"^api/", api_not_found),
]

handler400 = "tutor.errors.handler400"
handler403 = "tutor.errors.handler403"
handler404 = "tutor.errors.handler404"
handler500 = "tutor.errors.handler500"
