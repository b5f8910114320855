#!/usr/bin/env python3
"""Reads ordo-one/benchmark's histogramPercentiles export and prints the targets as ratios.

Usage: bench_ratios.py DIR   (the --path given to `swift package benchmark`)
"""
import sys  # noqa: E402  (--help before any other import or work)
if __name__ == "__main__" and ("-h" in sys.argv[1:] or "--help" in sys.argv[1:]):
    print(__doc__.strip())
    sys.exit(0)
import glob
import os
import re
import sys

UNITS = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0,
         "#": 1, "K": 1e3, "M": 1e6, "G": 1e9, "k": 1e3}


def load(directory):
    """{(benchmark name, metric): {percentile: value in base units (seconds or count)}}"""
    results = {}
    for path in glob.glob(os.path.join(directory, "*.histogram.percentiles.tsv")):
        name = os.path.basename(path)[: -len(".histogram.percentiles.tsv")]
        parts = name.split(".")
        metric = parts[-1]
        bench = ".".join(parts[2:-1]).replace("_", " ")  # baseline.target.NAME.metric
        with open(path, encoding="utf-8") as f:
            header = f.readline()
            unit = re.findall(r"\(([^()]*)\)\s*\*?\s*$", header.strip())
            scale = UNITS.get(unit[0], 1) if unit else 1
            values = {}
            for line in f:
                p, v = line.strip().split("\t")
                values[int(p)] = float(v) * scale
        results[(bench, metric)] = values
    return results


def p50(results, prefix, metric="wallClock"):
    """p50 of the benchmark named `prefix` exactly, else of the first whose name starts with it."""
    exact = results.get((prefix, metric))
    if exact is not None:
        return exact[50]
    for (bench, m), values in sorted(results.items()):
        if m == metric and bench.startswith(prefix):
            return values[50]
    return None


def line(label, value, target, ok):
    mark = "ok " if ok else "MISS"
    print(f"[{mark}] {label}: {value}  (target {target})")


# Issue 4: each coder's decode rate ≥ 0.9× the same C library called directly on the same bytes,
# from the "Paired decode …" benchmarks (PlainDecodeBenchmarks.swift): coder and library decode
# alternately, and the p50 of the per-pair ratios is the verdict (robust to the machine's drift).
# (format, megapixels per decode, the name between "Paired decode " and ": coder vs plain C")
DECODE_PAIRS = [
    ("JPEG", 1.0, "JPEG 1 MP"),
    ("PNG", 1.0, "PNG 1 MP RGBA"),
    ("WebP lossy", 1.0, "WebP lossy 1 MP"),
    ("WebP lossless", 1.0, "WebP lossless 1 MP"),
    ("GIF", 1.0, "GIF 1 MP (500×200 × 10 frames)"),
    ("AVIF", 1.0, "AVIF 1 MP"),
    ("HEIF", 1.0, "HEIF 1 MP"),
]


def paired(results, name):
    """(coder p50 s, plain p50 s, p50 of the paired ratios) or None."""
    bench = f"Paired decode {name}: coder vs plain C"
    values = [p50(results, bench, metric) for metric in ("coder_ns", "plain_ns", "ratio_permille")]
    if None in values:
        return None
    coder, plain, permille = values
    return coder * 1e-9, plain * 1e-9, permille / 1000


def decode_ratios(results):
    for name, megapixels, bench in DECODE_PAIRS:
        measured = paired(results, bench)
        if measured is None:
            continue
        coder, plain, ratio = measured
        line(f"{name} decode: coder {megapixels / coder:.1f} MP/s, plain C {megapixels / plain:.1f} MP/s; "
             "paired rate ratio, p50", f"{ratio:.2f}×", "≥ 0.9×", ratio >= 0.9)
    info = paired(results, "PNG 1 MP RGBA, plain without premultiplying")
    if info is not None:
        print(f"[info] PNG against libspng without premultiplying (straight alpha): {info[2]:.2f}×")


