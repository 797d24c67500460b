"""Maildir folders, flags and the path rule, kept in the shared `maildirs` library (the spam plugin reads them too)."""

from maildirs.folders import (
    SUBDIRS,
    Folder,
    PathRefused,
    checked_path,
    flags_of,
    folder_name,
    folders,
    is_maildir,
    layout_of,
    messages,
    unique_of,
)

__all__ = ["SUBDIRS", "Folder", "PathRefused", "checked_path", "flags_of", "folder_name", "folders", "is_maildir",
           "layout_of", "messages", "unique_of"]
