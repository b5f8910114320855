#!/usr/bin/env python3
"""Writes the APNG, BMP and ICO/CUR fixtures of CoderFixtureTests and their reference decodes.

    scripts/make-coder-fixtures.py [--out Tests/WebImageTests/Fixtures/coders]

Every fixture NAME.EXT comes with NAME.rgba: the straight-alpha RGBA8 pixels it must decode to,
all frames one after the other, and one line in manifest.json (size, frame count, delays in ms
as a browser plays them, loop count, how exact the comparison is, and whether Pillow's own
decode agreed).

- APNG: written here (struct + zlib) in every colour type and bit depth, with every dispose and
  blend operation, frame regions with offsets, IDAT and fdAT split over several chunks, delays
  with a 0 denominator, the default image in or out of the animation; one made by Debian's
  `apngasm` from PNG frames (when installed). References are composited here from the known
  samples by the APNG specification's rules and compared with Pillow's decode: Pillow departs
  from the specification in a few places (background disposal fills with black in modes
  without alpha, `over` blending of translucent pixels, 16-bit grey clamps, previous disposal of
  the first frame), and the manifest says where (`pillow: false`).
- BMP and ICO/CUR: written here (struct) for every depth and compression; the reference is
  Pillow's decode (Image.open(...).convert("RGBA")), except where noted: RLE deltas (skipped
  pixels are transparent in browsers, palette index 0 in Pillow, so the reference is written
  here), 5- and 6-bit channels (Pillow truncates v * 255 / 31, browsers round: `within1`), and
  CUR (Pillow's CUR reader ignores the AND mask: the reference is Pillow's ICO decode of the same
  entries).

Deterministic: running it again writes the same files. Installs Pillow if missing.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from PIL import Image
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image

MANIFEST = {}


def save(out, name, ext, data, width, height, frames, delays=None, loop=None, match="exact", pillow=None):
    with open(os.path.join(out, f"{name}.{ext}"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, f"{name}.rgba"), "wb") as f:
        for frame in frames:
            f.write(bytes(frame))
    entry = {"file": f"{name}.{ext}", "width": width, "height": height, "frames": len(frames), "match": match}
    if delays is not None:
        entry["delays"] = delays
    if loop is not None:
        entry["loop"] = loop
    if pillow is not None:
        entry["pillow"] = pillow
    MANIFEST[name] = entry


def pillow_frames(path):
    """Pillow's decode: every frame as straight RGBA bytes."""
    im = Image.open(path)
    frames = []
    for index in range(getattr(im, "n_frames", 1)):
        im.seek(index)
        frames.append(list(im.convert("RGBA").tobytes()))
    return frames, im


# MARK: - PNG / APNG writing

def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def pack_bits(values, bits):
    """Values of fewer than 8 bits packed most significant first, the last byte padded with 0."""
    out, acc, count = bytearray(), 0, 0
    for v in values:
        acc, count = (acc << bits) | v, count + bits
        if count == 8:
            out.append(acc)
            acc, count = 0, 0
    if count:
        out.append(acc << (8 - count))
    return bytes(out)


def pack_rows(samples, width, height, color_type, depth):
    """Filter-0 scanlines from per-pixel sample tuples (values already at `depth` bits)."""
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        if depth < 8:
            raw += pack_bits([samples[y * width + x][0] for x in range(width)], depth)
        else:
            for x in range(width):
                for c in range(channels):
                    v = samples[y * width + x][c]
                    raw += struct.pack(">H", v) if depth == 16 else bytes([v])
    return zlib.compress(bytes(raw), 9)


