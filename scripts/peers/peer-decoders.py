#!/usr/bin/env python3
"""Decode speed of WebImage's BMP, ICO and APNG decoders beside Pillow (and APNG beside libpng),
on the same files, in one run.

    scripts/peers/peer-decoders.py [--runs 15] [--rounds 3] [--build-only]

Builds scripts/peers/DecodeTimer.swift with the Coding layer (swiftc -O, through
scripts/lib/build-c-targets.sh as scripts/fuzz does; about two minutes; --build-only stops there)
and scripts/peers/png_frames.c against libpng, writes the inputs to a temporary directory
(photo-like pictures: BMP 24-bit, 8-bit palette and RLE8 at 2000 x 1500, an ICO with 256/48/32/16 px 32-bit bitmap entries, an APNG of 24 frames at
480 x 360 written by Pillow), then in each round times WebImage (ImageCoderRegistry.decode,
median of RUNS) and Pillow (Image.open + load of every frame, median of RUNS) one after the
other, and keeps each side's best round. libpng has no APNG support: its figure is the floor a
libpng-based decoder cannot go under, every frame's data decoded as a separate PNG stream with
libpng's simplified API, without compositing. Both sides deliver RGBA8: WebImage premultiplied,
APNG frames composited onto the full canvas; Pillow loads its native mode (RGB / P / RGBA) and
converts to RGBA when that is not it. Ratio > 1
means WebImage is faster. Single-threaded on both sides; times are CPU time of the decoding thread
(the machine is shared with other builds, and wall-clock time there measures the scheduler).
"""
import argparse
import io
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib

try:
    from PIL import Image
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, ".build", "peer")
DECODE_TIMER = os.path.join(ROOT, "scripts/peers/DecodeTimer.swift")
PNG_FRAMES = os.path.join(ROOT, "scripts/peers/png_frames.c")
# The Coding layer's sources, C targets, wrappers and libraries: the one shared build of
# scripts/fuzz (there with AddressSanitizer and libFuzzer, here -O2).
BUILD_C_TARGETS = os.path.join(ROOT, "scripts/lib/build-c-targets.sh")


def build():
    """Builds decode-timer and png_frames into OUT unless both are newer than every input."""
    os.makedirs(OUT, exist_ok=True)
    timer = os.path.join(OUT, "decode-timer")
    inputs = [os.path.join(d, f) for top in ("Sources/WebImage", "Sources/CLibraries")
              for d, _, fs in os.walk(os.path.join(ROOT, top)) for f in fs]
    inputs += [DECODE_TIMER, PNG_FRAMES, BUILD_C_TARGETS]
    if os.path.exists(timer) and all(os.path.getmtime(p) < os.path.getmtime(timer) for p in inputs):
        return  # up to date
    arguments = subprocess.run([BUILD_C_TARGETS, os.path.relpath(OUT, ROOT), "-O2"], cwd=ROOT, check=True,
                               stdout=subprocess.PIPE, text=True).stdout.splitlines()
    subprocess.run(["gcc", "-O2", PNG_FRAMES, "-lpng16", "-o", os.path.join(OUT, "png_frames")], check=True)
    subprocess.run(["swiftc", "-O", "-parse-as-library", "-module-name", "WebImagePeer", "-package-name", "webimage",
                    *arguments, DECODE_TIMER, "-o", timer], cwd=ROOT, check=True)


def picture(width, height, phase=0):
    """A photo-like RGB picture: smooth gradients with some texture."""
    im = Image.linear_gradient("L").resize((width, height))
    r = im
    g = im.rotate(90 + phase * 3).resize((width, height))
    b = Image.effect_noise((width, height), 40).convert("L")
    return Image.merge("RGB", (r, g, b))


def fixtures_module():
    """The BMP writers of scripts/fixtures/make-coder-fixtures.py."""
    sys.path.insert(0, os.path.join(ROOT, "scripts", "fixtures"))
    from coder_fixtures import bitmaps
    return bitmaps


