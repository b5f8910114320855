#!/usr/bin/env python3
"""The corpus, the Python peers and the measurement of scripts/peers/peer-thumbs (run by it, in its venv).

    peer_thumbs.py corpus DIR --mode default|p2 [--count K]   photo-like JPEGs + manifest.json
    peer_thumbs.py pillow URLS OUT [--processes 2]            urllib + Pillow draft/thumbnail
    peer_thumbs.py vips URLS OUT [--threads 2] [--requests]   urllib (or requests) + thumbnail_buffer
    peer_thumbs.py limit DIR OUT [--processes 2]              decode limit: no network, files in memory
    peer_thumbs.py bench --mode … --runs N --binary B --work W --urls U --corpus C --venv V

Every peer writes 256-pixel JPEG thumbnails (inside 256 × 256, quality 85, 4:2:0) into OUT.
"""
import argparse
import io
import json
import math
import multiprocessing as mp
import os
import random
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

BOX, QUALITY = 256, 85


# ---- corpus ---------------------------------------------------------------------------------
def corpus_sizes(mode, count):
    """(width, height) of each source: 4000 × 3000 (default), or 1-12 MP of varied shapes (p2)."""
    if mode == "default":
        return [(4000, 3000)] * count
    rng = random.Random(15)
    aspects = [4 / 3, 3 / 2, 16 / 9, 1.0, 3 / 4, 2 / 3, 9 / 16]
    sizes = []
    for i in range(count):
        megapixels = 1 + 11 * i / max(count - 1, 1)
        aspect = rng.choice(aspects)
        w = round(math.sqrt(megapixels * 1e6 * aspect))
        sizes.append((w, round(megapixels * 1e6 / w)))
    rng.shuffle(sizes)
    return sizes


