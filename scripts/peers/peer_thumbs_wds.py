"""The webdataset side of scripts/peers/peer-thumbs --p2-webdataset (used by peer_thumbs_bench.py):
reading back the tar shards a run wrote, and checking that webimage read the origin's robots.txt."""
import os
import tarfile

import peer_alternate as alt


def shard_images(cmd, shard_size):
    """(where, JPEG bytes) of every sample of the tar shards in cmd.out (hidden names — a shard not
    yet renamed — do not count). Every sample must hold a .jpg and a .json (webimage writes a failed
    row as a sample with only its .json; img2dataset leaves it out, which the caller's count
    catches), keys are unique across shards, and no shard holds more than shard_size samples."""
    names = sorted(os.listdir(cmd.out))
    shards = [n for n in names if n.endswith(".tar") and not n.startswith(".")]
    if not shards:
        raise alt.Failed(f"{cmd.name}: no tar shard in {cmd.out} (it holds {names[:12]})")
    images, keys = [], set()
    for shard in shards:
        samples = {}
        with tarfile.open(os.path.join(cmd.out, shard)) as tar:
            for member in tar:
                if not member.isfile():
                    continue
                key, _, ext = os.path.basename(member.name).partition(".")  # webdataset's key: up to the first dot
                samples.setdefault(key, {})[ext] = tar.extractfile(member).read() if ext == "jpg" else None
        if len(samples) > shard_size:
            raise alt.Failed(f"{cmd.name}: {shard} holds {len(samples)} samples, more than the shard size {shard_size}")
        for key, parts in sorted(samples.items()):
            if "jpg" not in parts or "json" not in parts:
                raise alt.Failed(f"{cmd.name}: sample {key} of {shard} has {sorted(parts)}, not jpg and json "
                                 "(a failed row?)")
            if key in keys:
                raise alt.Failed(f"{cmd.name}: key {key} twice (again in {shard})")
            keys.add(key)
            images.append((f"{shard}:{key}.jpg", parts["jpg"]))
    return images


class RobotsCheck:
    """nginx logs only /robots.txt ("status user-agent" a line): each run of `reader` (webimage) must
    add exactly one 200 line (one host, one fetch of robots.txt a run), any other command none
    (img2dataset reads no robots.txt)."""

    def __init__(self, log, reader):
        self.log, self.reader, self.seen = log, reader, 0

    def __call__(self, cmd):
        lines = open(self.log, errors="replace").read().splitlines() if os.path.exists(self.log) else []
        new, self.seen = lines[self.seen:], len(lines)
        want = 1 if cmd.name == self.reader else 0
        if len(new) != want or (want and not new[0].startswith("200 ")):
            raise alt.Failed(f"{cmd.name}: {len(new)} requests for /robots.txt in this run ({new[:3]}), "
                             f"expected {want}{' answered 200' if want else ''}")
