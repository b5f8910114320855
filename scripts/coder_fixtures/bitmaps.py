"""BMP and ICO/CUR fixtures: written with struct, referenced by Pillow's decode."""
import os
import struct

from .common import Image, pack_bits, pillow_frames, save


def bmp_file(info, palette, pixels):
    offset = 14 + len(info) + len(palette)
    return b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + info + palette + pixels


def info_header(width, height, bits, compression=0, size=40, colors=0, masks=None, image_size=0):
    header = struct.pack("<IiiHHIIiiII", size, width, height, 1, bits, compression, image_size, 2835, 2835, colors, 0)
    if size > 40:
        r, g, b, a = masks or (0, 0, 0, 0)
        header += struct.pack("<IIII", r, g, b, a)
        header += b"\0" * (size - len(header))
    return header


def rows(width, height, bits, value, top_down=False):
    """Packed rows (bottom-up unless top_down) of values value(x, y) at `bits` bits per pixel."""
    out = bytearray()
    stride = (width * bits + 31) // 32 * 4
    order = range(height) if top_down else range(height - 1, -1, -1)
    for y in order:
        row = bytearray()
        if bits < 8:
            row += pack_bits([value(x, y) for x in range(width)], bits)
        else:
            for x in range(width):
                row += value(x, y)
        out += row + b"\0" * (stride - len(row))
    return bytes(out)


def rle(width, height, index, four):
    """RLE8/RLE4 with encoded runs and absolute runs, full rows, end of line and end of bitmap."""
    out = bytearray()
    for y in range(height - 1, -1, -1):
        values = [index(x, y) for x in range(width)]
        x = 0
        while x < width:
            run = 1
            while x + run < width and run < 255 and values[x + run] == values[x]:
                run += 1
            if run >= 3 or width - x < 3:
                out += bytes([run, values[x] * 17 if four else values[x]])
                x += run
            else:
                n = min(8, width - x)
                chunk = values[x:x + n]
                if four:
                    packed = bytes((chunk[i] << 4) | (chunk[i + 1] if i + 1 < n else 0) for i in range(0, n, 2))
                else:
                    packed = bytes(chunk)
                out += bytes([0, n]) + packed + (b"\0" if len(packed) % 2 else b"")
                x += n
        out += b"\0\0"
    return bytes(out + b"\0\1")