def photo(job):
    """Gradients, blurred shapes and sensor-like noise: JPEG sizes like a camera's (≈ 3 MB at 12 MP)."""
    from PIL import Image, ImageChops, ImageDraw, ImageFilter
    path, w, h, seed = job
    rng = random.Random(seed)
    g = Image.linear_gradient("L").resize((w, h), Image.BILINEAR)
    r = Image.radial_gradient("L").resize((w, h), Image.BILINEAR)
    base = Image.merge("RGB", (g, r, g.transpose(Image.FLIP_TOP_BOTTOM)))
    sw, sh = max(w // 4, 8), max(h // 4, 8)
    layer = Image.new("RGB", (sw, sh), tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(layer)
    for _ in range(rng.randrange(40, 120)):
        x, y, s = rng.randrange(sw), rng.randrange(sh), rng.randrange(4, max(sw // 3, 5))
        fill = tuple(rng.randrange(256) for _ in range(3))
        if rng.random() < 0.5:
            draw.ellipse([x, y, x + s, y + rng.randrange(4, s + 5)], fill=fill)
        else:
            draw.polygon([(x, y), (x + rng.randrange(-s, s), y + s), (x + s, y + rng.randrange(-s, s))], fill=fill)
    layer = layer.filter(ImageFilter.GaussianBlur(1.5)).resize((w, h), Image.BICUBIC)
    image = Image.blend(base, layer, 0.7)
    noise = Image.merge("RGB", [Image.effect_noise((w, h), 8) for _ in range(3)])
    ImageChops.add(image, noise, 1.0, -128).save(path, "JPEG", quality=90)
    return os.path.getsize(path)


def make_corpus(directory, mode, count):
    os.makedirs(directory, exist_ok=True)
    sizes = corpus_sizes(mode, count)
    jobs = [(os.path.join(directory, f"img-{i:03d}.jpg"), w, h, 1000 + i) for i, (w, h) in enumerate(sizes)]
    with mp.get_context("fork").Pool(2) as pool:
        total = sum(pool.imap_unordered(photo, jobs))
    manifest = [{"name": os.path.basename(p), "width": w, "height": h} for p, w, h, _ in jobs]
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    print(f"corpus: {count} JPEGs, {total / 1e6:.0f} MB", file=sys.stderr)


# ---- peers ----------------------------------------------------------------------------------
def urls_and_outputs(urls_file, out):
    urls = [u.strip() for u in open(urls_file) if u.strip()]
    return [(u, os.path.join(out, os.path.basename(u))) for u in urls]


def pillow_thumbnail(data, path):
    from PIL import Image
    with Image.open(io.BytesIO(data)) as image:
        image.draft("RGB", (BOX, BOX))   # libjpeg DCT scaling
        image.thumbnail((BOX, BOX))      # Pillow's defaults: bicubic, reducing_gap 2.0
        image.save(path, "JPEG", quality=QUALITY)


def pillow_one(job):
    url, path = job
    pillow_thumbnail(urllib.request.urlopen(url, timeout=60).read(), path)


def pillow_peer(args):
    with mp.get_context("fork").Pool(args.processes) as pool:
        for _ in pool.imap_unordered(pillow_one, urls_and_outputs(args.urls, args.out)):
            pass


def vips_peer(args):
    os.environ["VIPS_CONCURRENCY"] = "1"  # one libvips thread per pool thread: the pool is the concurrency
    import pyvips
    local = threading.local()

    def download(url):
        if not args.requests:
            return urllib.request.urlopen(url, timeout=60).read()
        import requests
        if not hasattr(local, "session"):
            local.session = requests.Session()
        response = local.session.get(url, timeout=60)
        response.raise_for_status()
        return response.content

    def one(job):
        url, path = job
        thumb = pyvips.Image.thumbnail_buffer(download(url), BOX, height=BOX)  # shrink-on-load
        thumb.jpegsave(path, Q=QUALITY)

    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(one, urls_and_outputs(args.urls, args.out)))


def limit_worker(blobs, names, out, counter, barrier):
    barrier.wait()
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value += 1
        if i >= len(blobs):
            return
        pillow_thumbnail(blobs[i], os.path.join(out, names[i]))


def limit_peer(args):
    """The decode limit: the same files read into memory first, then only DCT-scaled decode +
    resample + encode (+ writing the small result) on `processes` cores; prints WORK_SECONDS."""
    from PIL import Image  # noqa: F401  (imported before the fork, as the workers use it)
    names = sorted(n for n in os.listdir(args.dir) if n.endswith(".jpg"))
    blobs = [open(os.path.join(args.dir, n), "rb").read() for n in names]
    ctx = mp.get_context("fork")
    counter, barrier = ctx.Value("i", 0), ctx.Barrier(args.processes + 1)
    workers = [ctx.Process(target=limit_worker, args=(blobs, names, args.out, counter, barrier))
               for _ in range(args.processes)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    if any(w.exitcode != 0 for w in workers):
        sys.exit("a decode-limit worker failed")
    print(f"WORK_SECONDS={time.perf_counter() - start:.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("corpus"); p.add_argument("dir"); p.add_argument("--mode", default="default"); p.add_argument("--count", type=int)
    p = sub.add_parser("pillow"); p.add_argument("urls"); p.add_argument("out"); p.add_argument("--processes", type=int, default=2)
    p = sub.add_parser("vips"); p.add_argument("urls"); p.add_argument("out"); p.add_argument("--threads", type=int, default=2)
    p.add_argument("--requests", action="store_true")
    p = sub.add_parser("limit"); p.add_argument("dir"); p.add_argument("out"); p.add_argument("--processes", type=int, default=2)
    p = sub.add_parser("bench")
    for flag in ("--mode", "--binary", "--work", "--urls", "--corpus", "--venv"):
        p.add_argument(flag, required=True)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--with-cache", action="store_true", help="webimage with a new disk cache each run, not --no-cache")
    args = parser.parse_args()
    if args.command == "corpus":
        make_corpus(args.dir, args.mode, args.count or (24 if args.mode == "default" else 160))
    elif args.command == "pillow":
        pillow_peer(args)
    elif args.command == "vips":
        vips_peer(args)
    elif args.command == "limit":
        limit_peer(args)
    else:
        import peer_thumbs_bench
        peer_thumbs_bench.bench(args)


if __name__ == "__main__":
    main()
