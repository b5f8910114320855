#!/usr/bin/env python3
"""TIFF and JPEG XL decode speed: WebImage's coders beside Pillow (TIFF, through libtiff) and
djxl (libjxl's own tool, with one worker thread; our coder runs single-threaded), on the same files, in one run.

    scripts/peers/peer-codecs.py --decoder .build/peer-codecs/decode [--rounds 5]   (scripts/peers/peer-codecs builds it)

Each round runs both sides one after the other (order alternating between rounds), each
decoding the file REPS times in one process and reporting its median; the table shows the
median over rounds and the ratio (peer time ÷ our time: above 1 means WebImage is faster).
What each side produces differs: WebImage premultiplied RGBA8 (libtiff's RGBA interface),
Pillow RGB, djxl its default output in memory (no output file given, nothing written).
"""
import argparse
import io
import os
import re
import statistics
import subprocess
import time

from PIL import Image

W, H = 2000, 1500
REPS = 7


def make_inputs(work):
    image = Image.radial_gradient("L").resize((W, H))
    noise = Image.effect_noise((W, H), 40)
    rgb = Image.merge("RGB", (image, noise, Image.linear_gradient("L").resize((W, H))))
    files = {}
    for name, kwargs in [("tiff-lzw", {"compression": "tiff_lzw"}), ("tiff-deflate", {"compression": "tiff_adobe_deflate"}),
                         ("tiff-none", {})]:
        path = os.path.join(work, f"{name}.tif")
        rgb.save(path, **kwargs)
        files[name] = path
    subprocess.run(["tiffcp", "-t", "-w", "256", "-l", "256", "-c", "zip", files["tiff-deflate"],
                    os.path.join(work, "tiff-tiled.tif")], check=True)
    files["tiff-tiled"] = os.path.join(work, "tiff-tiled.tif")
    png = os.path.join(work, "source.png")
    rgb.save(png)
    for name, args in [("jxl-lossless", ["-d", "0", "-e", "3"]), ("jxl-lossy", ["-d", "1", "-e", "3"])]:
        path = os.path.join(work, f"{name}.jxl")
        subprocess.run(["cjxl", png, path] + args, check=True, capture_output=True)
        files[name] = path
    return files


def ours(decoder, path):
    out = subprocess.run([decoder, path, str(REPS)], check=True, capture_output=True, text=True).stdout
    return float(out.split()[0])


def pillow(path):
    data = open(path, "rb").read()
    times = []
    for _ in range(REPS):
        start = time.perf_counter()
        with Image.open(io.BytesIO(data)) as im:
            im.load()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def djxl(path):
    out = subprocess.run(["djxl", path, "--num_reps", str(REPS), "--num_threads", "1"],
                         check=True, capture_output=True, text=True)
    text = out.stdout + out.stderr
    rate = float(re.search(r"([0-9.]+) MP/s", text).group(1))
    return W * H / 1e6 / rate * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decoder", required=True)
    parser.add_argument("--work", default=".build/peer-codecs")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    files = make_inputs(args.work)
    print(f"{W} x {H}, {REPS} decodes per side per round, {args.rounds} rounds (medians)")
    print(f"{'file':14} {'bytes':>9} {'WebImage ms':>12} {'peer':>7} {'peer ms':>9} {'ratio':>6}")
    for name, path in files.items():
        peer_name, peer = ("djxl", djxl) if name.startswith("jxl") else ("Pillow", pillow)
        mine, theirs = [], []
        for round_ in range(args.rounds):
            if round_ % 2 == 0:
                mine.append(ours(args.decoder, path)); theirs.append(peer(path))
            else:
                theirs.append(peer(path)); mine.append(ours(args.decoder, path))
        m, t = statistics.median(mine), statistics.median(theirs)
        print(f"{name:14} {os.path.getsize(path):9d} {m:12.2f} {peer_name:>7} {t:9.2f} {t / m:6.2f}x")


if __name__ == "__main__":
    main()
