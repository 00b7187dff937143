"""The open document: its draft tables, undo, files on disk (Qt-free or QtCore only)."""
