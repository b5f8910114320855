#!/usr/bin/env python3
"""Writes fuzzing seeds whose fields sit at their type's limits, for scripts/fuzz.

    scripts/make-fuzz-seeds.py OUT_DIR

The committed fixtures are ordinary files; what traps arithmetic is what they never hold: long
animations with the longest delays (WebP's libwebp timestamps pass Int32.max after 129 frames of
2^24 - 1 ms), loop counts and counts at their limit, many TIFF pages, ICO directories with
thousands of entries, offsets and sizes of 2^32 - 1. libFuzzer mutates from these (every seed
stays under scripts/fuzz's 64 KB -max_len). Pillow (PyPI) writes the one WebP frame the
animations repeat; everything else is built byte by byte here. Deterministic.
"""
import io
import os
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image

out = sys.argv[1] if len(sys.argv) > 1 else "seeds"
os.makedirs(out, exist_ok=True)


def write(name, data):
    assert len(data) <= 65536, (name, len(data))
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def le24(v):
    return struct.pack("<I", v)[:3]


def riff_chunk(tag, payload):
    return tag + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")


def webp_animation(frames, delay, loops=0, canvas=(1, 1)):
    still = io.BytesIO()
    Image.new("RGBA", (1, 1), (10, 20, 30, 255)).save(still, "WEBP", lossless=True)
    vp8l = still.getvalue()[12:]  # the VP8L chunk
    anmf = riff_chunk(b"ANMF", le24(0) + le24(0) + le24(0) + le24(0) + le24(delay) + b"\0" + vp8l)
    body = (b"WEBP" + riff_chunk(b"VP8X", b"\x02\0\0\0" + le24(canvas[0] - 1) + le24(canvas[1] - 1))
            + riff_chunk(b"ANIM", b"\0\0\0\0" + struct.pack("<H", loops)) + anmf * frames)
    return b"RIFF" + struct.pack("<I", len(body)) + body


write("seed-webp-longest-delays.webp", webp_animation(200, 0xFFFFFF, loops=0xFFFF))
write("seed-webp-many-frames.webp", webp_animation(1200, 1))
write("seed-webp-huge-canvas.webp", webp_animation(1, 100, canvas=(1 << 24, 1 << 24)))


def gif_animation(frames, delay, loops=0xFFFF, rect=(0, 0, 1, 1)):
    data = b"GIF89a" + struct.pack("<HH", 1, 1) + b"\x80\0\0" + b"\0\0\0\xff\xff\xff"
    data += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\0"
    frame = b"\x21\xf9\x04\0" + struct.pack("<H", delay) + b"\0\0" + b"\x2c" + struct.pack("<HHHH", *rect) + b"\0\x02\x02\x4c\x01\0"
    return data + frame * frames + b";"


write("seed-gif-longest-delays.gif", gif_animation(2800, 0xFFFF))
write("seed-gif-far-frame.gif", gif_animation(2, 0xFFFF, rect=(0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF)))


def png_chunk(kind, body, length=None):
    return struct.pack(">I", len(body) if length is None else length) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def apng(frames, numerator, denominator, plays=0xFFFFFFFF, declared=None):
    raw = zlib.compress(b"\0\x0a\x14\x1e\xff")
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
    out += png_chunk(b"acTL", struct.pack(">II", frames if declared is None else declared, plays))
    sequence = 0
    for index in range(frames):
        out += png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, 1, 1, 0, 0, numerator, denominator, 0, 0))
        sequence += 1
        if index == 0:
            out += png_chunk(b"IDAT", raw)
        else:
            out += png_chunk(b"fdAT", struct.pack(">I", sequence) + raw)
            sequence += 1
    return out + png_chunk(b"IEND", b"")


write("seed-apng-longest-delays.apng", apng(600, 0xFFFF, 1))
write("seed-apng-declared-max.apng", apng(2, 0xFFFF, 0, declared=0xFFFFFFFF))
exif = b"MM\0\x2a\xff\xff\xff\xf0" + b"\xff\xff"
write("seed-png-extremes.png", b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 0x7FFFFFFF, 0x7FFFFFFF, 8, 6, 0, 0, 0))
      + png_chunk(b"eXIf", exif) + png_chunk(b"IDAT", zlib.compress(b"\0" * 5)) + png_chunk(b"IEND", b""))
write("seed-jpeg-extremes.jpg", b"\xff\xd8\xff\xe1" + struct.pack(">H", 2 + 6 + len(exif)) + b"Exif\0\0" + exif
      + b"\xff\xc0\0\x0b\x08\xff\xff\xff\xff\x01\x01\x11\0" + b"\xff\xfe\xff\xff\0\0\xff\xd9")


def tiff(pages, entries):
    """Little-endian TIFF of `pages` chained IFDs of (tag, type, count, value); value None: the pixel byte."""
    size = 2 + len(entries) * 12 + 4
    pixel = 8 + pages * size
    out = b"II*\0" + struct.pack("<I", 8)
    for page in range(pages):
        out += struct.pack("<H", len(entries))
        for tag, kind, count, value in sorted(entries):
            value = pixel if value is None else value
            out += struct.pack("<HHI", tag, kind, count) + (struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value))
        out += struct.pack("<I", 8 + (page + 1) * size if page + 1 < pages else 0)
    return out + b"\0\0\0\0"


grey = [(256, 4, 1, 1), (257, 4, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1), (273, 4, 1, None), (277, 3, 1, 1),
        (278, 4, 1, 1), (279, 4, 1, 1)]
write("seed-tiff-many-pages.tif", tiff(570, grey))  # as many as 64 KB hold
write("seed-tiff-huge-offsets.tif", tiff(2, [e if e[0] not in (273, 279, 278) else (e[0], 4, 1, 0xFFFFFFFF) for e in grey]))
write("seed-tiff-huge-size.tif", tiff(1, [e if e[0] not in (256, 257) else (e[0], 4, 1, 0xFFFFFFFF) for e in grey]))

dib = struct.pack("<IiiHHIIiiII", 40, 1, 2, 1, 32, 0, 0, 0, 0, 0, 0) + b"\x0a\x14\x1e\xff" + b"\0" * 4
count = (65536 - len(dib) - 6) // 16
directory = 6 + count * 16
write("seed-ico-many-entries.ico", struct.pack("<HHH", 0, 1, count)
      + b"".join(struct.pack("<BBBBHHII", 0, 0, 0, 0, 1, 32, len(dib) if i % 2 == 0 else 0xFFFFFFFF, directory if i % 3 else 0xFFFFFFFF)
                 for i in range(count)) + dib)
write("seed-bmp-extremes.bmp", b"BM" + struct.pack("<IIII", 0xFFFFFFFF, 0, 0xFFFFFFFF, 40)
      + struct.pack("<iiHHIIiiII", 0x7FFFFFFF, -0x7FFFFFFF, 1, 8, 1, 0, 0, 0, 0xFFFFFFFF, 0) + b"\0\x02\xff\xff\0\x01")
