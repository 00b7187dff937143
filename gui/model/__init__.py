"""The open document (its draft tables, undo, files on disk) and the session the panels
observe (Qt-free or QtCore only)."""
