"""What every fixture writer shares: the manifest, Pillow's decode, bit packing."""
import json
import os
import subprocess
import sys

try:
    from PIL import Image
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image

MANIFEST = {}


def save(out, name, ext, data, width, height, frames, delays=None, loop=None, match="exact", pillow=None):
    with open(os.path.join(out, f"{name}.{ext}"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, f"{name}.rgba"), "wb") as f:
        for frame in frames:
            f.write(bytes(frame))
    entry = {"file": f"{name}.{ext}", "width": width, "height": height, "frames": len(frames), "match": match}
    if delays is not None:
        entry["delays"] = delays
    if loop is not None:
        entry["loop"] = loop
    if pillow is not None:
        entry["pillow"] = pillow
    MANIFEST[name] = entry


def pillow_frames(path):
    """Pillow's decode: every frame as straight RGBA bytes."""
    im = Image.open(path)
    frames = []
    for index in range(getattr(im, "n_frames", 1)):
        im.seek(index)
        frames.append(list(im.convert("RGBA").tobytes()))
    return frames, im


def pack_bits(values, bits):
    """Values of fewer than 8 bits packed most significant first, the last byte padded with 0."""
    out, acc, count = bytearray(), 0, 0
    for v in values:
        acc, count = (acc << bits) | v, count + bits
        if count == 8:
            out.append(acc)
            acc, count = 0, 0
    if count:
        out.append(acc << (8 - count))
    return bytes(out)



def write_manifest(out):
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(MANIFEST, f, indent=1, sort_keys=True)
        f.write("\n")