def make_inputs(directory):
    big = picture(2000, 1500)
    big.save(os.path.join(directory, "24.bmp"))
    big.quantize(256).save(os.path.join(directory, "8.bmp"))
    fx = fixtures_module()
    w, h = 2000, 1500
    quantized = big.quantize(16).load()
    palette = b"".join(bytes([i * 16, 255 - i * 16, (i * 40) % 256, 0]) for i in range(16))
    rle = fx.rle(w, h, lambda x, y: quantized[x, y], False)
    with open(os.path.join(directory, "rle8.bmp"), "wb") as f:
        f.write(fx.bmp_file(fx.info_header(w, h, 8, compression=1, colors=16), palette, rle))
    icon = picture(256, 256).convert("RGBA")
    icon.save(os.path.join(directory, "icon.ico"), sizes=[(256, 256), (48, 48), (32, 32), (16, 16)], bitmap_format="bmp")
    frames = []
    for i in range(24):
        frame = picture(480, 360, phase=i).convert("RGBA")
        frames.append(frame)
    frames[0].save(os.path.join(directory, "anim.apng"), save_all=True, append_images=frames[1:], duration=40, loop=0)
    return {
        "BMP 24-bit 2000x1500": "24.bmp",
        "BMP 8-bit 2000x1500": "8.bmp",
        "BMP RLE8 2000x1500": "rle8.bmp",
        "ICO 256 px 32-bit entry": "icon.ico",
        "APNG 480x360 x 24 frames": "anim.apng",
    }


def split_apng(path, directory):
    """Each frame's data of an APNG as a standalone PNG stream (for the libpng floor)."""
    data = open(path, "rb").read()
    pos, ihdr, frames, current = 8, None, [], None
    while pos + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"fcTL":
            current = [struct.unpack(">II", body[4:12]), b""]
            frames.append(current)
        elif kind == b"IDAT" and current is not None:
            current[1] += body
        elif kind == b"fdAT":
            current[1] += body[4:]

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    paths = []
    for index, ((width, height), stream) in enumerate(frames):
        png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">II", width, height) + ihdr[8:])
        png += chunk(b"IDAT", stream) + chunk(b"IEND", b"")
        paths.append(os.path.join(directory, f"frame{index}.png"))
        with open(paths[-1], "wb") as f:
            f.write(png)
    return paths


def pillow_time(path, runs):
    data = open(path, "rb").read()
    times = []
    for _ in range(runs):
        start = time.thread_time()
        im = Image.open(io.BytesIO(data))
        for index in range(getattr(im, "n_frames", 1)):
            im.seek(index)
            im.load()
            if im.mode != "RGBA":
                im.convert("RGBA")  # the same output as WebImage's (RGBA8)
        times.append(time.thread_time() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--build-only", action="store_true", help="build decode-timer and png_frames, measure nothing")
    args = parser.parse_args()
    build()
    if args.build_only:
        return
    with tempfile.TemporaryDirectory() as directory:
        inputs = make_inputs(directory)
        paths = {name: os.path.join(directory, file) for name, file in inputs.items()}
        frame_files = split_apng(paths["APNG 480x360 x 24 frames"], directory)
        ours, theirs, floor = {}, {}, None
        for _ in range(args.rounds):
            result = subprocess.run([os.path.join(OUT, "decode-timer"), str(args.runs), *paths.values()],
                                    check=True, capture_output=True, text=True).stdout
            for line in result.splitlines():
                path, seconds, _ = line.split("\t")
                name = next(n for n, p in paths.items() if p == path)
                ours[name] = min(ours.get(name, 1e9), float(seconds))
            for name, path in paths.items():
                theirs[name] = min(theirs.get(name, 1e9), pillow_time(path, args.runs))
            libpng = subprocess.run([os.path.join(OUT, "png_frames"), str(args.runs), *frame_files],
                                    check=True, capture_output=True, text=True).stdout
            floor = min(floor or 1e9, float(libpng))
    print(f"{'input':28} {'WebImage ms':>12} {'Pillow ms':>10} {'ratio':>7}")
    for name in paths:
        print(f"{name:28} {ours[name] * 1000:12.2f} {theirs[name] * 1000:10.2f} {theirs[name] / ours[name]:6.2f}x")
    apng = "APNG 480x360 x 24 frames"
    print(f"{'APNG libpng floor (frames)':28} {ours[apng] * 1000:12.2f} {floor * 1000:10.2f} {floor / ours[apng]:6.2f}x"
          "   (libpng: frame streams only, no compositing)")


if __name__ == "__main__":
    main()
