#!/usr/bin/env python3
"""Writes the inputs and the Pillow references of the processing tests.

    scripts/make-processing-references.py [--out Tests/WebImageTests/Fixtures/processing]

Makes two small inputs (64 x 48, a photo-like gradient with shapes: `opaque.png`, and the same
picture with varying alpha and a transparent hole: `rgba.png`), then for every case below applies
Pillow's version of the operation and writes `<input>-<case>.png`. `ProcessingReferenceTests`
decodes each input with WebImage's PNG coder, applies the WebImage processor of the same case
and compares with the reference (mean absolute error per channel, premultiplied).

Pillow has no rounded-corner, circle or tint operation: those references are built from Pillow
primitives (a mask drawn with ImageDraw at 8x and reduced by area averaging, alpha_composite,
blend); shrinking is exact area averaging made from NEAREST enlargement and `reduce`. Operations that interpolate run on premultiplied pixels ("RGBa"), as Pillow's own
resize and transform do for RGBA and as WebImage does everywhere. Installs Pillow if missing.
Deterministic: running it again writes the same files.
"""
import argparse
import math
import os
import subprocess
import sys

try:
    from PIL import Image, ImageChops, ImageDraw, ImageFilter
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "Pillow"], check=True)
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

WIDTH, HEIGHT = 64, 48
SUPERSAMPLE = 8


def make_opaque():
    image = Image.new("RGB", (WIDTH, HEIGHT))
    pixels = image.load()
    for y in range(HEIGHT):
        for x in range(WIDTH):
            pixels[x, y] = (x * 4, 40 + y * 4, 200 - (x + y) * 2)
    draw = ImageDraw.Draw(image)
    draw.ellipse([8, 6, 30, 28], fill=(250, 210, 40))
    draw.rectangle([36, 20, 58, 40], fill=(30, 60, 160))
    draw.line([0, 47, 63, 10], fill=(255, 255, 255), width=2)
    return image.convert("RGBA")


def make_rgba():
    image = make_opaque()
    alpha = Image.new("L", (WIDTH, HEIGHT))
    values = alpha.load()
    for y in range(HEIGHT):
        for x in range(WIDTH):
            values[x, y] = 255 - x * 2 - y
    draw = ImageDraw.Draw(alpha)
    draw.rectangle([44, 4, 56, 12], fill=0)       # a transparent hole
    draw.ellipse([10, 30, 24, 44], fill=128)      # a half-transparent disc
    image.putalpha(alpha)
    return image


# MARK: - Helpers

def premultiplied(image, operation):
    """Runs `operation` on premultiplied pixels and returns straight RGBA."""
    return operation(image.convert("RGBa")).convert("RGBA")


def shrink_axis(im, size):
    """Exact area averaging along the axes that shrink: every pixel repeated t/g times (NEAREST),
    then averaged in blocks of s/g (`reduce`), for s -> t with g = gcd(s, t). (Pillow's BOX
    filter would weigh whole pixels by where their centres fall, not by the area covered.)"""
    repeat = [1, 1]
    block = [1, 1]
    for axis in range(2):
        source, target = im.size[axis], size[axis]
        if target < source:
            g = math.gcd(source, target)
            repeat[axis], block[axis] = target // g, source // g
    enlarged = im.resize((im.width * repeat[0], im.height * repeat[1]), Image.NEAREST)
    return enlarged.reduce(tuple(block)) if block != [1, 1] else enlarged


def area_resize(image, size):
    return premultiplied(image, lambda im: shrink_axis(im, size))


def mixed_resize(image, size):
    """Each axis with its own filter: bilinear where it grows, area averaging where it shrinks."""
    def axis(im, new_size):
        if new_size[0] > im.width or new_size[1] > im.height:
            return im.resize(new_size, Image.BILINEAR)
        return shrink_axis(im, new_size)
    def operation(im):
        im = axis(im, (size[0], im.height))
        return axis(im, (size[0], size[1]))
    return premultiplied(image, operation)


def centre_crop(image, width, height):
    left, top = (image.width - width) // 2, (image.height - height) // 2
    return image.crop((left, top, left + width, top + height))


def mask(size, draw_shape):
    """An anti-aliased mask: the shape drawn at 8x, reduced by area averaging."""
    big = Image.new("L", (size[0] * SUPERSAMPLE, size[1] * SUPERSAMPLE), 0)
    draw_shape(ImageDraw.Draw(big), SUPERSAMPLE)
    return big.reduce(SUPERSAMPLE)


def rounded_mask(size, radius, inset=0):
    def shape(draw, s):
        box = [inset * s, inset * s, (size[0] - inset) * s - 1, (size[1] - inset) * s - 1]
        if box[2] > box[0] and box[3] > box[1]:
            draw.rounded_rectangle(box, radius=max(radius - inset, 0) * s, fill=255)
    return mask(size, shape)