def make_bmp(out):
    w, h = 13, 9
    pal16 = b"".join(bytes([(i * 53) % 256, 255 - i * 15, i * 16, 0]) for i in range(16))
    pal256 = b"".join(bytes([i, (i * 7) % 256, 255 - i, 0]) for i in range(256))
    pal2 = bytes([30, 60, 90, 0, 240, 200, 10, 0])
    idx = lambda m: (lambda x, y: (x * 3 + y * 5) % m)
    files = {
        "bmp-1bit": bmp_file(info_header(w, h, 1, colors=2), pal2, rows(w, h, 1, idx(2))),
        "bmp-4bit": bmp_file(info_header(w, h, 4, colors=16), pal16, rows(w, h, 4, idx(16))),
        "bmp-8bit": bmp_file(info_header(w, h, 8), pal256, rows(w, h, 8, lambda x, y: bytes([(x * 19 + y * 31) % 256]))),
        "bmp-8bit-topdown": bmp_file(info_header(w, -h, 8), pal256,
                                     rows(w, h, 8, lambda x, y: bytes([(x * 19 + y * 31) % 256]), top_down=True)),
        "bmp-rle8": bmp_file(info_header(w, h, 8, compression=1, colors=16), pal256[:64],
                             rle(w, h, lambda x, y: (x // 4 + y) % 16, False)),
        "bmp-rle4": bmp_file(info_header(w, h, 4, compression=2, colors=16), pal16,
                             rle(w, h, lambda x, y: (x // 3 + y) % 16, True)),
        "bmp-16bit-555": bmp_file(info_header(w, h, 16), b"",
                                  rows(w, h, 16, lambda x, y: struct.pack("<H", ((x * 2) << 10) | ((y * 3) << 5) | (x + y)))),
        "bmp-16bit-565": bmp_file(info_header(w, h, 16, compression=3) + struct.pack("<III", 0xF800, 0x07E0, 0x001F), b"",
                                  rows(w, h, 16, lambda x, y: struct.pack("<H", ((x * 2) << 11) | ((y * 7) << 5) | (x + y)))),
        "bmp-24bit": bmp_file(info_header(w, h, 24), b"", rows(w, h, 24, lambda x, y: bytes([x * 19, y * 28, (x * y) % 256]))),
        "bmp-24bit-topdown": bmp_file(info_header(w, -h, 24), b"",
                                      rows(w, h, 24, lambda x, y: bytes([x * 19, y * 28, (x * y) % 256]), top_down=True)),
        "bmp-32bit-bgrx": bmp_file(info_header(w, h, 32), b"", rows(w, h, 32, lambda x, y: bytes([x * 19, y * 28, 77, 0]))),
        "bmp-32bit-v5-alpha": bmp_file(info_header(w, h, 32, compression=3, size=124,
                                                   masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000)), b"",
                                       rows(w, h, 32, lambda x, y: bytes([x * 19, y * 28, 77, 255 if x % 3 else 0]))),
        "bmp-core-8bit": b"BM" + struct.pack("<IHHI", 0, 0, 0, 14 + 12 + 256 * 3) + struct.pack("<IHHHH", 12, w, h, 1, 8)
        + b"".join(bytes([i, 255 - i, (i * 3) % 256]) for i in range(256))
        + rows(w, h, 8, lambda x, y: bytes([(x * 11 + y * 13) % 256])),
    }
    for name, data in files.items():
        path = os.path.join(out, name + ".bmp")
        with open(path, "wb") as f:
            f.write(data)
        frames, _ = pillow_frames(path)
        # 5- and 6-bit channels: Pillow truncates v * 255 / 31, browsers (and WebImage) round it.
        save(out, name, "bmp", data, w, h, frames[:1], match="within1" if "16bit" in name else "exact")
    make_rle_delta(out, w, h, pal16)


def make_rle_delta(out, w, h, pal16):
    """RLE8 with a delta move and an early end of bitmap: unreached pixels are transparent."""
    pal = pal16 + b"\0" * (256 * 4 - len(pal16))
    stream = bytes([w, 3, 0, 0]) + bytes([0, 2, 4, 2]) + bytes([3, 5]) + bytes([0, 1])
    data = bmp_file(info_header(w, h, 8, compression=1), pal, stream)
    canvas = [[0, 0, 0, 0] for _ in range(w * h)]
    color = lambda i: [pal16[i * 4 + 2], pal16[i * 4 + 1], pal16[i * 4], 255]
    for x in range(w):  # bottom row (stored first) is index 3
        canvas[(h - 1) * w + x] = color(3)
    for x in range(4, 7):  # after the delta (+4, +2): row 2 from the bottom, from x = 4
        canvas[(h - 1 - 3) * w + x] = color(5)
    save(out, "bmp-rle8-delta", "bmp", data, w, h, [[v for p in canvas for v in p]], pillow=False)


# MARK: - ICO / CUR

def dib_entry(width, height, bits, pixel, mask, palette=b""):
    """A bitmap entry: BITMAPINFOHEADER with doubled height, palette, XOR rows, AND mask rows."""
    header = info_header(width, height * 2, bits, colors=len(palette) // 4)
    return header + palette + rows(width, height, bits, pixel) + rows(width, height, 1, mask)


def icon_file(kind, entries):
    out = struct.pack("<HHH", 0, kind, len(entries))
    offset = 6 + 16 * len(entries)
    blobs = b""
    for width, height, bits, blob in entries:
        out += struct.pack("<BBBBHHII", width % 256, height % 256, 0, 0, 1, bits, len(blob), offset + len(blobs))
        blobs += blob
    return out + blobs


def make_ico(out):
    small_png = Image.new("RGBA", (16, 16))
    small_png.putdata([(x * 15, y * 15, 200, 255 if (x + y) % 5 else 0) for y in range(16) for x in range(16)])
    path = os.path.join(out, "_tmp.png")
    small_png.save(path)
    png16 = open(path, "rb").read()
    os.remove(path)
    mask = lambda x, y: 1 if (x - 12) ** 2 + (y - 12) ** 2 > 140 else 0
    pal = b"".join(bytes([i * 16, 255 - i * 16, (i * 40) % 256, 0]) for i in range(16))
    entry8 = dib_entry(24, 24, 4, lambda x, y: (x + y) % 16, mask, pal)
    entry24 = dib_entry(32, 32, 24, lambda x, y: bytes([x * 8, y * 8, 100]), lambda x, y: 1 if x < 4 or y < 4 else 0)
    entry32 = dib_entry(20, 20, 32, lambda x, y: bytes([x * 12, y * 12, 50, (x * 13) % 256]), lambda x, y: 1)
    files = {
        "ico-png-and-bitmaps": (1, [(16, 16, 32, png16), (24, 24, 4, entry8), (32, 32, 24, entry24)], None),
        "ico-4bit-mask": (1, [(24, 24, 4, entry8)], None),
        "ico-32bit-alpha": (1, [(20, 20, 32, entry32)], None),
        "cur-24bit-mask": (2, [(32, 32, 0, entry24)], None),
    }
    for name, (kind, entries, _) in files.items():
        data = icon_file(kind, entries)
        ext = "cur" if kind == 2 else "ico"
        path = os.path.join(out, f"{name}.{ext}")
        with open(path, "wb") as f:
            f.write(data)
        if kind == 2:
            # Pillow's CUR reader ignores the AND mask; its ICO reader of the same entries applies it.
            path = os.path.join(out, "_tmp.ico")
            with open(path, "wb") as f:
                f.write(icon_file(1, entries))
        frames, im = pillow_frames(path)
        if kind == 2:
            os.remove(path)
        save(out, name, ext, data, im.size[0], im.size[1], frames[:1])
    # The same icon asked for at 20 px: the 24 px entry is the nearest at least that large.
    data = icon_file(1, [(16, 16, 32, png16), (24, 24, 4, entry8), (32, 32, 24, entry24)])
    im = Image.open(os.path.join(out, "ico-png-and-bitmaps.ico"))
    im.size = (24, 24)
    save(out, "ico-nearest-24", "ico", data, 24, 24, [list(im.convert("RGBA").tobytes())])