def split(data, pieces):
    step = max(1, (len(data) + pieces - 1) // pieces)
    return [data[i:i + step] for i in range(0, len(data), step)]


def write_apng(width, height, color_type, depth, frames, loop, plte=None, trns=None, default_image=None,
               idat_pieces=2, fdat_pieces=1, sequence_error=False, bad_fctl_crc=False, extra_frames_declared=0):
    """frames: list of dict(x, y, w, h, samples, num, den, dispose, blend)."""
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0))
    out += chunk(b"acTL", struct.pack(">II", len(frames) + extra_frames_declared, loop))
    if plte:
        out += chunk(b"PLTE", bytes(plte))
    if trns is not None:
        out += chunk(b"tRNS", bytes(trns))
    seq = 0

    def fctl(f):
        nonlocal seq
        data = struct.pack(">IIIIIHHBB", seq, f["w"], f["h"], f["x"], f["y"], f["num"], f["den"], f["dispose"], f["blend"])
        seq += 1
        c = chunk(b"fcTL", data)
        if bad_fctl_crc and seq == 2:
            c = c[:-1] + bytes([c[-1] ^ 0xFF])
        return c

    if default_image is not None:
        for piece in split(pack_rows(default_image, width, height, color_type, depth), idat_pieces):
            out += chunk(b"IDAT", piece)
    for index, f in enumerate(frames):
        out += fctl(f)
        data = pack_rows(f["samples"], f["w"], f["h"], color_type, depth)
        if index == 0 and default_image is None:
            for piece in split(data, idat_pieces):
                out += chunk(b"IDAT", piece)
            continue
        for piece in split(data, fdat_pieces):
            if sequence_error and index == len(frames) - 1:
                seq += 1
            out += chunk(b"fdAT", struct.pack(">I", seq) + piece)
            seq += 1
    out += chunk(b"IEND", b"")
    return out


def to_rgba(sample, color_type, depth, plte, trns):
    """Straight RGBA8 of one stored sample, as libspng and browsers expand it."""
    def eight(v):
        if depth == 16:
            return v >> 8
        return v * 255 // ((1 << depth) - 1)
    if color_type == 3:
        i = sample[0]
        a = trns[i] if trns is not None and i < len(trns) else 255
        return [plte[i * 3], plte[i * 3 + 1], plte[i * 3 + 2], a]
    if color_type == 0:
        g = eight(sample[0])
        a = 0 if trns is not None and sample[0] == struct.unpack(">H", bytes(trns))[0] else 255
        return [g, g, g, a]
    if color_type == 4:
        g = eight(sample[0])
        return [g, g, g, eight(sample[1])]
    if color_type == 2:
        rgb = [eight(v) for v in sample]
        a = 0 if trns is not None and tuple(sample) == struct.unpack(">HHH", bytes(trns)) else 255
        return rgb + [a]
    return [eight(v) for v in sample]


def composite(width, height, frames, color_type, depth, plte, trns):
    """The APNG specification's compositing, in straight alpha with exact 'over' arithmetic."""
    canvas = [[0, 0, 0, 0] for _ in range(width * height)]
    results = []
    for index, f in enumerate(frames):
        dispose = 1 if index == 0 and f["dispose"] == 2 else f["dispose"]
        saved = [list(canvas[(f["y"] + r) * width + f["x"] + c]) for r in range(f["h"]) for c in range(f["w"])]
        for r in range(f["h"]):
            for c in range(f["w"]):
                src = to_rgba(f["samples"][r * f["w"] + c], color_type, depth, plte, trns)
                p = (f["y"] + r) * width + f["x"] + c
                if f["blend"] == 0 or src[3] == 255:
                    canvas[p] = src
                elif src[3] > 0:
                    dst = canvas[p]
                    sa, da = src[3] / 255, dst[3] / 255
                    oa = sa + da * (1 - sa)
                    canvas[p] = [round((src[i] * sa + dst[i] * da * (1 - sa)) / oa) for i in range(3)] + [round(oa * 255)]
        results.append([v for px in canvas for v in px])
        if dispose == 1:
            for r in range(f["h"]):
                for c in range(f["w"]):
                    canvas[(f["y"] + r) * width + f["x"] + c] = [0, 0, 0, 0]
        elif dispose == 2:
            for r in range(f["h"]):
                for c in range(f["w"]):
                    canvas[(f["y"] + r) * width + f["x"] + c] = saved[r * f["w"] + c]
    return results


