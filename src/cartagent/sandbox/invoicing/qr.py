"""QR codes for invoices: a PNG of exactly the requested size that encodes a URL.

``segno`` makes the symbol; the PNG is written here (8-bit greyscale) so the image can be any
``width x height`` PayPal allows, with the square symbol centred on white.
"""

from __future__ import annotations

import struct
import zlib

import segno

QUIET_ZONE = 4  # modules of white border the QR standard asks for
WHITE = 0xFF
BLACK = 0x00


def qr_png(text: str, width: int, height: int) -> bytes:
    """A ``width x height`` PNG whose QR code decodes to ``text``."""
    qr = segno.make(text, error="m", micro=False)
    rows = [list(row) for row in qr.matrix_iter(scale=1, border=QUIET_ZONE)]
    modules = len(rows)
    scale = max(1, min(width, height) // modules)
    side = modules * scale
    left = max(0, (width - side) // 2)
    top = max(0, (height - side) // 2)
    blank = bytes([WHITE]) * width
    lines: list[bytes] = []
    for y in range(height):
        module_y = (y - top) // scale
        if y < top or module_y >= modules:
            lines.append(blank)
            continue
        line = bytearray(blank)
        for module_x, dark in enumerate(rows[module_y]):
            if dark:
                start = left + module_x * scale
                end = min(start + scale, width)
                line[start:end] = bytes([BLACK]) * (end - start)
        lines.append(bytes(line))
    return _png(width, height, lines)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(width: int, height: int, lines: list[bytes]) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    raw = b"".join(b"\x00" + line for line in lines)  # filter type 0 on every row
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )
