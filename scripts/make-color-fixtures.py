#!/usr/bin/env python3
"""Writes the colour-management fixtures and their independent references.

    scripts/make-color-fixtures.py [--out Tests/WebImageTests/Fixtures/color]

For every ICC profile below (Debian's `colord-data` and `icc-profiles-free`, installed by
`scripts/setup`), draws one 64 x 48 picture (saturated patches, hue and grey ramps) and stores
its bytes *as values in that profile's colour space*, tagged with the profile, in every format
Pillow can tag: JPEG (quality 95), PNG, lossless WebP and TIFF. Grey profiles get grey images.

`sources/` holds the colour sources that are not an embedded profile in those four formats (AVIF
and HEIF `colr` ICC and nclx, PNG gAMA + cHRM, JPEG XL colour encodings, BMP V5, CMYK JPEGs with
a CMYK profile): see scripts/color_sources.py. Needs avifenc (libavif-bin), cjxl (libjxl-tools)
and ghostscript's CMYK profiles (libgs-common), all from scripts/setup.

The references are the same files converted to sRGB by two independent implementations:
`<name>.pillow.png` (Pillow's ImageCms, LittleCMS underneath, perceptual intent) and
`<name>.vips.png` (pyvips `icc_transform` to sRGB, perceptual), each from Pillow's decode of the
fixture. `ColorManagementTests` decodes every fixture with WebImage and compares with both
(mean absolute error per channel). `manifest.json` lists the cases.

Installs Pillow and pyvips (binary wheel) if missing. Deterministic: running it again writes the
same files (JPEG and WebP encoders are deterministic for the same input and settings).
"""
import argparse
import io
import json
import os
import random
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image, ImageCms
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image, ImageCms
try:
    import pyvips
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "pyvips[binary]"], check=True)
    import pyvips

WIDTH, HEIGHT = 64, 48
COLORD = "/usr/share/color/icc/colord"
FREE = "/usr/share/color/icc"

# (case name, profile path, mode)
PROFILES = [
    ("adobe-rgb", f"{COLORD}/AdobeRGB1998.icc", "RGB"),
    ("prophoto", f"{COLORD}/ProPhotoRGB.icc", "RGB"),
    ("wide-gamut", f"{COLORD}/WideGamutRGB.icc", "RGB"),
    ("swapped-red-green", f"{COLORD}/SwappedRedAndGreen.icc", "RGB"),
    ("rec709", f"{COLORD}/Rec709.icc", "RGB"),
    ("apple-rgb", f"{COLORD}/AppleRGB.icc", "RGB"),
    ("ekta-space", f"{COLORD}/EktaSpacePS5.icc", "RGB"),
    ("bluish", f"{COLORD}/Bluish.icc", "RGB"),
    ("srgb-colord", f"{COLORD}/sRGB.icc", "RGB"),
    ("lstar-rgb", f"{FREE}/LStar-RGB.icc", "RGB"),
    ("adobe-compatible", f"{FREE}/compatibleWithAdobeRGB1998.icc", "RGB"),
    # Every colour at random: the fast matrix-and-curve path against LittleCMS's general one.
    ("prophoto-noise", f"{COLORD}/ProPhotoRGB.icc", "RGB-noise"),
    ("adobe-rgb-noise", f"{COLORD}/AdobeRGB1998.icc", "RGB-noise"),
    ("gray", f"{FREE}/Gray.icc", "L"),
    ("gray-cie-l", f"{FREE}/Gray-CIE_L.icc", "L"),
]


