"""Fixtures for the colour sources that are not an embedded ICC profile in JPEG/PNG/WebP/TIFF:
AVIF and HEIF `colr` (ICC and nclx), PNG gAMA + cHRM, JPEG XL colour encodings, BMP V5
profiles and calibrated RGB, CMYK JPEGs with a CMYK profile. Used by make-color-fixtures.py.

References (`<file>.<kind>.png`), all from the picture's stored values:
- `math`: numpy from the definitions (H.273 / PNG / BMP primaries, white and transfer curve ->
  XYZ, Bradford to D65, sRGB), independent of LittleCMS;
- `vips`: pyvips `icc_transform` (its built-in `p3` profile, or the embedded ICC file);
- `pillow`: Pillow ImageCms with the embedded ICC profile.
"""
import io
import os
import struct
import subprocess
import tempfile
import zlib

import numpy as np
from PIL import Image, ImageCms
import pyvips

COLORD = "/usr/share/color/icc/colord"
GS = "/usr/share/color/icc/ghostscript"
D65 = (0.3127, 0.3290)
BT709 = [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)]
P3 = [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)]
BT2020 = [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)]


def xyz(xy):
    x, y = xy
    return np.array([x / y, 1.0, (1 - x - y) / y])


def rgb_to_xyz(primaries, white):
    m = np.stack([xyz(p) for p in primaries], axis=1)
    s = np.linalg.solve(m, xyz(white))
    return m * s


def bradford(src_white, dst_white):
    b = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
    src, dst = b @ xyz(src_white), b @ xyz(dst_white)
    return np.linalg.inv(b) @ np.diag(dst / src) @ b


def tone_map(nits):
    """HDR to SDR as ARCHITECTURE "Colour" documents it: reference white 203 nits -> 1, extended
    Reinhard with white at 1,000 nits, clipped."""
    luminance, white = nits / 203.0, 1000.0 / 203.0
    return np.minimum(luminance * (1 + luminance / white ** 2) / (1 + luminance), 1)


def decode_curve(values, curve):
    if curve == "pq":  # SMPTE ST 2084
        m1, m2 = 2610 / 16384, 2523 / 4096 * 128
        c1, c2, c3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
        p = values ** (1 / m2)
        return tone_map(10000 * (np.maximum(p - c1, 0) / (c2 - c3 * p)) ** (1 / m1))
    if curve == "hlg":  # BT.2100: inverse OETF, then a 1,000-nit display's OOTF (gamma 1.2)
        a = 0.17883277
        b, c = 1 - 4 * a, 0.5 - a * np.log(4 * a)
        scene = np.where(values <= 0.5, values ** 2 / 3, (np.exp((values - c) / a) + b) / 12)
        return tone_map(1000 * scene ** 1.2)
    if curve == "srgb":
        return np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)
    return values ** curve  # a gamma exponent


def math_reference(rgb, primaries, white, curves):
    """`rgb` (H x W x 3 uint8) in the described space -> sRGB uint8, relative colorimetric, clipped."""
    values = rgb.astype(np.float64) / 255
    if not isinstance(curves, list):
        curves = [curves] * 3
    linear = np.stack([decode_curve(values[..., c], curves[c]) for c in range(3)], axis=-1)
    to_srgb = np.linalg.inv(rgb_to_xyz(BT709, D65)) @ bradford(white, D65) @ rgb_to_xyz(primaries, white)
    out = np.clip(linear @ to_srgb.T, 0, 1)
    encoded = np.where(out <= 0.0031308, 12.92 * out, 1.055 * out ** (1 / 2.4) - 0.055)
    return Image.fromarray(np.round(encoded * 255).astype(np.uint8), "RGB")


def vips_reference(rgb, profile):
    h, w, _ = rgb.shape
    image = pyvips.Image.new_from_memory(rgb.tobytes(), w, h, 3, "uchar").copy(interpretation="srgb")
    out = image.icc_transform("srgb", input_profile=profile, intent="perceptual", embedded=False).cast("uchar")
    return Image.frombytes("RGB", (out.width, out.height), out.write_to_memory())


