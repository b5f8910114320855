#!/usr/bin/env python3
"""Writes the APNG, BMP and ICO/CUR fixtures of CoderFixtureTests and their reference decodes.

    scripts/make-coder-fixtures.py [--out Tests/WebImageTests/Fixtures/coders]

Every fixture NAME.EXT comes with NAME.rgba: the straight-alpha RGBA8 pixels it must decode to,
all frames one after the other, and one line in manifest.json (size, frame count, delays in ms
as a browser plays them, loop count, how exact the comparison is, and whether Pillow's own
decode agreed).

- APNG: written here (struct + zlib) in every colour type and bit depth, with every dispose and
  blend operation, frame regions with offsets, IDAT and fdAT split over several chunks, delays
  with a 0 denominator, the default image in or out of the animation; one made by Debian's
  `apngasm` from PNG frames (when installed). References are composited here from the known
  samples by the APNG specification's rules and compared with Pillow's decode: Pillow departs
  from the specification in a few places (background disposal fills with black in modes
  without alpha, `over` blending of translucent pixels, 16-bit grey clamps, previous disposal of
  the first frame), and the manifest says where (`pillow: false`).
- BMP and ICO/CUR: written here (struct) for every depth and compression; the reference is
  Pillow's decode (Image.open(...).convert("RGBA")), except where noted: RLE deltas (skipped
  pixels are transparent in browsers, palette index 0 in Pillow, so the reference is written
  here), 5- and 6-bit channels (Pillow truncates v * 255 / 31, browsers round: `within1`), and
  CUR (Pillow's CUR reader ignores the AND mask: the reference is Pillow's ICO decode of the same
  entries).

The writers live in scripts/coder_fixtures/ (apng.py, bitmaps.py, common.py).
Deterministic: running it again writes the same files. Installs Pillow if missing.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coder_fixtures import apng, bitmaps, common  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "Tests", "WebImageTests",
                                                      "Fixtures", "coders"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    apng.make_apng(args.out)
    bitmaps.make_bmp(args.out)
    bitmaps.make_ico(args.out)
    common.write_manifest(args.out)
    disagree = sorted(n for n, e in common.MANIFEST.items() if e.get("pillow") is False)
    print(f"{len(common.MANIFEST)} fixtures in {os.path.relpath(args.out)}; Pillow's decode differs from the reference for: "
          + ", ".join(disagree))


if __name__ == "__main__":
    main()

