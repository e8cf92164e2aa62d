"""Files students attach to a conversation (conversations.files): limits, extraction, storage."""

from __future__ import annotations

import re
from pathlib import Path

from .django import VAR_DIR
from .env import SettingsError, env_float, env_int, env_json, env_list, env_str, env_url

_DOTTED_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")

# Checked on upload by content (magic bytes for PDF and images, UTF-8 for text), never by the
# client's name or content type alone. A wrong type or a larger file is a 400 naming the limit.
FILES_MAX_BYTES = env_int("FILES_MAX_BYTES", 10 * 1024 * 1024)
FILES_ALLOWED_TYPES = env_list(
    "FILES_ALLOWED_TYPES", "application/pdf,text/plain,text/markdown,image/png,image/jpeg,image/webp,image/gif"
)
FILES_MAX_PER_CONVERSATION = env_int("FILES_MAX_PER_CONVERSATION", 20)
# A OneRoster CSV bundle (docs/roster.md): the largest zip uploaded or imported; a district of
# 5,000 students is about 2 MB zipped.
ROSTER_MAX_BYTES = env_int("ROSTER_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
# Extracted text kept per file for the prompt (PDF pages are separated by a form feed).
FILES_MAX_TEXT_CHARS = env_int("FILES_MAX_TEXT_CHARS", 100_000)
# Extraction (conversations.tasks.file_extract): tries per file before it is marked unreadable
# (a file that keeps killing the worker must not be redelivered for ever), the first retry's
# delay (doubled each time, with jitter), and the time reading one file may take.
FILES_EXTRACT_MAX_ATTEMPTS = env_int("FILES_EXTRACT_MAX_ATTEMPTS", 5)
FILES_EXTRACT_RETRY_BACKOFF_SECONDS = env_float("FILES_EXTRACT_RETRY_BACKOFF_SECONDS", 10.0)
FILES_EXTRACT_TIME_LIMIT_SECONDS = env_int("FILES_EXTRACT_TIME_LIMIT_SECONDS", 120)
# A PDF is read in a process of its own (conversations.pdf_text), stopped past the time limit
# (the file is unreadable, `too_slow`), past this many bytes decompressed from all its streams
# together, or past this much memory (`too_large`): a few megabytes can expand to gigabytes.
FILES_EXTRACT_MAX_DECODED_BYTES = env_int("FILES_EXTRACT_MAX_DECODED_BYTES", 256 * 1024 * 1024)
FILES_EXTRACT_MAX_MEMORY_BYTES = env_int("FILES_EXTRACT_MAX_MEMORY_BYTES", 1024 * 1024 * 1024)
# A file still pending this long after its last try (a lost task message) is re-enqueued.
FILES_SWEEP_AFTER_SECONDS = env_int("FILES_SWEEP_AFTER_SECONDS", 300)
# Storage: private files, never served by URL (the API returns their metadata only).
# FILES_STORAGE=local (default): MEDIA_ROOT/files on this machine, which every web and worker
# process must share. FILES_STORAGE=s3: django-storages' S3 backend (`pip install
# django-storages[s3]`; any S3-compatible service with AWS_S3_ENDPOINT_URL), credentials from
# boto3's own chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or an instance role). Any other
# value is a storage backend's dotted path, configured with FILES_STORAGE_OPTIONS (JSON).
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or VAR_DIR / "media")
FILES_STORAGE = env_str("FILES_STORAGE", "local")
if FILES_STORAGE not in ("local", "s3") and not _DOTTED_PATH.match(FILES_STORAGE):
    raise SettingsError(f"FILES_STORAGE must be local, s3 or a storage class's dotted path, got {FILES_STORAGE!r}")
# It may carry credentials (a storage's access key), hence a secret.
_files_options = env_json("FILES_STORAGE_OPTIONS", {}, secret=True)
if FILES_STORAGE == "local":
    _files_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": str(MEDIA_ROOT / "files"),
            "file_permissions_mode": 0o640,
            "directory_permissions_mode": 0o750,
            **_files_options,
        },
    }
elif FILES_STORAGE == "s3":
    _files_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("AWS_STORAGE_BUCKET_NAME"),
            "region_name": env_str("AWS_S3_REGION_NAME") or None,
            "endpoint_url": env_url("AWS_S3_ENDPOINT_URL", schemes=("http", "https")) or None,
            "location": env_str("FILES_S3_PREFIX", "tutor-files"),
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,
            **_files_options,
        },
    }
else:
    _files_storage = {"BACKEND": FILES_STORAGE, "OPTIONS": _files_options}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "tutor_files": _files_storage,
}
