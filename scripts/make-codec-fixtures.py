#!/usr/bin/env python3
"""Writes the TIFF and JPEG XL fixtures and their reference decodes.

    scripts/make-codec-fixtures.py [--out Tests/WebImageTests/Fixtures/codecs]

TIFF files come from Pillow (strips with LZW, Deflate, PackBits, JPEG, CCITT G4; palette; CMYK;
16-bit grey; multi-page; the Orientation tag), from libtiff's own `tiffcp` (tiles, ZSTD, LZMA,
separate planes) and, for what Pillow cannot write (16-bit RGB, 12-bit grey, 16-bit CMYK, float
RGB), from a small writer below. JPEG XL files come from libjxl's `cjxl`
(lossless and lossy stills, an animation made from a Pillow GIF). Each `<name>.<ext>` has a
reference `<name>.ref.png` (frames: `<name>.ref<i>.png`), straight RGBA: Pillow's own decode for
TIFF, `djxl` for JPEG XL (the animation's frames through djxl's APNG output; cjxl 0.7 keeps
neither the GIF's loop count, so the file loops forever, nor its "keep" pixels, which become
transparent); 16-bit files'
references are their 8-bit sources (samples v·257 are v however a decoder reduces depth).
`exif-orientation6.png` and `exif-orientation3.webp` carry an EXIF orientation in PNG's
`eXIf` and WebP's `EXIF` chunk. `jpeg-sampling-*.jpg` have sampling factors TurboJPEG 2.1 cannot
name (libjpeg-turbo's `cjpeg -sample`). Needs Pillow (PyPI) and Debian's libtiff-tools,
libjxl-tools and libjpeg-turbo-progs. Deterministic.
"""
import argparse
import os
import struct
import subprocess
import sys

try:
    from PIL import Image, ImageDraw
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image, ImageDraw

W, H = 40, 30


def picture(seed=0, alpha=False):
    image = Image.new("RGBA", (W, H))
    px = image.load()
    for y in range(H):
        for x in range(W):
            a = 255 if not alpha else (x * 6 + y * 3 + seed * 40) % 256
            px[x, y] = ((x * 6 + seed * 50) % 256, (y * 8 + seed * 20) % 256, ((x ^ y) * 5) % 256, a)
    draw = ImageDraw.Draw(image)
    draw.rectangle((5 + seed * 3, 4, 18 + seed * 3, 14), fill=(250, 30, 60, 255))
    return image if alpha else image.convert("RGB")


def save_reference(image, path):
    image.convert("RGBA").save(path)


