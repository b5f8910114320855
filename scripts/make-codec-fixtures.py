#!/usr/bin/env python3
"""Writes the TIFF and JPEG XL fixtures and their reference decodes.

    scripts/make-codec-fixtures.py [--out Tests/WebImageTests/Fixtures/codecs]

TIFF files come from Pillow (strips with LZW, Deflate, PackBits, JPEG, CCITT G4; palette; CMYK;
16-bit grey; multi-page; the Orientation tag), from libtiff's own `tiffcp` (tiles, ZSTD, LZMA,
separate planes) and, for 16-bit RGB,
which Pillow cannot write, from a small writer below. JPEG XL files come from libjxl's `cjxl`
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
    # A second page of 32-bit float samples, which libtiff's RGBA interface cannot convert: the
    # first page is kept (as Pillow opens the file).
    rgb.save(f"{out}/tiff-float-second-page.tif", save_all=True, append_images=[Image.new("F", rgb.size, 0.5)])
    # CIE L*a*b* (Pillow stores a and b offset by 128): white, mid grey, red, green, blue patches.
    lab = Image.new("LAB", (40, 30), (255, 128, 128))
    for i, colour in enumerate([(128, 128, 128), (128, 228, 128), (140, 40, 190), (80, 150, 40)]):
        lab.paste(colour, (i * 10, 15, i * 10 + 10, 30))
    lab.save(f"{out}/tiff-lab.tif")
    converted = lab.convert("RGB")
    converted.info.pop("icc_profile", None)  # lcms's sRGB profile carries the time it was made
    save_reference(converted, f"{out}/tiff-lab.ref.png")
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
