"""Pictures as file contents: every image the window saves (3D view, plots, window
grabs) is encoded in memory here and written by the one writer of every output,
`core.io.atomic.write_atomically` (a failed write is an error and the old file stays).
"""
from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QImage

__all__ = ["encode_image"]


def encode_image(image: QImage, fmt: str = "png", quality: int = -1) -> bytes:
    """`image` as the bytes of a file of type `fmt` ("png", "jpg", ...; Qt's quality
    0-100, -1 its default); ValueError if Qt cannot encode it."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if image.isNull() or not image.save(buffer, fmt, quality):
        raise ValueError(f"Qt could not encode the image as {fmt}")
    buffer.close()
    return bytes(data)