def picture(mode):
    """Saturated patches on top, a hue ramp in the middle, a grey ramp at the bottom (or, for
    `RGB-noise`, every pixel at random)."""
    if mode == "RGB-noise":
        return Image.frombytes("RGB", (WIDTH, HEIGHT), random.Random(11).randbytes(WIDTH * HEIGHT * 3))
    image = Image.new("RGB", (WIDTH, HEIGHT))
    patches = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255), (255, 255, 255), (0, 0, 0)]
    pixels = image.load()
    for x in range(WIDTH):
        for y in range(HEIGHT):
            if y < 16:
                pixels[x, y] = patches[x * len(patches) // WIDTH]
            elif y < 32:
                t = x / (WIDTH - 1)
                pixels[x, y] = (int(255 * t), int(255 * (1 - t) * (y - 16) / 15), int(255 * (1 - t)))
            else:
                v = int(255 * x / (WIDTH - 1))
                pixels[x, y] = (v, v, v)
    return image.convert(mode) if mode != "RGB" else image


def save(image, path, fmt, icc):
    if fmt == "jpg":
        image.save(path, "JPEG", quality=95, subsampling=0, icc_profile=icc)
    elif fmt == "png":
        image.save(path, "PNG", icc_profile=icc)
    elif fmt == "webp":
        image.save(path, "WEBP", lossless=True, icc_profile=icc)
    elif fmt == "tiff":
        image.save(path, "TIFF", icc_profile=icc)


def pillow_reference(path, icc):
    decoded = Image.open(path)
    decoded.load()
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    srgb = ImageCms.createProfile("sRGB")
    converted = ImageCms.profileToProfile(decoded, source, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    converted.info.pop("icc_profile", None)  # untagged sRGB (LittleCMS's built-in profile has a date: not deterministic)
    return converted


def vips_reference(path, icc_path):
    decoded = Image.open(path)
    decoded.load()
    raw = decoded.tobytes()
    bands = 1 if decoded.mode == "L" else 3
    image = pyvips.Image.new_from_memory(raw, decoded.width, decoded.height, bands, "uchar")
    image = image.copy(interpretation="b-w" if bands == 1 else "srgb")
    converted = image.icc_transform("srgb", input_profile=icc_path, intent="perceptual", embedded=False)
    converted = converted.cast("uchar")
    if converted.bands == 1:
        converted = converted.bandjoin([converted, converted])
    return Image.frombytes("RGB", (converted.width, converted.height), converted.write_to_memory())


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def write_hostile(out):
    """Files whose colour information is broken or hostile; each must decode, the profile ignored."""
    os.makedirs(out, exist_ok=True)
    picture_rgb = picture("RGB").resize((16, 12))
    plain = io.BytesIO()
    picture_rgb.save(plain, "PNG")
    png = plain.getvalue()
    ihdr_end = 8 + 25
    # iCCP whose 250 KB of zlib inflate to 256 MiB of zeros: must stop at the 16 MiB profile limit.
    bomb = zlib.compressobj(9)
    compressed = b"".join(bomb.compress(bytes(1 << 20)) for _ in range(256)) + bomb.flush()
    with open(os.path.join(out, "iccp-bomb.png"), "wb") as f:
        f.write(png[:ihdr_end] + png_chunk(b"iCCP", b"bomb\0\0" + compressed) + png[ihdr_end:])
    # iCCP whose zlib stream is cut short, and one that is not zlib at all.
    profile = open(f"{COLORD}/AdobeRGB1998.icc", "rb").read()
    cut = zlib.compress(profile)[:-20]
    with open(os.path.join(out, "iccp-truncated.png"), "wb") as f:
        f.write(png[:ihdr_end] + png_chunk(b"iCCP", b"cut\0\0" + cut) + png[ihdr_end:])
    # A profile of random bytes with a valid-looking header claiming 2 GB.
    garbage = bytearray(random.Random(7).randbytes(600))
    garbage[0:4] = struct.pack(">I", 0x7FFFFFFF)
    garbage[36:40] = b"acsp"
    jpeg = io.BytesIO()
    picture_rgb.save(jpeg, "JPEG", quality=90, icc_profile=bytes(garbage))
    with open(os.path.join(out, "icc-garbage.jpg"), "wb") as f:
        f.write(jpeg.getvalue())
    # A profile split over two APP2 markers (Pillow splits at 65519 bytes), the second one dropped.
    big = io.BytesIO()
    big_profile = profile + bytes(70000)  # padding after the tags: still a valid profile when whole
    big_profile = struct.pack(">I", len(big_profile)) + big_profile[4:]
    picture_rgb.save(big, "JPEG", quality=90, icc_profile=big_profile)
    data = big.getvalue()
    first = data.index(b"ICC_PROFILE\0\x02\x02") - 4  # FF E2, length, then the signature
    length = struct.unpack(">H", data[first + 2:first + 4])[0]
    with open(os.path.join(out, "icc-part-missing.jpg"), "wb") as f:
        f.write(data[:first] + data[first + 2 + length:])
    with open(os.path.join(out, "icc-two-parts.jpg"), "wb") as f:
        f.write(data)
    # WebP whose ICCP chunk holds bytes that are not a profile.
    webp = io.BytesIO()
    picture_rgb.save(webp, "WEBP", lossless=True, icc_profile=bytes(garbage))
    with open(os.path.join(out, "iccp-garbage.webp"), "wb") as f:
        f.write(webp.getvalue())


def write_high_bit_depth(out):
    """A 16-bit RGB PNG (pyvips writes it) of a slow dark-to-mid ramp, tagged ProPhoto: the wide
    gamut and its 1.8 curve make an 8-bit conversion lose steps. References: Pillow (which reads
    16-bit RGB as 8-bit, then converts: the bar WebImage must meet) and pyvips converting at 16 bits
    (`icc_transform(depth=16)`, then 8-bit: what a high-precision conversion keeps)."""
    os.makedirs(out, exist_ok=True)
    width, height = 1024, 8
    ramp = [int(65535 * 0.35 * x / (width - 1)) for x in range(width)]
    native = b"".join(struct.pack("=" + "H" * (3 * width), *[v for x in range(width) for v in (ramp[x], ramp[x] // 2, ramp[width - 1 - x] // 3)]) for _ in range(height))
    image = pyvips.Image.new_from_memory(native, width, height, 3, "ushort").copy(interpretation="rgb16")
    path = os.path.join(out, "prophoto-16bit-ramp.png")
    image.pngsave(path, profile=f"{COLORD}/ProPhotoRGB.icc")
    icc = open(f"{COLORD}/ProPhotoRGB.icc", "rb").read()
    pillow_reference(path, icc).save(path + ".pillow.png")
    precise = pyvips.Image.new_from_file(path).icc_transform("srgb", input_profile=f"{COLORD}/ProPhotoRGB.icc", intent="perceptual", embedded=False, depth=16)
    (precise / 257 + 0.5).cast("uchar").copy(interpretation="srgb").pngsave(path + ".vips16.png", strip=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="Tests/WebImageTests/Fixtures/color")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    for name, profile_path, mode in PROFILES:
        if not os.path.exists(profile_path):
            sys.exit(f"missing {profile_path}: run scripts/setup (colord-data, icc-profiles-free)")
        with open(profile_path, "rb") as f:
            icc = f.read()
        image = picture(mode)
        description = ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(icc))).strip()
        for fmt in ["jpg", "png", "webp", "tiff"]:
            if mode == "RGB-noise" and fmt != "png":
                continue  # lossless only: noise through JPEG tests the JPEG decoder, not colour
            if fmt == "webp" and mode == "L":
                continue  # WebP has no grey mode: Pillow would store RGB
            file = f"{name}.{fmt}"
            path = os.path.join(args.out, file)
            save(image, path, fmt, icc)
            pillow_reference(path, icc).save(os.path.join(args.out, f"{name}.{fmt}.pillow.png"))
            vips_reference(path, profile_path).save(os.path.join(args.out, f"{name}.{fmt}.vips.png"))
            manifest.append({"file": file, "profile": name, "mode": mode, "description": description})
    write_hostile(os.path.join(args.out, "hostile"))
    write_high_bit_depth(os.path.join(args.out, "depth"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from color_sources import write_sources
    sources = write_sources(os.path.join(args.out, "sources"), picture)
    with open(os.path.join(args.out, "sources", "manifest.json"), "w") as f:
        json.dump(sources, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest)} fixtures to {args.out}")


if __name__ == "__main__":
    main()
