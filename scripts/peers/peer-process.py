#!/usr/bin/env python3
"""Each WebImage processor beside Pillow's same operation, on the same 2 MP picture, in one run.

    scripts/peers/peer-process.py [--runs 20] [--pillow-only]

Runs the `Process …` benchmarks (Benchmarks/WebImageBenchmarks/ProcessingBenchmarks.swift,
release build: about 10 minutes the first time), which write their 1600 x 1250 RGBA source to
the temporary directory as a PNG; then times Pillow's version of each operation on that file
(median of RUNS, one core) and prints megapixels per second (source megapixels / time) for
both and WebImage's ratio. Pillow's versions are its natural calls: `resize` with BOX (shrink)
or BILINEAR (grow) on RGBA, `crop`, `transpose`, `rotate(expand=True)`, a rounded-rectangle or
ellipse mask drawn with ImageDraw multiplied into alpha, `GaussianBlur`, `blend`, `convert("LA")`.
Installs Pillow if missing.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    from PIL import Image, ImageChops, ImageDraw, ImageFilter
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "measure"))
import bench_ratios  # noqa: E402

SOURCE = os.path.join(tempfile.gettempdir(), "webimage-bench-process.png")


def masked(image, draw_shape):
    mask = Image.new("L", image.size, 0)
    draw_shape(ImageDraw.Draw(mask), image.size)
    result = image.copy()
    result.putalpha(ImageChops.multiply(image.getchannel("A"), mask))
    return result


def circle(image):
    side = min(image.size)
    left, top = (image.width - side) // 2, (image.height - side) // 2
    square = image.crop((left, top, left + side, top + side))
    return masked(square, lambda d, s: d.ellipse([0, 0, s[0] - 1, s[1] - 1], fill=255))


def tint(image):
    rgb = Image.blend(image.convert("RGB"), Image.new("RGB", image.size, (255, 0, 0)), 128 / 255)
    result = rgb.convert("RGBA")
    result.putalpha(image.getchannel("A"))
    return result


# The same keys and parameters as ProcessingBenchmarks.swift.
OPERATIONS = {
    "resize-fit-800": lambda im: im.resize((800, 625), Image.BOX),
    "resize-fill-512": lambda im: im.crop((175, 0, 1425, 1250)).resize((512, 512), Image.BOX),
    "resize-upscale-2000": lambda im: im.resize((2000, 1562), Image.BILINEAR),
    "crop": lambda im: im.crop((100, 100, 1300, 1000)).load(),
    "flip-h": lambda im: im.transpose(Image.FLIP_LEFT_RIGHT),
    "rotate-90": lambda im: im.transpose(Image.ROTATE_270),
    "rotate-30": lambda im: im.rotate(-30, resample=Image.BILINEAR, expand=True, fillcolor=(255, 255, 255, 255)),
    "round-40": lambda im: masked(im, lambda d, s: d.rounded_rectangle([0, 0, s[0] - 1, s[1] - 1], radius=40, fill=255)),
    "circle": circle,
    "blur-4": lambda im: im.filter(ImageFilter.GaussianBlur(4)),
    "tint": tint,
    "grayscale": lambda im: im.convert("LA"),
}


def pillow_times(runs):
    with Image.open(SOURCE) as opened:
        image = opened.convert("RGBA")
    image.load()
    megapixels = image.width * image.height / 1e6
    rates = {}
    for key, operation in OPERATIONS.items():
        operation(image)  # warm-up
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            operation(image)
            times.append(time.perf_counter() - start)
        rates[key] = megapixels / statistics.median(times)
    return rates, megapixels


def webimage_rates(megapixels):
    out = tempfile.mkdtemp()
    env = dict(os.environ, WEBIMAGE_BENCHMARKS="1")
    subprocess.run(["./scripts/setup"], cwd=ROOT, check=True)
    subprocess.run(["swift", "package", "--scratch-path", ".build-bench", "--allow-writing-to-directory", out,
                    "benchmark", "--filter", "Process .*", "--format", "histogramPercentiles", "--path", out,
                    "--no-progress"], cwd=ROOT, env=env, check=True, stdout=sys.stderr)
    results = bench_ratios.load(out)
    return {key: megapixels / bench_ratios.p50(results, f"Process {key}") for key in OPERATIONS}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pillow-only", action="store_true", help="time Pillow on an existing source file only")
    args = parser.parse_args()
    ours = None if args.pillow_only else webimage_rates(1600 * 1250 / 1e6)
    pillow, megapixels = pillow_times(args.runs)
    print(f"{'operation':<22}{'WebImage MP/s':>15}{f'Pillow {Image.__version__} MP/s':>22}{'ratio':>8}   ({megapixels:.1f} MP source)")
    for key in OPERATIONS:
        mine = ours[key] if ours else float("nan")
        print(f"{key:<22}{mine:>15.1f}{pillow[key]:>22.1f}{mine / pillow[key]:>8.2f}")


if __name__ == "__main__":
    main()