def tiff_fixtures(out):
    rgb = picture()
    rgb.save(f"{out}/tiff-rgb-lzw.tif", compression="tiff_lzw", tiffinfo={278: 7})  # 7 rows per strip
    rgba = picture(1, alpha=True)
    rgba.save(f"{out}/tiff-rgba-deflate.tif", compression="tiff_adobe_deflate")
    palette = rgb.quantize(colors=16, dither=Image.Dither.NONE)
    palette.save(f"{out}/tiff-palette-packbits.tif", compression="packbits")
    rgb.convert("CMYK").save(f"{out}/tiff-cmyk.tif")
    rgb.save(f"{out}/tiff-jpeg.tif", compression="jpeg", quality=90)
    rgb.save(f"{out}/tiff-orientation6.tif", tiffinfo={274: 6})
    frames = [picture(i) for i in range(3)]
    frames[0].save(f"{out}/tiff-multipage.tif", save_all=True, append_images=frames[1:], compression="tiff_lzw")
    subprocess.run(["tiffcp", "-t", "-w", "16", "-l", "16", "-c", "zip",
                    f"{out}/tiff-rgb-lzw.tif", f"{out}/tiff-tiled.tif"], check=True)
    # More of libtiff's codecs, and separate planes, through tiffcp.
    for name, args in [("tiff-zstd", ["-c", "zstd"]), ("tiff-lzma", ["-c", "lzma"]), ("tiff-planar", ["-p", "separate"])]:
        subprocess.run(["tiffcp"] + args + [f"{out}/tiff-rgb-lzw.tif", f"{out}/{name}.tif"], check=True)
    rgb.convert("1", dither=Image.Dither.NONE).save(f"{out}/tiff-bilevel-g4.tif", compression="group4")
    # A second page of 32-bit float RGB samples, which neither libtiff's RGBA interface nor
    # WebImage's own sample conversion reads: the first page is kept (as Pillow opens the file).
    rgb.save(f"{out}/first-page.tif")
    write_tiff(f"{out}/float-rgb-page.tif", W, H, 32, 3, 2, struct.pack(f"<{W * H * 3}f", *([0.5] * (W * H * 3))), sample_format=3)
    subprocess.run(["tiffcp", f"{out}/first-page.tif", f"{out}/float-rgb-page.tif", f"{out}/tiff-float-second-page.tif"], check=True)
    os.remove(f"{out}/first-page.tif")
    os.remove(f"{out}/float-rgb-page.tif")
    # CIE L*a*b* (Pillow stores a and b offset by 128): white, mid grey, red, green, blue patches.
    lab = Image.new("LAB", (40, 30), (255, 128, 128))
    for i, colour in enumerate([(128, 128, 128), (128, 228, 128), (140, 40, 190), (80, 150, 40)]):
        lab.paste(colour, (i * 10, 15, i * 10 + 10, 30))
    lab.save(f"{out}/tiff-lab.tif")
    converted = lab.convert("RGB")
    converted.info.pop("icc_profile", None)  # lcms's sRGB profile carries the time it was made
    save_reference(converted, f"{out}/tiff-lab.ref.png")
    # A photograph-like picture in CIE L*a*b* (Pillow's conversion through LittleCMS both ways).
    lab_picture = picture().convert("LAB")
    lab_picture.save(f"{out}/tiff-lab-picture.tif")
    converted = lab_picture.convert("RGB")
    converted.info.pop("icc_profile", None)
    save_reference(converted, f"{out}/tiff-lab-picture.ref.png")
    sample_fixtures(out)
    # BigTIFF (64-bit offsets, `II+`), which libtiff reads like classic TIFF.
    subprocess.run(["tiffcp", "-8", f"{out}/tiff-rgb-lzw.tif", f"{out}/tiff-bigtiff.tif"], check=True)
    for name in ["tiff-rgb-lzw", "tiff-rgba-deflate", "tiff-palette-packbits", "tiff-cmyk", "tiff-jpeg",
                 "tiff-orientation6", "tiff-tiled", "tiff-zstd", "tiff-lzma", "tiff-planar", "tiff-bilevel-g4",
                 "tiff-bigtiff"]:
        save_reference(Image.open(f"{out}/{name}.tif"), f"{out}/{name}.ref.png")
    multipage = Image.open(f"{out}/tiff-multipage.tif")
    for i in range(multipage.n_frames):
        multipage.seek(i)
        save_reference(multipage, f"{out}/tiff-multipage.ref{i}.png")
    # 16-bit: grey through Pillow's I;16, RGB through write_tiff16 below; references are the 8-bit sources.
    grey = rgb.convert("L")
    grey16 = Image.new("I;16", (W, H))
    grey16.putdata([v * 257 for v in grey.getdata()])
    grey16.save(f"{out}/tiff-grey16.tif")
    save_reference(grey, f"{out}/tiff-grey16.ref.png")
    write_tiff16(f"{out}/tiff-rgb16.tif", rgb)
    save_reference(rgb, f"{out}/tiff-rgb16.ref.png")


def write_tiff16(path, image):
    """An uncompressed little-endian 16-bit RGB TIFF, one strip, samples v * 257."""
    data = b"".join(struct.pack("<3H", r * 257, g * 257, b * 257) for (r, g, b) in image.getdata())
    entries = [(256, 3, 1, W), (257, 3, 1, H), (258, 3, 3, None), (259, 3, 1, 1), (262, 3, 1, 2),
               (273, 4, 1, None), (277, 3, 1, 3), (278, 3, 1, H), (279, 4, 1, len(data))]
    ifd_offset = 8
    ifd_size = 2 + len(entries) * 12 + 4
    bits_offset = ifd_offset + ifd_size
    strip_offset = bits_offset + 6
    out = bytearray(b"II*\0" + struct.pack("<I", ifd_offset) + struct.pack("<H", len(entries)))
    for tag, kind, count, value in entries:
        if tag == 258:
            value = bits_offset
            out += struct.pack("<HHII", tag, kind, count, value)
        elif tag == 273:
            out += struct.pack("<HHII", tag, kind, count, strip_offset)
        elif kind == 3:
            out += struct.pack("<HHIHH", tag, kind, count, value, 0)
        else:
            out += struct.pack("<HHII", tag, kind, count, value)
    out += struct.pack("<I", 0) + struct.pack("<3H", 16, 16, 16) + data
    with open(path, "wb") as f:
        f.write(out)


