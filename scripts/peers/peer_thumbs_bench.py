"""The commands scripts/peers/peer-thumbs alternates, the check of their output, and the ratios it prints."""
import sys  # noqa: E402  (--help before any other import or work)
if __name__ == "__main__" and ("-h" in sys.argv[1:] or "--help" in sys.argv[1:]):
    print(__doc__.strip())
    sys.exit(0)
import io
import json
import math
import os
import sys

import peer_alternate as alt
import peer_thumbs_wds as wds

from peer_thumbs import BOX, QUALITY  # noqa: E402  (one definition of the work)


def expected_sizes(corpus):
    """Each source's thumbnail size: inside BOX × BOX, aspect kept (±1 pixel of rounding allowed)."""
    sizes = []
    for entry in json.load(open(os.path.join(corpus, "manifest.json"))):
        w, h = entry["width"], entry["height"]
        scale = min(BOX / w, BOX / h, 1.0)
        sizes.append((max(1, round(w * scale)), max(1, round(h * scale))))
    return sorted(sizes, key=by_shape)


def by_shape(size):
    """Sort order that a pixel of rounding cannot move across the corpus's aspect ratios."""
    return size[0] / size[1], size


def make_check(expected, shard_size=None):
    """Checks a run's JPEG files, or with shard_size the samples of its webdataset tar shards."""
    from PIL import Image

    def check(cmd):
        if shard_size:
            images = [(where, io.BytesIO(data)) for where, data in wds.shard_images(cmd, shard_size)]
        else:
            images = [(p, p) for p in sorted(os.path.join(d, f) for d, _, names in os.walk(cmd.out) for f in names
                                             if f.lower().endswith((".jpg", ".jpeg")))]
        if len(images) != len(expected):
            raise alt.Failed(f"{cmd.name}: wrote {len(images)} JPEGs into {cmd.out}, expected {len(expected)}")
        got = []
        for where, source in images:
            with Image.open(source) as image:
                if image.format != "JPEG":
                    raise alt.Failed(f"{cmd.name}: {where} is {image.format}, not JPEG")
                got.append(image.size)
        for (gw, gh), (ew, eh) in zip(sorted(got, key=by_shape), expected):
            if abs(gw - ew) > 1 or abs(gh - eh) > 1:
                raise alt.Failed(f"{cmd.name}: a thumbnail of {gw}x{gh} where {ew}x{eh} was expected "
                                 f"(fit inside {BOX}x{BOX}); sizes written: {sorted(set(got))[:12]}")
    return check


