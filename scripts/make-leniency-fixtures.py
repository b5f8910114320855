#!/usr/bin/env python3
"""Writes the leniency fixtures: files that break their format's rules the way real-world files
do, each next to the well-formed file it was made from.

    scripts/make-leniency-fixtures.py [--out Tests/WebImageTests/Fixtures/codecs]

Pillow (PyPI) writes the clean files (`lenient-<format>-clean.<ext>`); each rule's file is that
file with bytes changed here, so what a lenient decode must give is known: the clean file's
pixels (damaged metadata, junk, missing trailer), a part of them (truncation, a bad LZW code),
or a moved copy (a frame outside the screen). `LeniencyTests` checks each lenient decode and
that strict decoding refuses it. Deterministic.
"""
import argparse
import io
import os
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image, PngImagePlugin
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image, PngImagePlugin

W, H = 40, 30


def picture(seed=0):
    image = Image.new("RGB", (W, H))
    px = image.load()
    for y in range(H):
        for x in range(W):
            px[x, y] = ((x * 6 + seed * 60) % 256, (y * 8) % 256, ((x * y + seed) * 3) % 256)
    return image


def segments_end(jpeg):
    """Offset just after SOI + APP0 (Pillow writes JFIF APP0 first)."""
    assert jpeg[2:4] == b"\xff\xe0"
    return 4 + struct.unpack(">H", jpeg[4:6])[0]


