"""The OneRoster 1.1 / 1.2 CSV import (docs/roster.md).

`bundle` opens a zip or a folder and streams the rows of its files; `rows` turns each row into
a checked record or a rejection; `apply` writes the records (created, updated, deactivated,
never deleted); `report` keeps the counts and the rejected rows. `roster_import` is the one
entry point, for `manage.py roster_import` and the import task alike.
"""