def pillow_reference(image, icc):
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    out = ImageCms.profileToProfile(image, source, ImageCms.createProfile("sRGB"),
                                    renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    out.info.pop("icc_profile", None)  # Pillow's sRGB profile carries today's date: untagged is sRGB, and deterministic
    return out


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def with_chunks(png, chunks):
    """`png` with `chunks` inserted after IHDR."""
    return png[:33] + b"".join(png_chunk(k, b) for k, b in chunks) + png[33:]


def bmp_v5(image, cs_type, endpoints=(0,) * 9, gammas=(0, 0, 0), profile=b""):
    """A 24-bit bottom-up BMP with a BITMAPV5HEADER; the profile after the pixels."""
    w, h = image.size
    stride = (w * 3 + 3) & ~3
    rows = b""
    raw = image.tobytes()
    for y in range(h - 1, -1, -1):
        row = bytearray()
        for x in range(w):
            r, g, b = raw[3 * (y * w + x):3 * (y * w + x) + 3]
            row += bytes([b, g, r])
        rows += bytes(row) + bytes(stride - len(row))
    pixel_offset = 14 + 124
    profile_offset = 124 + len(rows) if profile else 0
    header = struct.pack("<IiiHHIIiiII", 124, w, h, 1, 24, 0, len(rows), 2835, 2835, 0, 0)
    header += struct.pack("<IIII", 0, 0, 0, 0)  # masks (unused for BI_RGB)
    header += struct.pack("<I", cs_type) + struct.pack("<9i", *endpoints) + struct.pack("<3I", *gammas)
    header += struct.pack("<IIII", 4, profile_offset, len(profile), 0)  # LCS_GM_IMAGES
    assert len(header) == 124
    body = header + rows + profile
    return b"BM" + struct.pack("<IHHI", 14 + len(body), 0, 0, pixel_offset) + body


def fixed_2_30(v):
    return int(round(v * (1 << 30)))


def write_sources(out, picture):
    """Writes the fixtures to `out` and returns their manifest entries."""
    os.makedirs(out, exist_ok=True)
    source = picture("RGB")
    rgb = np.asarray(source)
    adobe = open(f"{COLORD}/AdobeRGB1998.icc", "rb").read()
    manifest = []

    def entry(file, expect, refs, description=None, fn=None):
        manifest.append({"file": file, "expect": expect, "references": refs, "description": description or ""})

    def refs_for(file, references):
        for kind, image in references.items():
            image.save(os.path.join(out, f"{file}.{kind}.png"))
        return sorted(references)

    with tempfile.TemporaryDirectory() as tmp:
        src_png = os.path.join(tmp, "source.png")
        source.save(src_png)

        def avifenc(file, *args):
            subprocess.run(["avifenc", "-l", "-j", "1", *args, src_png, os.path.join(out, file)],
                           check=True, stdout=subprocess.DEVNULL)
            decoded = np.asarray(Image.open(os.path.join(out, file)).convert("RGB"))
            assert (decoded == rgb).all(), f"{file} is not lossless"

        def heif_copy(avif_file, heif_file):
            data = open(os.path.join(out, avif_file), "rb").read()
            size = struct.unpack(">I", data[:4])[0]
            ftyp = data[:size].replace(b"avif", b"mif1")
            open(os.path.join(out, heif_file), "wb").write(ftyp + data[size:])

        p3_refs = {"math": math_reference(rgb, P3, D65, "srgb"), "vips": vips_reference(rgb, "p3")}
        adobe_refs = {"pillow": pillow_reference(source, adobe), "vips": vips_reference(rgb, f"{COLORD}/AdobeRGB1998.icc")}

        # AVIF nclx: Display P3 (every iPhone photo), BT.2020 linear, and the untagged cases.
        avifenc("avif-nclx-p3.avif", "--cicp", "12/13/0")
        entry("avif-nclx-p3.avif", "converted", refs_for("avif-nclx-p3.avif", p3_refs), "Display P3")
        avifenc("avif-nclx-bt2020-linear.avif", "--cicp", "9/8/0")
        entry("avif-nclx-bt2020-linear.avif", "converted",
              refs_for("avif-nclx-bt2020-linear.avif", {"math": math_reference(rgb, BT2020, D65, 1.0)}), "BT.2020")
        avifenc("avif-nclx-p3-gamma22.avif", "--cicp", "12/4/0")
        entry("avif-nclx-p3-gamma22.avif", "converted",
              refs_for("avif-nclx-p3-gamma22.avif", {"math": math_reference(rgb, P3, D65, 2.2)}), "Display P3")
        # HDR: PQ and HLG tone-mapped to SDR (BT.2020 primaries).
        for name, transfer in [("pq", "16"), ("hlg", "18")]:
            avifenc(f"avif-nclx-bt2020-{name}.avif", "--cicp", f"9/{transfer}/0")
            entry(f"avif-nclx-bt2020-{name}.avif", "converted",
                  refs_for(f"avif-nclx-bt2020-{name}.avif", {"math": math_reference(rgb, BT2020, D65, name)}), "BT.2020")
        for name, cicp in [("srgb", "1/13/0"), ("bt709", "1/1/0"), ("unspecified", "2/2/0")]:
            avifenc(f"avif-nclx-{name}.avif", "--cicp", cicp)
            entry(f"avif-nclx-{name}.avif", "untagged", [])
        avifenc("avif-icc-adobe.avif", "--icc", f"{COLORD}/AdobeRGB1998.icc")
        entry("avif-icc-adobe.avif", "converted", refs_for("avif-icc-adobe.avif", adobe_refs), "Adobe RGB (1998)")

        # HEIF (libheif): the same AV1 items under HEIF brands.
        heif_copy("avif-nclx-p3.avif", "heif-nclx-p3.heif")
        entry("heif-nclx-p3.heif", "converted", refs_for("heif-nclx-p3.heif", p3_refs), "Display P3")
        heif_copy("avif-icc-adobe.avif", "heif-icc-adobe.heif")
        entry("heif-icc-adobe.heif", "converted", refs_for("heif-icc-adobe.heif", adobe_refs), "Adobe RGB (1998)")
        heif_copy("avif-nclx-srgb.avif", "heif-nclx-srgb.heif")
        entry("heif-nclx-srgb.heif", "untagged", [])

        # JPEG XL: an embedded ICC profile, and a colour encoding (Display P3) libjxl describes.
        adobe_png = os.path.join(tmp, "adobe.png")
        source.save(adobe_png, icc_profile=adobe)
        subprocess.run(["cjxl", "-d", "0", "-e", "3", "--quiet", adobe_png, os.path.join(out, "jxl-icc-adobe.jxl")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        entry("jxl-icc-adobe.jxl", "converted", refs_for("jxl-icc-adobe.jxl", adobe_refs), "Adobe RGB (1998)")
        subprocess.run(["cjxl", "-d", "0", "-e", "3", "--quiet", "-x", "color_space=RGB_D65_DCI_Rel_SRG", src_png,
                        os.path.join(out, "jxl-encoded-p3.jxl")], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        entry("jxl-encoded-p3.jxl", "converted", refs_for("jxl-encoded-p3.jxl", p3_refs), "RGB_D65_DCI")  # libjxl's name

    # PNG gAMA + cHRM (no iCCP, no sRGB).
    plain = io.BytesIO()
    source.save(plain, "PNG")
    png = plain.getvalue()
    chrm_p3 = struct.pack(">8I", *[round(v * 100000) for v in (*D65, *P3[0], *P3[1], *P3[2])])
    cases = [
        ("png-gama-chrm-p3.png", [(b"gAMA", struct.pack(">I", 45455)), (b"cHRM", chrm_p3)], (P3, 1 / 0.45455)),
        ("png-chrm-p3.png", [(b"cHRM", chrm_p3)], (P3, "srgb")),
        ("png-gama-18.png", [(b"gAMA", struct.pack(">I", 55556))], (BT709, 1 / 0.55556)),
    ]
    for file, chunks, (primaries, curve) in cases:
        open(os.path.join(out, file), "wb").write(with_chunks(png, chunks))
        entry(file, "converted", refs_for(file, {"math": math_reference(rgb, primaries, D65, curve)}), "PNG gAMA/cHRM")
    for file, chunks in [("png-gama-22.png", [(b"gAMA", struct.pack(">I", 45455))]),
                         ("png-srgb-wins.png", [(b"sRGB", b"\0"), (b"cHRM", chrm_p3)])]:
        open(os.path.join(out, file), "wb").write(with_chunks(png, chunks))
        entry(file, "untagged", [])

    # BMP V5: an embedded profile, calibrated RGB (Display P3 endpoints, gamma 2.2), sRGB.
    open(os.path.join(out, "bmp-v5-adobe.bmp"), "wb").write(bmp_v5(source, 0x4D424544, profile=adobe))
    entry("bmp-v5-adobe.bmp", "converted", refs_for("bmp-v5-adobe.bmp", adobe_refs), "Adobe RGB (1998)")
    m = rgb_to_xyz(P3, D65)
    endpoints = [fixed_2_30(m[row, column]) for column in range(3) for row in range(3)]
    gamma = int(round(2.2 * 65536))
    open(os.path.join(out, "bmp-v5-calibrated-p3.bmp"), "wb").write(bmp_v5(source, 0, endpoints, (gamma,) * 3))
    entry("bmp-v5-calibrated-p3.bmp", "converted",
          refs_for("bmp-v5-calibrated-p3.bmp", {"math": math_reference(rgb, P3, D65, gamma / 65536)}), "BMP calibrated RGB")
    open(os.path.join(out, "bmp-v5-srgb.bmp"), "wb").write(bmp_v5(source, 0x73524742))
    entry("bmp-v5-srgb.bmp", "untagged", [])

    # CMYK JPEG with a CMYK profile (ghostscript's, Debian libgs-common): ink values made from the
    # picture through the same profile, stored by Pillow (Adobe-inverted, with an Adobe marker).
    for name, path in [("default", f"{GS}/default_cmyk.icc")]:
        icc = open(path, "rb").read()
        cmyk = ImageCms.profileToProfile(source, ImageCms.createProfile("sRGB"), ImageCms.ImageCmsProfile(io.BytesIO(icc)),
                                         outputMode="CMYK")
        file = f"jpeg-cmyk-{name}.jpg"
        path_out = os.path.join(out, file)
        cmyk.save(path_out, "JPEG", quality=95, icc_profile=icc)
        decoded = Image.open(path_out)
        decoded.load()
        vips = pyvips.Image.new_from_file(path_out).icc_transform("srgb", intent="perceptual", embedded=True).cast("uchar")
        vips_image = Image.frombytes("RGB", (vips.width, vips.height), vips.write_to_memory())
        description = ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(icc))).strip()
        entry(file, "converted", refs_for(file, {"pillow": pillow_reference(decoded, icc), "vips": vips_image}), description)
        # The raw Adobe-inverted ink values, for a YCCK file the tests write with TurboJPEG.
        inverted = bytes(255 - v for v in decoded.tobytes())
        open(os.path.join(out, f"cmyk-{name}.inverted.raw"), "wb").write(inverted)
        pillow_reference(decoded, icc).save(os.path.join(out, f"cmyk-{name}.inverted.raw.pillow.png"))
    return manifest