def jpeg_fixtures(out):
    buffer = io.BytesIO()
    picture().save(buffer, "JPEG", quality=90)
    clean = buffer.getvalue()
    write(out, "lenient-jpeg-clean.jpg", clean)
    at = segments_end(clean)
    write(out, "lenient-jpeg-junk.jpg", clean[:at] + b"\x00\x11\x22\x33" + clean[at:])
    write(out, "lenient-jpeg-fill-bytes.jpg", clean[:at] + b"\xff\xff\xff" + clean[at:])
    write(out, "lenient-jpeg-stuffed-ff00.jpg", clean[:at] + b"\xff\x00" + clean[at:])
    adobe = b"\xff\xee" + struct.pack(">H", 2 + 7) + b"Adobe\x00\x64"  # 7 of the 12 bytes
    write(out, "lenient-jpeg-short-adobe.jpg", clean[:at] + adobe + clean[at:])
    exif = b"Exif\x00\x00" + b"XX\x2a\x00\xff\xff\xff\x7f" + b"\x00" * 8  # bad byte order, wild offset
    write(out, "lenient-jpeg-broken-exif.jpg", clean[:at] + b"\xff\xe1" + struct.pack(">H", 2 + len(exif)) + exif + clean[at:])
    density = bytearray(clean)
    density[14:18] = b"\x00\x00\x00\x00"  # JFIF x and y density 0 (APP0 data starts at 6: "JFIF\0", version, units)
    write(out, "lenient-jpeg-zero-density.jpg", bytes(density))
    scan = clean.index(b"\xff\xda")  # cut 60 % into the entropy-coded data
    write(out, "lenient-jpeg-truncated.jpg", clean[:scan + (len(clean) - scan) * 6 // 10])


def gif_parts(data):
    """Header + logical screen (13 bytes), global table, rest."""
    flags = data[10]
    table = 3 * (2 ** ((flags & 7) + 1)) if flags & 0x80 else 0
    return data[:13], data[13:13 + table], data[13 + table:]


def gif_fixtures(out):
    # Four colours: LZW minimum code size 2, so a run of 0xFF bytes holds codes past the table.
    palette = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
    frames = []
    for seed in range(2):
        frame = Image.new("P", (W, H))
        frame.putpalette(palette)
        frame.putdata([((x // 5 + y // 5 + seed) % 4) for y in range(H) for x in range(W)])
        frames.append(frame)
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0, optimize=False)
    clean = buffer.getvalue()
    write(out, "lenient-gif-clean.gif", clean)
    head, table, rest = gif_parts(clean)
    assert clean.endswith(b";")
    write(out, "lenient-gif-no-trailer.gif", clean[:-1])
    blocks = gif_blocks(clean)
    descriptors = [at for kind, at in blocks if kind == "image"]
    # Frame outside the logical screen: the first image descriptor moved 25 px right.
    moved = bytearray(clean)
    moved[descriptors[0] + 1:descriptors[0] + 3] = struct.pack("<H", 25)
    write(out, "lenient-gif-outside.gif", bytes(moved))
    # Zero-size logical screen.
    zero = bytearray(clean)
    zero[6:10] = b"\x00\x00\x00\x00"
    write(out, "lenient-gif-zero-screen.gif", bytes(zero))
    # Bad LZW codes: the second frame's data replaced, after its first code, by all-ones codes
    # (beyond the code table).
    bad = bytearray(clean)
    data_start = descriptors[1] + 10 + local_table_size(clean, descriptors[1]) + 1  # then the LZW minimum code size
    block_length = bad[data_start]
    for i in range(data_start + 2, data_start + 1 + block_length):
        bad[i] = 0xFF
    write(out, "lenient-gif-bad-lzw.gif", bytes(bad))
    # Local palettes without a global one (valid GIF), and no palette at all.
    flags = head[10] & 0x07
    no_global = bytearray(head)
    no_global[10] &= 0x7F
    local = bytearray()
    position = 13 + len(table)
    for at in descriptors:
        if local_table_size(clean, at):
            continue  # already has its own
        local += clean[position:at + 9] + bytes([0x80 | flags]) + table
        position = at + 10
    local += clean[position:]
    write(out, "lenient-gif-local-palettes.gif", bytes(no_global) + bytes(local))
    # No palette at all: no global one, and the local ones dropped too.
    bare = bytearray(rest)
    for at in reversed(descriptors):
        size = local_table_size(clean, at)
        if size:
            offset = at - 13 - len(table)
            bare[offset + 9] &= 0x7F
            del bare[offset + 10:offset + 10 + size]
    write(out, "lenient-gif-no-palette.gif", bytes(no_global) + bytes(bare))
    # Transparent index 200 in a four-colour palette (the graphic control extension's).
    gce = clean.index(b"\x21\xf9\x04")
    beyond = bytearray(clean)
    beyond[gce + 3] |= 0x01
    beyond[gce + 6] = 200
    write(out, "lenient-gif-transparent-beyond.gif", bytes(beyond))
    wide_code_fixtures(out, clean, descriptors)


def wide_code_fixtures(out, clean, descriptors):
    """The first frame's data re-encoded with LZW minimum code size 11 (GIF allows 2-8; browsers
    and Pillow accept up to 11): the same indices, so the clean file's frames are the reference,
    and Pillow's decode of the file must equal them. Also the file cut inside that frame's data,
    and with a code beyond the table in it."""
    first = Image.open(io.BytesIO(clean))
    indices = list(first.get_flattened_data())
    at = descriptors[0] + 10 + local_table_size(clean, descriptors[0])
    end = at + 1
    while clean[end] != 0:
        end += clean[end] + 1
    blocks = lzw_blocks(lzw_codes(indices, 11))
    wide = clean[:at] + bytes([11]) + blocks + clean[end + 1:]
    assert list(Image.open(io.BytesIO(wide)).get_flattened_data()) == indices  # Pillow decodes it to the same indices
    write(out, "lenient-gif-wide-codes.gif", wide)
    write(out, "lenient-gif-wide-codes-truncated.gif", wide[:at + 1 + len(blocks) // 2])
    bad = bytearray(wide)
    bad[at + 1 + 1 + 150:at + 1 + 1 + 153] = b"\xff\xff\xff"  # inside the first sub-block: code 4095, beyond the table
    write(out, "lenient-gif-wide-codes-bad-code.gif", bytes(bad))


def lzw_codes(indices, minimum):
    """GIF LZW codes for `indices` with minimum code size 9-11, whose codes start at (and stay)
    12 bits wide: (code, width) pairs, clear first, end last, a clear whenever the table is full."""
    assert 9 <= minimum <= 11
    clear, width = 1 << minimum, 12
    codes, table, nxt, prefix = [(clear, width)], {}, clear + 2, None
    for value in indices:
        if prefix is not None and (prefix, value) in table:
            prefix = table[(prefix, value)]
            continue
        if prefix is not None:
            codes.append((prefix, width))
            if nxt < 4096:
                table[(prefix, value)] = nxt
                nxt += 1
            else:
                codes.append((clear, width))
                table, nxt = {}, clear + 2
        prefix = value
    return codes + [(prefix, width), (clear + 1, width)]


def lzw_blocks(codes):
    """Codes packed least significant bit first into 255-byte sub-blocks and a terminator."""
    bits, count, data = 0, 0, bytearray()
    for code, size in codes:
        bits |= code << count
        count += size
        while count >= 8:
            data.append(bits & 0xFF)
            bits >>= 8
            count -= 8
    if count:
        data.append(bits & 0xFF)
    out = bytearray()
    for i in range(0, len(data), 255):
        out += bytes([len(data[i:i + 255])]) + data[i:i + 255]
    return bytes(out) + b"\0"


def local_table_size(data, descriptor):
    packed = data[descriptor + 9]
    return 3 * (2 ** ((packed & 7) + 1)) if packed & 0x80 else 0


def gif_blocks(data):
    """(kind, offset) of every extension and image descriptor, walking the block structure."""
    head, table, _ = gif_parts(data)
    at = 13 + len(table)
    blocks = []
    while at < len(data) and data[at] != 0x3B:
        if data[at] == 0x21:
            blocks.append(("extension", at))
            at += 2
        elif data[at] == 0x2C:
            blocks.append(("image", at))
            packed = data[at + 9]
            at += 10 + (3 * (2 ** ((packed & 7) + 1)) if packed & 0x80 else 0) + 1
        else:
            raise ValueError(f"unexpected byte {data[at]:#x} at {at}")
        while data[at] != 0:  # sub-blocks
            at += data[at] + 1
        at += 1
    return blocks


def png_fixtures(out):
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "a text chunk whose CRC will be broken")
    buffer = io.BytesIO()
    picture(1).save(buffer, "PNG", pnginfo=info, compress_level=0)
    clean = buffer.getvalue()
    write(out, "lenient-png-clean.png", clean)
    at = clean.index(b"tEXt")
    length = struct.unpack(">I", clean[at - 4:at])[0]
    crc = at + 4 + length
    bad = bytearray(clean)
    bad[crc] ^= 0xFF
    write(out, "lenient-png-bad-text-crc.png", bytes(bad))
    # Real-world PNGs carry their image data in many IDAT chunks (libpng writes 8 KB ones):
    # re-chunked into 256-byte IDATs, then cut in the middle of one half-way through.
    chunked = rechunk_idat(clean, 256)
    write(out, "lenient-png-chunked.png", chunked)
    idats = [i for i in range(len(chunked)) if chunked[i:i + 4] == b"IDAT"]
    cut = idats[len(idats) // 2] + 4 + 100
    write(out, "lenient-png-truncated.png", chunked[:cut])
    # A 1-bit grey image whose tRNS grey value is 255 (as Pillow writes it for mode "1"): libpng
    # keeps the low bit (white is transparent); the clean file says 1.
    bilevel = picture(1).convert("1", dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    bilevel.save(buffer, "PNG", transparency=1)
    clean = buffer.getvalue()
    write(out, "lenient-png-grey-trns-clean.png", clean)
    at = clean.index(b"tRNS")
    wide = clean[:at - 4] + chunk(b"tRNS", b"\x00\xff") + clean[at + 4 + 2 + 4:]
    write(out, "lenient-png-grey-trns-wide.png", wide)


def container_fixtures(out):
    """Rules found by scripts/corpus-agreement in Pillow's test images: an ICO directory entry
    whose size is too small for its bitmap (read from its offset to the end, as Chromium and
    Pillow do), a palette BMP whose pixel offset points at its palette (the pixels follow the
    palette, as Pillow reads it), an AVIF without the `pixi` property libavif's strict mode
    requires (its box renamed `free`: browsers decode such files)."""
    buffer = io.BytesIO()
    picture(2).resize((16, 16)).convert("RGBA").save(buffer, "ICO", bitmap_format="bmp", sizes=[(16, 16)])
    clean = buffer.getvalue()
    write(out, "lenient-ico-clean.ico", clean)
    short = bytearray(clean)
    short[14:18] = struct.pack("<I", 8)  # the first entry's byte size
    write(out, "lenient-ico-short-entry-size.ico", bytes(short))

    buffer = io.BytesIO()
    picture(3).quantize(colors=16, dither=Image.Dither.NONE).save(buffer, "BMP")
    clean = buffer.getvalue()
    write(out, "lenient-bmp-clean.bmp", clean)
    header_size = struct.unpack("<I", clean[14:18])[0]
    at_palette = bytearray(clean)
    at_palette[10:14] = struct.pack("<I", 14 + header_size)
    write(out, "lenient-bmp-offset-at-palette.bmp", bytes(at_palette))

    buffer = io.BytesIO()
    picture(4).save(buffer, "AVIF", quality=90)
    clean = buffer.getvalue()
    assert clean.count(b"pixi") == 1
    write(out, "lenient-avif-clean.avif", clean)
    write(out, "lenient-avif-no-pixi.avif", clean.replace(b"pixi", b"free"))


def rechunk_idat(png, size):
    chunks, at = [], 8
    while at < len(png):
        length = struct.unpack(">I", png[at:at + 4])[0]
        chunks.append((png[at + 4:at + 8], png[at + 8:at + 8 + length]))
        at += 12 + length
    data = b"".join(body for kind, body in chunks if kind == b"IDAT")
    out = bytearray(png[:8])
    wrote_idat = False
    for kind, body in chunks:
        if kind != b"IDAT":
            out += chunk(kind, body)
        elif not wrote_idat:
            for i in range(0, len(data), size):
                out += chunk(b"IDAT", data[i:i + size])
            wrote_idat = True
    return bytes(out)


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="Tests/WebImageTests/Fixtures/codecs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    jpeg_fixtures(args.out)
    gif_fixtures(args.out)
    png_fixtures(args.out)
    container_fixtures(args.out)


if __name__ == "__main__":
    main()