def main():
    results = load(sys.argv[1])
    if not results:
        sys.exit("no benchmark results found in " + sys.argv[1])
    print("p50 of every benchmark:")
    for (bench, metric), values in sorted(results.items()):
        unit = "s" if metric == "wallClock" else ""
        if metric in ("coder_ns", "plain_ns", "downloader_ns", "pipeline_ns", "downloader_decoder_ns", "extra_caller_ns", "floor_caller_ns"):
            metric, unit = metric[:-3], "s"
            values = {k: v * 1e-9 for k, v in values.items()}
        print(f"  {bench} [{metric}] p50 = {values[50]:.6g}{unit}")
    print()

    hit = p50(results, "Memory hit: image(for:)")
    if hit is not None:
        line("memory hit, async API, p50", f"{hit * 1e9:.0f} ns", "≤ 200 ns (issue 9)", hit <= 200e-9)
    sync = p50(results, "Memory hit: cachedImage(forKey:)")
    if sync is not None:
        line("memory hit, synchronous look-up, p50", f"{sync * 1e9:.0f} ns", "≤ 60 ns (issue 9)", sync <= 60e-9)
    overhead = p50(results, "Paired cold 1 MP JPEG: pipeline vs downloader + decoder", "ratio_permille")
    if overhead is not None:
        line("cold 1 MP JPEG: (downloader + decoder) ÷ pipeline, paired p50", f"{overhead / 1000:.3f}×",
             "≥ 0.952× (≤ 5 % overhead)", overhead / 1000 >= 1 / 1.05)
    per = p50(results, "10,000 callers of one URL: per extra caller", "extra_caller_ns")
    if per is not None:
        line("10,000 callers of one URL: cost per extra caller, p50", f"{per / 1000:.2f} µs", "≤ 3 µs", per <= 3000)
        floor = p50(results, "10,000 callers of one URL: floor per task", "floor_caller_ns")
        if floor is not None:
            print(f"      floor in the same run (10,000 tasks handed one shared object): {floor / 1000:.2f} µs each;"
                  f" pipeline ÷ floor {per / floor:.2f}×")
    cold, plain, decode = (p50(results, n) for n in ("Cold fetch + decode", "Plain AsyncHTTPClient download", "Plain TurboJPEG decode"))
    if None not in (cold, plain, decode):
        ratio = cold / (plain + decode)
        line("cold fetch + decode ÷ (plain download + plain decode)", f"{ratio:.2f}×", "≤ 1.2×", ratio <= 1.2)
    decode_ratios(results)

    batches = {}
    for kind in ("AsyncHTTPClient", "URLSession"):
        bench = f"Paired batch 2000 small + 20 large over {kind}: downloader vs plain loop"
        ours, plain, permille = (p50(results, bench, m) for m in ("downloader_ns", "plain_ns", "ratio_permille"))
        if None not in (ours, plain, permille):
            batches[kind] = ours, plain
            line(f"downloader over {kind}: batch {ours * 1e-6:.0f} ms vs plain {kind} loop {plain * 1e-6:.0f} ms; "
                 "paired throughput ratio, p50", f"{permille / 1000:.2f}×", "≥ 0.9×", permille / 1000 >= 0.9)
    if len(batches) == 2:
        ratio = batches["AsyncHTTPClient"][1] / batches["URLSession"][0]
        line("downloader over URLSession ÷ plain AsyncHTTPClient loop (medians; FoundationNetworking's own cost)",
             f"{ratio:.2f}×", "≥ 0.9×", ratio >= 0.9)
    one, many = p50(results, "Coalescing: 1 concurrent"), p50(results, "Coalescing: 1000 concurrent")
    if None not in (one, many):
        per = (many - one) / 999
        line("coalescing cost per extra caller", f"{per * 1e6:.2f} µs", "< 10 µs", per < 10e-6)
    baseline = p50(results, "Memory baseline", "peakMemoryResident")
    for kind in ("AsyncHTTPClient", "URLSession"):
        peak = p50(results, f"Download a 200 MB body over {kind}", "peakMemoryResident")
        if None not in (baseline, peak):
            rise = (peak - baseline) / 2**20
            line(f"200 MB body over {kind}: peak memory rise", f"{rise:.0f} MiB", "≤ 232 MiB", rise <= 232)


if __name__ == "__main__":
    main()
