#!/usr/bin/env python3
"""The peer for the smart crop (issue 29): `webimage serve`'s `gravity=sm` against pyvips's
`smartcrop(interesting="attention")` (libvips), on generated pictures with one salient object.

    scripts/peers/peer-smartcrop.py [BINARY] [--count 60] [--runs 3] [--seed 29] [--keep DIR]

BINARY is the webimage executable (default .build/release/webimage; timings only mean something
in release, success rates are the same in debug). The script writes COUNT PNG pictures (several
picture and crop aspect ratios; plain, gradient, noise, striped and cluttered backgrounds, none of
them vivid; one object each — a face-like oval, a vivid star, a flower or a checked blob — placed
off-centre, so that a centre crop tends to miss it), starts `BINARY serve` on 127.0.0.1 (a free
port, `--local-root` the pictures, result cache off) and crops each picture to the largest window
of the crop's aspect ratio, at scale 1, with both tools.

Success, defined precisely: the object's pixels are known from how it was drawn (a mask, not its
bounding box); a crop *holds* the object when (object pixels inside the crop) / (object pixels)
>= THRESHOLD (0.8 by default). The crop's position is found by matching the returned pixels
against the picture (both tools return exact, unscaled pixels of PNG sources at this size). The
rate of each tool, and of a centre crop for reference, is printed with the pictures each missed.

Cost: each picture is also rendered as a 400-pixel (long side) cover thumbnail with `gravity=ce`
and `gravity=sm`, RUNS times each, alternated; printed are the sums over the pictures of each
one's median `process` stage and of its whole render (decode + process + encode), both from the
server's `Server-Timing` header, and the ratio sm / ce. pyvips's `attention` against its
`centre` is timed too (load + crop + resize + PNG, once each, in this process), for reference. Needs numpy, Pillow and pyvips
(installed with pip if missing).
"""
import argparse
import colorsys
import io
import math
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

try:
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter
    import pyvips
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "numpy", "Pillow", "pyvips"], check=True)
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter
    import pyvips

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PICTURE_SIZES = [(1200, 800), (800, 1200), (1000, 1000), (1600, 900), (900, 1600), (1500, 600)]
CROP_ASPECTS = [(1, 1), (16, 9), (9, 16), (4, 3), (3, 4), (2, 1), (1, 2)]


# --- pictures ---------------------------------------------------------------------------------