def ellipse_mask(size, inset=0):
    def shape(draw, s):
        box = [inset * s, inset * s, (size[0] - inset) * s - 1, (size[1] - inset) * s - 1]
        if box[2] > box[0] and box[3] > box[1]:
            draw.ellipse(box, fill=255)
    return mask(size, shape)


def masked(image, outer, inner=None, border_color=None):
    """The border colour over the image outside `inner`, everything cut to `outer`."""
    result = image
    if inner is not None:
        ring = ImageChops.invert(inner)
        red, green, blue, alpha = border_color
        layer = Image.new("RGBA", image.size, (red, green, blue, 0))
        layer.putalpha(ImageChops.multiply(ring, Image.new("L", image.size, alpha)))
        result = Image.alpha_composite(image, layer)
    result = result.copy()
    result.putalpha(ImageChops.multiply(result.getchannel("A"), outer))
    return result


def rounded(image, radius, border=None):
    outer = rounded_mask(image.size, radius)
    if border is None:
        return masked(image, outer)
    width, color = border
    return masked(image, outer, rounded_mask(image.size, radius, inset=width), color)


def circle(image, border=None):
    side = min(image.size)
    square = centre_crop(image, side, side)
    outer = ellipse_mask(square.size)
    if border is None:
        return masked(square, outer)
    width, color = border
    return masked(square, outer, ellipse_mask(square.size, inset=width), color)


def rotate(image, degrees, background):
    """Clockwise, the canvas grown to hold the result, bilinear."""
    return premultiplied(image, lambda im: im.rotate(
        -degrees, resample=Image.BILINEAR, expand=True, fillcolor=premultiplied_color(background)))


def premultiplied_color(color):
    red, green, blue, alpha = color
    return tuple(round(c * alpha / 255) for c in (red, green, blue)) + (alpha,)


def tint(image, color):
    red, green, blue, alpha = color
    rgb = Image.blend(image.convert("RGB"), Image.new("RGB", image.size, (red, green, blue)), alpha / 255)
    result = rgb.convert("RGBA")
    result.putalpha(image.getchannel("A"))
    return result


def grayscale(image):
    return image.convert("LA").convert("RGBA")


def blur(image, radius):
    return premultiplied(image, lambda im: im.filter(ImageFilter.GaussianBlur(radius)))


# MARK: - Cases (the same names and parameters as ProcessingReferenceTests.swift)

CASES = {
    "resize-fit-40x40": lambda im: area_resize(im, (40, 30)),
    "resize-fill-32x32": lambda im: area_resize(centre_crop(im, 48, 48), (32, 32)),
    "resize-exact-100x30": lambda im: mixed_resize(im, (100, 30)),
    "resize-fit-upscale-96x96": lambda im: mixed_resize(im, (96, 72)),
    "crop-10-5-30-20": lambda im: im.crop((10, 5, 40, 25)),
    "crop-square": lambda im: centre_crop(im, 48, 48),
    "flip-h": lambda im: im.transpose(Image.FLIP_LEFT_RIGHT),
    "flip-v": lambda im: im.transpose(Image.FLIP_TOP_BOTTOM),
    "rotate-90": lambda im: im.transpose(Image.ROTATE_270),   # Pillow's ROTATE_n turn anticlockwise
    "rotate-180": lambda im: im.transpose(Image.ROTATE_180),
    "rotate-270": lambda im: im.transpose(Image.ROTATE_90),
    "rotate-30-white": lambda im: rotate(im, 30, (255, 255, 255, 255)),
    "rotate-200-clear": lambda im: rotate(im, 200, (0, 0, 0, 0)),
    "round-12": lambda im: rounded(im, 12),
    "round-10-border-3": lambda im: rounded(im, 10, (3, (200, 20, 20, 255))),
    "circle": lambda im: circle(im),
    "circle-border-4": lambda im: circle(im, (4, (255, 255, 255, 160))),
    "blur-1": lambda im: blur(im, 1),
    "blur-2.5": lambda im: blur(im, 2.5),
    "blur-6": lambda im: blur(im, 6),
    "tint-ff000080": lambda im: tint(im, (255, 0, 0, 128)),
    "grayscale": grayscale,
}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(root, "Tests/WebImageTests/Fixtures/processing"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    inputs = {"opaque": make_opaque(), "rgba": make_rgba()}
    for name, image in inputs.items():
        image.save(os.path.join(args.out, f"{name}.png"), optimize=True)
        for case, operation in CASES.items():
            operation(image).save(os.path.join(args.out, f"{name}-{case}.png"), optimize=True)
    print(f"wrote {len(inputs)} inputs and {len(inputs) * len(CASES)} references to {args.out}")


if __name__ == "__main__":
    main()