def delay_ms(num, den):
    ms = round(num * 1000 / (den or 100))
    return 100 if ms <= 10 else ms


W, H = 20, 14
REGIONS = [  # x, y, w, h, num, den, dispose, blend
    (0, 0, W, H, 1, 10, 0, 0),
    (4, 3, 9, 6, 0, 0, 1, 1),       # 0/0: 0 ms, played as 100 ms; background disposal; over
    (10, 5, 8, 7, 3, 0, 2, 0),      # 3/0: 30 ms; previous disposal; source
    (2, 8, 6, 5, 50, 1000, 0, 1),   # over, left as is
]


def sample_for(color_type, depth, x, y, frame, translucent):
    top = (1 << depth) - 1
    v = (x * 7 + y * 5 + frame * 11) % (top + 1)
    hole = (x + y + frame) % 3 == 0 and frame > 0
    alpha = ((x * 37 + y * 11) % 256 if translucent else (0 if hole else 255))
    alpha = alpha * 257 if depth == 16 else alpha
    if depth == 16:
        v = ((x * 7 + y * 5 + frame * 11) % 256) * 257
    if color_type == 0:
        return (v,)
    if color_type == 4:
        return (v, alpha)
    if color_type == 3:
        return (0 if hole else 1 + (x + y * 3 + frame) % 15,)
    rgb = tuple(((x * 13 + c * 70 + y * 3 + frame * 40) % 256) * (257 if depth == 16 else 1) for c in range(3))
    return rgb + (alpha,) if color_type == 6 else rgb


def apng_fixture(out, name, color_type, depth, plte=None, trns=None, translucent=False, default_apart=False,
                 regions=REGIONS, loop=3, fdat_pieces=1):
    frames = []
    for index, (x, y, w, h, num, den, dispose, blend) in enumerate(regions):
        samples = [sample_for(color_type, depth, x + c, y + r, index, translucent) for r in range(h) for c in range(w)]
        frames.append(dict(x=x, y=y, w=w, h=h, num=num, den=den, dispose=dispose, blend=blend, samples=samples))
    default = None
    if default_apart:
        default = [sample_for(color_type, depth, x, y, 9, translucent) for y in range(H) for x in range(W)]
    data = write_apng(W, H, color_type, depth, frames, loop, plte, trns, default, fdat_pieces=fdat_pieces)
    expected = composite(W, H, frames, color_type, depth, plte, trns)
    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        tmp.write(data)
        tmp.flush()
        try:
            pillow, _ = pillow_frames(tmp.name)
        except (ValueError, OSError, SyntaxError):
            pillow = None  # Pillow cannot decode it
    if default_apart and pillow:
        pillow = pillow[1:]  # Pillow shows the default image as an extra first frame
    save(out, name, "apng", data, W, H, expected, [delay_ms(r[4], r[5]) for r in regions], loop,
         match="within2" if translucent or (trns and color_type == 3 and any(0 < a < 255 for a in trns)) else "exact",
         pillow=pillow == expected)