def background(rng, nrng, width, height):
    """A low-saturation background: plain (with sensor-like noise), a gradient, blurred noise or
    stripes. Returns (kind, uint8 array height x width x 3)."""
    kind = rng.choice(["plain", "gradient", "noise", "stripes", "clutter"])
    base = np.array([rng.randrange(60, 200)] * 3, dtype=np.float32) + np.array([rng.randrange(-15, 16) for _ in range(3)])
    if kind == "plain":
        pixels = np.broadcast_to(base, (height, width, 3)) + nrng.normal(0, 3, (height, width, 1))
    elif kind == "gradient":
        other = base + np.array([rng.randrange(-60, 61)] * 3) + np.array([rng.randrange(-10, 11) for _ in range(3)])
        t = np.linspace(0, 1, height if rng.random() < 0.5 else width, dtype=np.float32)
        t = t[:, None, None] if t.shape[0] == height else t[None, :, None]
        pixels = base * (1 - t) + other * t + nrng.normal(0, 3, (height, width, 1))
    elif kind == "noise":
        small = nrng.normal(0, 1, (max(2, height // 8), max(2, width // 8))).astype(np.float32)
        grain = np.asarray(Image.fromarray(((small + 3) * 40).clip(0, 255).astype(np.uint8)).resize((width, height), Image.BICUBIC), dtype=np.float32)
        pixels = base + (grain[:, :, None] - 120) * 0.35 + nrng.normal(0, 6, (height, width, 1))
    elif kind == "clutter":
        # Blurred low-saturation shapes of every size: a busy scene with nothing vivid in it.
        canvas = Image.new("RGB", (width, height), tuple(int(c) for c in base.clip(0, 255)))
        d = ImageDraw.Draw(canvas)
        for _ in range(120):
            x, y, w, h = rng.randrange(width), rng.randrange(height), rng.randrange(10, width // 3), rng.randrange(10, height // 3)
            v = rng.randrange(40, 220)
            d.ellipse([x - w // 2, y - h // 2, x + w // 2, y + h // 2], fill=(v + rng.randrange(-12, 13), v + rng.randrange(-12, 13), v + rng.randrange(-12, 13)))
        pixels = np.asarray(canvas.filter(ImageFilter.GaussianBlur(2)), dtype=np.float32) + nrng.normal(0, 3, (height, width, 1))
    else:
        period = rng.uniform(12, 60)
        x = np.arange(width, dtype=np.float32)[None, :] + np.arange(height, dtype=np.float32)[:, None] * rng.uniform(-0.5, 0.5)
        bands = np.sin(x * 2 * math.pi / period)[:, :, None]
        pixels = base + bands * rng.uniform(10, 30) + nrng.normal(0, 4, (height, width, 1))
    return kind, np.clip(pixels, 0, 255).astype(np.uint8)


def vivid(rng):
    h = rng.random()
    r, g, b = [int(255 * c) for c in colorsys.hsv_to_rgb(h, rng.uniform(0.75, 1), rng.uniform(0.75, 1))]
    return (r, g, b, 255)


def draw_object(rng, size):
    """One salient object on a transparent size x size layer. Returns (kind, RGBA PIL image)."""
    layer = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    kind = rng.choice(["face", "star", "flower", "checks"])
    s = size
    if kind == "face":
        skin = rng.choice([(241, 194, 167), (224, 172, 140), (198, 134, 100), (141, 85, 60), (236, 188, 180)])
        d.ellipse([s * 0.05, s * 0.12, s * 0.95, s * 0.98], fill=skin + (255,))
        d.pieslice([s * 0.02, s * 0.0, s * 0.98, s * 0.7], 180, 360, fill=(40, 28, 20, 255))  # hair
        for ex in (0.32, 0.68):
            d.ellipse([s * (ex - 0.09), s * 0.45, s * (ex + 0.09), s * 0.55], fill=(250, 250, 250, 255))
            d.ellipse([s * (ex - 0.04), s * 0.46, s * (ex + 0.04), s * 0.54], fill=(40, 30, 30, 255))
        d.polygon([(s * 0.5, s * 0.55), (s * 0.44, s * 0.7), (s * 0.56, s * 0.7)], fill=tuple(max(c - 40, 0) for c in skin) + (255,))
        d.arc([s * 0.33, s * 0.68, s * 0.67, s * 0.85], 20, 160, fill=(150, 40, 40, 255), width=max(2, s // 30))
    elif kind == "star":
        points = []
        spikes = rng.randrange(5, 9)
        for k in range(spikes * 2):
            radius = s * (0.48 if k % 2 == 0 else 0.22)
            angle = math.pi * k / spikes + rng.uniform(-0.1, 0.1)
            points.append((s / 2 + radius * math.cos(angle), s / 2 + radius * math.sin(angle)))
        d.polygon(points, fill=vivid(rng))
        inner = vivid(rng)
        for k in range(0, s, max(4, s // 12)):
            d.line([(k, 0), (0, k)], fill=inner, width=max(1, s // 40))
        mask = Image.new("L", (s, s), 0)
        ImageDraw.Draw(mask).polygon(points, fill=255)
        layer.putalpha(mask)
    elif kind == "flower":
        petal, heart = vivid(rng), (250, 210, 30, 255)
        for k in range(rng.randrange(5, 9)):
            a = 2 * math.pi * k / 7
            cx, cy = s / 2 + s * 0.27 * math.cos(a), s / 2 + s * 0.27 * math.sin(a)
            d.ellipse([cx - s * 0.2, cy - s * 0.2, cx + s * 0.2, cy + s * 0.2], fill=petal, outline=(60, 20, 40, 255), width=max(1, s // 60))
        d.ellipse([s * 0.36, s * 0.36, s * 0.64, s * 0.64], fill=heart, outline=(90, 60, 0, 255), width=max(1, s // 50))
    else:
        a, b = vivid(rng), vivid(rng)
        step = max(3, s // rng.randrange(6, 14))
        for y in range(0, s, step):
            for x in range(0, s, step):
                d.rectangle([x, y, x + step - 1, y + step - 1], fill=a if (x // step + y // step) % 2 == 0 else b)
        mask = Image.new("L", (s, s), 0)
        ImageDraw.Draw(mask).ellipse([0, s * 0.1, s - 1, s * 0.9], fill=255)
        layer.putalpha(mask)
    return kind, layer


def window(width, height, aspect):
    """The largest window of `aspect` (w, h) inside the picture, as (w, h)."""
    aw, ah = aspect
    if aw * height >= ah * width:
        return width, max(1, round(width * ah / aw))
    return max(1, round(height * aw / ah)), height


def make_picture(index, seed, directory):
    """Picture `index`: writes it, returns its description and object mask."""
    rng = random.Random(seed * 1000 + index)
    nrng = np.random.default_rng(seed * 1000 + index)
    while True:
        width, height = rng.choice(PICTURE_SIZES)
        aspect = rng.choice(CROP_ASPECTS)
        cw, ch = window(width, height, aspect)
        # A crop that leaves at least a fifth of the picture out on its free axis.
        if cw <= width * 0.8 or ch <= height * 0.8:
            break
    bg_kind, pixels = background(rng, nrng, width, height)
    # The object: a fifth to two fifths of the window's shorter side.
    size = int(min(cw, ch) * rng.uniform(0.2, 0.4))
    obj_kind, layer = draw_object(rng, size)

    def place(total, keep):
        # Off-centre along an axis with room: its centre in the outer part, beside the centred window.
        free = total - keep
        if free < total * 0.1:
            return rng.randrange(0, total - size + 1)
        low = size // 2 + int(total * 0.02)
        high = max(low, free // 2 + size // 4)
        centre = rng.randrange(low, high + 1)
        if rng.random() < 0.5:
            centre = total - centre
        return min(max(centre - size // 2, 0), total - size)

    ox, oy = place(width, cw), place(height, ch)
    picture = Image.fromarray(pixels, "RGB")
    picture.paste(layer, (ox, oy), layer)
    mask = np.zeros((height, width), dtype=bool)
    mask[oy:oy + size, ox:ox + size] = np.asarray(layer)[:, :, 3] > 127
    name = f"pic-{index:03d}.png"
    picture.save(os.path.join(directory, name), compress_level=1)
    return {"name": name, "width": width, "height": height, "window": (cw, ch), "aspect": aspect,
            "background": bg_kind, "object": obj_kind, "object_at": (ox, oy, size), "mask": mask}


# --- measuring -----------------------------------------------------------------------------------

def locate(source, crop):
    """Where the `crop` (an exact, unscaled part of `source`) was taken: (x, y) of its top left,
    the offset whose pixels differ least from the crop on 24 sampled rows and columns."""
    sh, sw = source.shape[:2]
    ch, cw = crop.shape[:2]
    rows = np.linspace(0, ch - 1, min(ch, 24)).astype(int)
    cols = np.linspace(0, cw - 1, min(cw, 24)).astype(int)
    sample = crop[rows][:, cols].astype(np.int16)
    best, where = None, (0, 0)
    for y in range(sh - ch + 1):
        for x in range(sw - cw + 1):
            diff = np.abs(source[y + rows][:, x + cols].astype(np.int16) - sample).mean()
            if best is None or diff < best:
                best, where = diff, (x, y)
                if diff == 0:
                    return where
    return where


def held(mask, x, y, w, h):
    """Object pixels inside the crop / object pixels."""
    return mask[y:y + h, x:x + w].sum() / max(1, mask.sum())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(base, name, query):
    url = f"{base}/img?url={urllib.parse.quote('local:///' + name, safe='')}&{query}"
    with urllib.request.urlopen(url, timeout=120) as reply:
        return reply.read(), reply.headers.get("Server-Timing", "")


def stages(header):
    """The Server-Timing durations in milliseconds, by stage name."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"(\w+);dur=([0-9.]+)", header)}


def decode_png(data):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?", default=os.path.join(ROOT, ".build", "release", "webimage"))
    parser.add_argument("--count", type=int, default=60, help="pictures (at least 50 for the issue's measure)")
    parser.add_argument("--runs", type=int, default=3, help="timed renders per picture and gravity")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--keep", help="write the pictures and crops here and keep them")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no webimage binary at {args.binary}: build it (swift build -c release --product webimage) or pass its path")

    directory = args.keep or tempfile.mkdtemp(prefix="webimage-smartcrop.")
    os.makedirs(directory, exist_ok=True)
    pictures = [make_picture(i, args.seed, directory) for i in range(args.count)]

    port = free_port()
    serve = subprocess.Popen([args.binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--local-root", directory,
                              "--result-memory-mb", "0", "--log-level", "error"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                if urllib.request.urlopen(base + "/health", timeout=2).status == 200:
                    break
            except OSError:
                if time.time() > deadline or serve.poll() is not None:
                    sys.exit("webimage serve did not start")
                time.sleep(0.2)

        results = {"webimage sm": [], "pyvips attention": [], "centre": []}
        misses = {k: [] for k in results}
        for p in pictures:
            path = os.path.join(directory, p["name"])
            source = np.asarray(Image.open(path).convert("RGB"))
            cw, ch = p["window"]
            data, _ = get(base, p["name"], f"w={cw}&h={ch}&fit=cover&gravity=sm&format=png")
            ours = decode_png(data)
            assert ours.shape[:2] == (ch, cw), f"{p['name']}: webimage answered {ours.shape[1]}x{ours.shape[0]}, not {cw}x{ch}"
            vips = pyvips.Image.new_from_file(path).smartcrop(cw, ch, interesting="attention").numpy()[:, :, :3]
            spots = {"webimage sm": locate(source, ours), "pyvips attention": locate(source, vips),
                     "centre": ((p["width"] - cw) // 2, (p["height"] - ch) // 2)}
            for tool, (x, y) in spots.items():
                fraction = held(p["mask"], x, y, cw, ch)
                results[tool].append(fraction)
                if fraction < args.threshold:
                    misses[tool].append(f"{p['name']} ({p['object']} on {p['background']}, {p['width']}x{p['height']} -> "
                                        f"{cw}x{ch}, {fraction:.2f})")
            if args.keep:
                Image.fromarray(ours).save(os.path.join(directory, "sm-" + p["name"]))
                Image.fromarray(vips).save(os.path.join(directory, "vips-" + p["name"]))

        print(f"{len(pictures)} pictures; a crop holds the object when >= {args.threshold:.0%} of its pixels are inside")
        for tool, fractions in results.items():
            hits = sum(f >= args.threshold for f in fractions)
            print(f"  {tool:18} {hits:3}/{len(fractions)} = {hits / len(fractions):6.1%}   mean fraction held {statistics.mean(fractions):.3f}")
        for tool in ("webimage sm", "pyvips attention"):
            for line in misses[tool]:
                print(f"    {tool} missed {line}")

        # Cost: a 400-pixel cover thumbnail, ce against sm, alternated.
        totals = {"ce": {"process": 0.0, "render": 0.0}, "sm": {"process": 0.0, "render": 0.0}}
        for p in pictures:
            cw, ch = p["window"]
            scale = 400 / max(cw, ch)
            tw, th = max(1, round(cw * scale)), max(1, round(ch * scale))
            samples = {"ce": [], "sm": []}
            for _ in range(args.runs):
                for gravity in ("ce", "sm"):
                    _, timing = get(base, p["name"], f"w={tw}&h={th}&fit=cover&gravity={gravity}&format=png")
                    t = stages(timing)
                    samples[gravity].append((t.get("process", 0.0), t.get("decode", 0.0) + t.get("process", 0.0) + t.get("encode", 0.0)))
            for gravity, values in samples.items():
                totals[gravity]["process"] += statistics.median(v[0] for v in values)
                totals[gravity]["render"] += statistics.median(v[1] for v in values)
        print(f"cost, {args.binary}: 400-px cover thumbnails, median of {args.runs} per picture, summed")
        for stage in ("process", "render"):
            ce, sm = totals["ce"][stage], totals["sm"][stage]
            print(f"  {stage:8} ce {ce:9.1f} ms   sm {sm:9.1f} ms   sm/ce {sm / ce if ce else float('nan'):.3f} ({(sm / ce - 1) if ce else float('nan'):+.1%})")

        vips_times = {"centre": [], "attention": []}
        for p in pictures:
            path = os.path.join(directory, p["name"])
            cw, ch = p["window"]
            for interesting in ("centre", "attention"):
                start = time.perf_counter()
                pyvips.Image.new_from_file(path).smartcrop(cw, ch, interesting=interesting).resize(400 / max(cw, ch)).write_to_buffer(".png")
                vips_times[interesting].append((time.perf_counter() - start) * 1000)
        c, a = sum(vips_times["centre"]), sum(vips_times["attention"])
        print(f"  pyvips {pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}), whole load+crop+resize+png, once each: "
              f"centre {c:.1f} ms, attention {a:.1f} ms, attention/centre {a / c:.3f}")
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