def commands(args, count):
    here = os.path.dirname(os.path.abspath(__file__))
    py, script = os.path.join(args.venv, "bin", "python"), os.path.join(here, "peer_thumbs.py")
    out = lambda name: os.path.join(args.work, "out", name)  # noqa: E731
    concurrency = "2" if args.mode == "default" else "16"
    webdataset = args.mode == "p2-webdataset"
    shard_size = str(math.ceil(count / 2))  # img2dataset's 2 processes: one shard each
    fetch = [args.binary, "fetch", "--input", args.urls, "--output", out("webimage"),
             "--resize", f"{BOX}x{BOX}", "--format", "jpeg", "--concurrency", concurrency, "--json"]
    if webdataset:
        fetch += ["--output-format", "webdataset", "--shard-size", shard_size]
    label = f"concurrency {concurrency}{', webdataset' if webdataset else ''}"
    if getattr(args, "with_cache", False):
        # The default disk cache on, cold: a new cache folder for every run (each original and
        # each thumbnail variant is stored), as a first bulk run meets it.
        caches = os.path.join(args.work, "caches")
        os.makedirs(caches, exist_ok=True)
        webimage = alt.Command(f"webimage fetch ({label}, cache on)", [
            "/bin/sh", "-c", f'exec "$@" --cache-dir "$(mktemp -d -p {caches})"', "sh"] + fetch, out=out("webimage"))
    else:
        webimage = alt.Command(f"webimage fetch ({label})", fetch + ["--no-cache"], out=out("webimage"))
    if args.mode == "default":
        return webimage, [
            (alt.Command("Pillow (2 processes)", [py, script, "pillow", args.urls, out("pillow"), "--processes", "2"],
                         out=out("pillow")), "speed", 1.0),
            (alt.Command("pyvips (2 threads)", [py, script, "vips", args.urls, out("pyvips"), "--threads", "2"],
                         out=out("pyvips")), "speed", 1.25),
        ]
    def img2dataset(name, folder, extras, output_format="files"):
        return alt.Command(name, [
            os.path.join(args.venv, "bin", "img2dataset"), "--url_list", args.urls, "--input_format", "txt",
            "--output_folder", out(folder), "--output_format", output_format,
            "--processes_count", "2", "--thread_count", "16", "--number_sample_per_shard", shard_size,
            "--image_size", str(BOX), "--resize_mode", "keep_ratio_largest",
            "--encode_format", "jpg", "--encode_quality", str(QUALITY), "--enable_wandb", "False"] + extras,
            out=out(folder),
            env={"NO_ALBUMENTATIONS_UPDATE": "1", "WANDB_MODE": "disabled", "WANDB_SILENT": "true"})
    # As img2dataset is usually run: its own defaults (EXIF extraction, SHA-256 of each image,
    # X-Robots-Tag checks) — only the work (2 × 16, size, format, quality) set like the others'.
    if webdataset:  # the "same output format (webdataset) and politeness on": ≥ 4×
        return webimage, [(img2dataset("img2dataset (2x16, webdataset, defaults)", "img2dataset-wds", [],
                                       "webdataset"), "speed", 4.0)]
    usual = img2dataset("img2dataset (2x16, its defaults)", "img2dataset-defaults", [])
    # Lean: everything beyond fetching and resizing turned off — the fastest img2dataset there is.
    lean = img2dataset("img2dataset (2x16, extras off)", "img2dataset", [
        "--extract_exif", "False", "--compute_hash", "None",
        "--disallowed_header_directives", "[]", "--retries", "0", "--timeout", "60"])
    return webimage, [
        (usual, "speed", 9.5),
        (lean, "speed", 9.5),
        (alt.Command("requests + pyvips (16 threads)",
                     [py, script, "vips", args.urls, out("pool"), "--threads", "16", "--requests"],
                     out=out("pool")), "speed", 1.56),
        (alt.Command("decode limit (Pillow, 2 proc)",
                     [py, script, "limit", args.corpus, out("limit"), "--processes", "2"],
                     out=out("limit")), "limit", 1.15),
    ]


def versions():
    import importlib.metadata as meta
    import PIL
    import pyvips
    libvips = ".".join(str(pyvips.version(i)) for i in range(3))
    return (f"Pillow {PIL.__version__}, pyvips {meta.version('pyvips')} (libvips {libvips}), "
            f"requests {meta.version('requests')}, img2dataset {meta.version('img2dataset')}")


def bench(args):
    print(versions())
    expected = expected_sizes(args.corpus)
    base, peers = commands(args, len(expected))
    cmds = [base] + [c for c, _, _ in peers]
    check = make_check(expected)
    if args.mode == "p2-webdataset":  # the tars' samples, and webimage's one robots.txt request a run
        samples = make_check(expected, math.ceil(len(expected) / 2))
        robots = wds.RobotsCheck(os.path.join(args.work, "robots.log"), base.name)

        def check(cmd):
            samples(cmd)
            robots(cmd)
    logs = os.path.join(args.work, "logs")
    os.makedirs(logs, exist_ok=True)
    print(f"{len(cmds)} commands, 1 warm-up round + {args.runs} counted rounds, order rotated each round", file=sys.stderr)
    try:
        results = alt.run(cmds, args.runs, check, logs)
    except alt.Failed as failure:
        sys.exit(f"peer-thumbs: FAILED: {failure}")
    alt.report(results, base.name, [(c.name, kind, target) for c, kind, target in peers])
    print("(speed ratios are peer time / webimage time: above 1.0 means webimage finished first; "
          "the decode limit's time is its work only, without start-up and file reading)")