def sample_fixtures(out):
    """Pages libtiff's RGBA interface refuses, which WebImage converts itself: 12-bit grey (in
    strips, and in Deflate tiles through tiffcp), 32-bit signed integer and 32-bit float grey
    (Pillow's modes I and F), 16-bit CMYK (contiguous, and separate planes through tiffcp). The
    references are Pillow's decodes of the samples, scaled by docs/ARCHITECTURE.md's rules (those
    of scripts/corpus-agreement for I and F): 12-bit v * 255 / 4095, I v / 257, F v, clipped to
    0-255 and rounded half to even; CMYK through Pillow's own conversion of its 8-bit CMYK."""
    import numpy as np
    levels = [[(x * 97 + y * 131) % 4096 for x in range(W)] for y in range(H)]
    packed = bytearray()
    for row in levels:
        bits = "".join(f"{v:012b}" for v in row)
        bits += "0" * (-len(bits) % 8)
        packed += int(bits, 2).to_bytes(len(bits) // 8, "big")
    write_tiff(f"{out}/tiff-grey12.tif", W, H, 12, 1, 1, bytes(packed))
    subprocess.run(["tiffcp", "-t", "-w", "16", "-l", "16", "-c", "zip", f"{out}/tiff-grey12.tif", f"{out}/tiff-grey12-tiled.tif"], check=True)
    for name in ["tiff-grey12", "tiff-grey12-tiled"]:
        stored = np.asarray(Image.open(f"{out}/{name}.tif"), dtype=np.float64)
        assert stored.tolist() == levels, name  # Pillow reads the samples as written
        grey = np.clip(np.rint(stored * 255 / 4095), 0, 255).astype(np.uint8)
        save_reference(Image.fromarray(grey, "L"), f"{out}/{name}.ref.png")
    counts = Image.fromarray(np.array([[(x - 5) * 1800 + y * 40 for x in range(W)] for y in range(H)], dtype=np.int32), "I")
    counts.save(f"{out}/tiff-int32.tif")
    stored = np.asarray(Image.open(f"{out}/tiff-int32.tif"), dtype=np.float64)
    save_reference(Image.fromarray(np.clip(np.rint(stored / 257), 0, 255).astype(np.uint8), "L"), f"{out}/tiff-int32.ref.png")
    floats = Image.fromarray(np.array([[x * 8.3 - 20 + y * 0.25 for x in range(W)] for y in range(H)], dtype=np.float32), "F")
    floats.save(f"{out}/tiff-float32.tif")
    stored = np.asarray(Image.open(f"{out}/tiff-float32.tif"), dtype=np.float64)
    save_reference(Image.fromarray(np.clip(np.rint(stored), 0, 255).astype(np.uint8), "L"), f"{out}/tiff-float32.ref.png")
    cmyk = picture().convert("CMYK")
    data = b"".join(struct.pack("<4H", *(v * 257 for v in pixel)) for pixel in cmyk.getdata())
    write_tiff(f"{out}/tiff-cmyk16.tif", W, H, 16, 4, 5, data, extra=[(332, 3, 1, 1)])  # InkSet CMYK
    planes = [b"".join(struct.pack("<H", pixel[c] * 257) for pixel in cmyk.getdata()) for c in range(4)]
    write_tiff(f"{out}/tiff-cmyk16-planar.tif", W, H, 16, 4, 5, planes, extra=[(284, 3, 1, 2), (332, 3, 1, 1)])
    # Pillow 13 misreads 16-bit CMYK in separate planes: both references are its decode of the
    # contiguous file (the same samples).
    for name in ["tiff-cmyk16", "tiff-cmyk16-planar"]:
        save_reference(Image.open(f"{out}/tiff-cmyk16.tif").convert("RGB"), f"{out}/{name}.ref.png")


def write_tiff(path, width, height, bits, samples, photometric, data, sample_format=1, extra=()):
    """An uncompressed little-endian TIFF, one strip per plane: `bits` per sample, `samples` per
    pixel, `data` the strip as stored (a list of strips, one per plane, for separate planes).
    `extra`: more (tag, type, count, value) entries."""
    strips = data if isinstance(data, list) else [data]
    entries = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, samples, [bits] * samples), (259, 3, 1, 1),
               (262, 3, 1, photometric), (273, 4, len(strips), None), (277, 3, 1, samples), (278, 4, 1, height),
               (279, 4, len(strips), [len(s) for s in strips]), (339, 3, samples, [sample_format] * samples), *extra]
    entries.sort()
    ifd_size = 2 + len(entries) * 12 + 4
    sizes = {3: 2, 4: 4}
    strip_offset = 8 + ifd_size + sum(sizes[kind] * count for _, kind, count, _ in entries if sizes[kind] * count > 4)
    offsets = [strip_offset + sum(len(s) for s in strips[:i]) for i in range(len(strips))]
    arrays = bytearray()  # values longer than four bytes, after the directory
    out = bytearray(b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", len(entries)))
    for tag, kind, count, value in entries:
        values = offsets if tag == 273 else value if isinstance(value, list) else [value]
        packed = struct.pack(f"<{count}{'H' if kind == 3 else 'I'}", *values)
        if len(packed) > 4:
            out += struct.pack("<HHII", tag, kind, count, 8 + ifd_size + len(arrays))
            arrays += packed
        else:
            out += struct.pack("<HHI", tag, kind, count) + packed.ljust(4, b"\0")
    out += struct.pack("<I", 0) + arrays + b"".join(strips)
    with open(path, "wb") as f:
        f.write(out)


def jxl_fixtures(out):
    rgb = picture()
    rgba = picture(1, alpha=True)
    rgb.save(f"{out}/src-rgb.png")
    rgba.save(f"{out}/src-rgba.png")
    cjxl = ["cjxl", "--quiet"] if subprocess.run(["cjxl", "--help"], capture_output=True).returncode == 0 else ["cjxl"]
    subprocess.run(cjxl + [f"{out}/src-rgb.png", f"{out}/jxl-lossless.jxl", "-d", "0", "-e", "3"], check=True, capture_output=True)
    subprocess.run(cjxl + [f"{out}/src-rgba.png", f"{out}/jxl-alpha.jxl", "-d", "0", "-e", "3"], check=True, capture_output=True)
    subprocess.run(cjxl + [f"{out}/src-rgb.png", f"{out}/jxl-lossy.jxl", "-d", "1", "-e", "3"], check=True, capture_output=True)
    # A raw codestream (no container), and a container one (--container / ISO BMFF boxes).
    subprocess.run(cjxl + [f"{out}/src-rgb.png", f"{out}/jxl-container.jxl", "-d", "0", "-e", "3", "--container=1"],
                   check=True, capture_output=True)
    for name in ["jxl-lossless", "jxl-alpha", "jxl-lossy", "jxl-container"]:
        subprocess.run(["djxl", f"{out}/{name}.jxl", f"{out}/{name}.ref.png", "--bits_per_sample=8"],
                       check=True, capture_output=True)
        save_reference(Image.open(f"{out}/{name}.ref.png"), f"{out}/{name}.ref.png")
    frames = [picture(i) for i in range(3)]
    frames[0].save(f"{out}/src-anim.gif", save_all=True, append_images=frames[1:], duration=[80, 120, 200], loop=3)
    subprocess.run(cjxl + [f"{out}/src-anim.gif", f"{out}/jxl-animated.jxl", "-d", "0", "-e", "3"], check=True, capture_output=True)
    # djxl writes the coalesced frames as a full-frame APNG (disposal background, blend source).
    subprocess.run(["djxl", f"{out}/jxl-animated.jxl", f"{out}/anim.apng"], check=True, capture_output=True)
    apng = Image.open(f"{out}/anim.apng")
    for i in range(apng.n_frames):
        apng.seek(i)
        save_reference(apng, f"{out}/jxl-animated.ref{i}.png")
    os.remove(f"{out}/anim.apng")
    for name in ["src-rgb.png", "src-rgba.png", "src-anim.gif"]:
        os.remove(f"{out}/{name}")


def jpeg_sampling_fixtures(out):
    """JPEGs with sampling factors TurboJPEG 2.1 has no name for (chroma sampled more than luma;
    2x2, 2x1 and 1x2 mixed), written by libjpeg-turbo's `cjpeg -sample`; references are Pillow's
    (libjpeg's) decodes."""
    picture().save(f"{out}/src.ppm")
    for name, sample in [("jpeg-sampling-chroma-over-luma", "1x1,2x2,2x2"), ("jpeg-sampling-mixed", "2x2,2x1,1x2")]:
        with open(f"{out}/{name}.jpg", "wb") as jpeg:
            subprocess.run(["cjpeg", "-sample", sample, "-quality", "90", f"{out}/src.ppm"], stdout=jpeg, check=True)
        save_reference(Image.open(f"{out}/{name}.jpg"), f"{out}/{name}.ref.png")
    os.remove(f"{out}/src.ppm")


def exif_fixtures(out):
    """PNG with an eXIf chunk and WebP with an EXIF chunk, both carrying an orientation tag."""
    exif = Image.Exif()
    exif[0x0112] = 6
    picture().save(f"{out}/exif-orientation6.png", exif=exif.tobytes())
    exif[0x0112] = 3
    picture(1, alpha=True).save(f"{out}/exif-orientation3.webp", exif=exif.tobytes(), lossless=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="Tests/WebImageTests/Fixtures/codecs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tiff_fixtures(args.out)
    jxl_fixtures(args.out)
    jpeg_sampling_fixtures(args.out)
    exif_fixtures(args.out)


if __name__ == "__main__":
    main()
