"""APNG fixtures: written with struct + zlib, referenced by the specification's compositing."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from .common import Image, pack_bits, pillow_frames, save


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


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