def make_apng(out):
    palette = [v for i in range(16) for v in (i * 16, 255 - i * 12, (i * 53) % 256)]
    for depth in (1, 2, 4, 8, 16):
        apng_fixture(out, f"apng-grey{depth}", 0, depth)
    apng_fixture(out, "apng-grey8-trns", 0, 8, trns=struct.pack(">H", 12))
    apng_fixture(out, "apng-grey-alpha8", 4, 8)
    apng_fixture(out, "apng-grey-alpha16", 4, 16)
    apng_fixture(out, "apng-rgb8", 2, 8, fdat_pieces=3)
    apng_fixture(out, "apng-rgb8-trns", 2, 8, trns=struct.pack(">HHH", 0, 70, 140))
    apng_fixture(out, "apng-rgb16", 2, 16)
    apng_fixture(out, "apng-rgba8", 6, 8, fdat_pieces=4)
    apng_fixture(out, "apng-rgba16", 6, 16)
    apng_fixture(out, "apng-rgba8-translucent", 6, 8, translucent=True)
    apng_fixture(out, "apng-palette8-trns", 3, 8, plte=palette, trns=[0] + [255] * 7 + [128, 64])
    apng_fixture(out, "apng-palette4", 3, 4, plte=palette)
    apng_fixture(out, "apng-default-apart", 6, 8, default_apart=True, loop=0)
    # The first frame disposed to "previous" (counts as background) and then an "over" frame.
    first_previous = [(0, 0, W, H, 2, 100, 2, 0), (5, 5, 6, 6, 2, 100, 0, 1)]
    apng_fixture(out, "apng-first-previous", 6, 8, regions=first_previous, loop=1)
    make_broken_apng(out)
    make_apngasm(out)


def make_broken_apng(out):
    """Broken animation chunks: each decodes as its still image (the IDAT), as browsers show it."""
    frames = []
    for index, (x, y, w, h, num, den, dispose, blend) in enumerate(REGIONS):
        samples = [sample_for(6, 8, x + c, y + r, index, False) for r in range(h) for c in range(w)]
        frames.append(dict(x=x, y=y, w=w, h=h, num=num, den=den, dispose=dispose, blend=blend, samples=samples))
    still = [composite(W, H, frames[:1], 6, 8, None, None)[0]]
    outside = [dict(f) for f in frames]
    outside[2]["x"] = W - 2
    for name, data in [
        ("apng-broken-sequence", write_apng(W, H, 6, 8, frames, 0, sequence_error=True)),
        ("apng-broken-fctl-crc", write_apng(W, H, 6, 8, frames, 0, bad_fctl_crc=True)),
        ("apng-broken-missing-frames", write_apng(W, H, 6, 8, frames, 0, extra_frames_declared=2)),
        ("apng-broken-region", write_apng(W, H, 6, 8, outside, 0)),
    ]:
        save(out, name, "apng", data, W, H, still)


def make_apngasm(out):
    if shutil.which("apngasm") is None:
        print("apngasm not installed: apng-apngasm not written (apt-get install apngasm)", file=sys.stderr)
        return
    width, height = 24, 16
    expected = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(4):
            im = Image.new("RGBA", (width, height), (0, 0, 0, 0))
            px = im.load()
            for y in range(height):
                for x in range(width):
                    # A moving square over a still background with a transparent corner.
                    inside = index * 4 <= x < index * 4 + 8 and 4 <= y < 12
                    corner = x < 5 and y < 5
                    px[x, y] = (250, 40, 40, 255) if inside else (0, 0, 0, 0) if corner else (x * 10, y * 15, 128, 255)
            im.save(os.path.join(tmp, f"frame{index}.png"))
            expected.append(list(im.tobytes()))
        target = os.path.join(tmp, "anim.png")
        subprocess.run(["apngasm", target, os.path.join(tmp, "frame*.png"), "3", "20", "-l2"], check=True,
                       stdout=subprocess.DEVNULL)
        data = open(target, "rb").read()
        pillow, _ = pillow_frames(target)
    save(out, "apng-apngasm", "apng", data, width, height, expected, [150] * 4, 2, pillow=pillow == expected)


# MARK: - BMP

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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "Tests", "WebImageTests",
                                                      "Fixtures", "coders"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    make_apng(args.out)
    make_bmp(args.out)
    make_ico(args.out)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(MANIFEST, f, indent=1, sort_keys=True)
        f.write("\n")
    disagree = sorted(n for n, e in MANIFEST.items() if e.get("pillow") is False)
    print(f"{len(MANIFEST)} fixtures in {os.path.relpath(args.out)}; Pillow's decode differs from the reference for: "
          + ", ".join(disagree))


if __name__ == "__main__":
    main()
