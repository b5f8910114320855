#!/usr/bin/env python3
"""The peer for the JPEG thumbnail benchmark: Pillow's `draft` (libjpeg DCT scaling) + `thumbnail`.

    scripts/peers/peer-thumbnail.py [FILE] [--size 256] [--runs 30]

FILE defaults to the 4000x3000 JPEG the coding benchmarks write to the temporary directory
(webimage-bench-4000x3000.jpg). Prints the median and best wall-clock time of open + draft +
thumbnail + load, one core, in milliseconds. Installs Pillow from PyPI if it is missing.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    from PIL import Image
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image


def thumbnail_once(path, size):
    with Image.open(path) as image:
        image.draft("RGB", (size, size))
        image.thumbnail((size, size))  # Pillow's default: reducing_gap 2.0, bicubic
        image.load()
        return image.size


def main():
    default = os.path.join(tempfile.gettempdir(), "webimage-bench-4000x3000.jpg")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", default=default)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    size = thumbnail_once(args.file, args.size)  # warm-up (file cache, library load)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        thumbnail_once(args.file, args.size)
        times.append((time.perf_counter() - start) * 1000)
    print(f"Pillow {Image.__version__} draft+thumbnail {args.file} -> {size[0]}x{size[1]}: "
          f"median {statistics.median(times):.1f} ms, best {min(times):.1f} ms over {args.runs} runs")


if __name__ == "__main__":
    main()
