"""Runs whole commands alternately and prints medians and ratios (used by scripts/peers/peer-thumbs).

Each round runs every command once, the order rotated round by round (A B C, B C A, …) so that
none always goes first; a warm-up round comes first and is not counted. Before each run the
command's output folder is emptied (not timed); after it the exit status must be 0 and the
folder is checked by the caller's `check` (any failure stops the whole measurement: a wrong
result is not a time). A command that prints `WORK_SECONDS=<s>` on stdout (the decode-limit run)
is timed by that figure instead of its wall time: the work without process start-up and reading
the files. Each command runs in its own process group: a run over the time limit, Ctrl-C or
SIGTERM kill the whole group (workers included).

    import peer_alternate as alt
    cmds = [alt.Command("webimage", ["webimage", "fetch", …], out="/tmp/a"), …]
    results = alt.run(cmds, 7, my_check, log_dir)   # my_check(cmd) raises alt.Failed
    alt.report(results, base="webimage", comparisons=[("Pillow", "speed", 1.0)])
"""
import sys  # noqa: E402  (--help before any other import or work)
if __name__ == "__main__" and ("-h" in sys.argv[1:] or "--help" in sys.argv[1:]):
    print(__doc__.strip())
    sys.exit(0)
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Command:
    name: str
    argv: list
    out: str
    env: dict = field(default_factory=dict)
    walls: list = field(default_factory=list)   # seconds, one per counted run
    cpus: list = field(default_factory=list)    # user + sys seconds of the process tree
    rss: list = field(default_factory=list)     # peak RSS of the largest process, MB
    times: list = field(default_factory=list)   # WORK_SECONDS if printed, else wall


class Failed(Exception):
    pass


# One thread only, so that signals interrupt the main thread's wait4 at once.
running = [None]     # the pid (= process group) of the command being timed
timed_out = [False]


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def on_alarm(_signum, _frame):
    timed_out[0] = True
    if running[0]:
        kill_group(running[0])


def stop(signum, _frame):
    """Ctrl-C or SIGTERM: the running command's whole group goes too, then exit 128 + signal."""
    if running[0]:
        kill_group(running[0])
    sys.exit(128 + signum)


def run_once(cmd, log_dir, timeout):
    shutil.rmtree(cmd.out, ignore_errors=True)
    os.makedirs(cmd.out)
    log = os.path.join(log_dir, cmd.name.replace(" ", "_"))
    env = dict(os.environ, **cmd.env)
    with open(log + ".out", "wb") as out, open(log + ".err", "wb") as err:
        start = time.perf_counter()
        # Its own process group, so that a hung command and all its workers can be killed at once.
        proc = subprocess.Popen(cmd.argv, stdout=out, stderr=err, env=env, start_new_session=True)
        running[0], timed_out[0] = proc.pid, False
        signal.alarm(timeout)                     # SIGALRM: a hung command is killed, then reported
        _, status, usage = os.wait4(proc.pid, 0)  # the OS's own accounting of the finished tree
        signal.alarm(0)
        running[0] = None
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if timed_out[0]:
        raise Failed(f"{cmd.name}: still running after {timeout} s (killed)")
    if proc.returncode != 0:
        tail = open(log + ".err", errors="replace").read()[-2000:]
        raise Failed(f"{cmd.name}: exit status {proc.returncode}\n  command: {' '.join(cmd.argv)}\n{tail}")
    work = wall
    for line in open(log + ".out", errors="replace"):
        if line.startswith("WORK_SECONDS="):
            work = float(line.split("=", 1)[1])
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, work


def run(commands, runs, check, log_dir, warmup=1, timeout=900):
    """Alternates `commands` for `warmup` + `runs` rounds; `check(cmd)` raises Failed on a bad output."""
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, on_alarm)
    for r in range(warmup + runs):
        shift = r % len(commands)
        seen = {}
        for cmd in commands[shift:] + commands[:shift]:
            wall, cpu, rss, work = run_once(cmd, log_dir, timeout)
            check(cmd)
            seen[cmd.name] = work
            if r >= warmup:
                cmd.walls.append(wall); cmd.cpus.append(cpu); cmd.rss.append(rss); cmd.times.append(work)
        label = "warm-up" if r < warmup else f"run {r - warmup + 1}/{runs}"
        print(f"  {label}: " + ", ".join(f"{c.name} {seen[c.name]:.2f} s" for c in commands), file=sys.stderr, flush=True)
    return {c.name: c for c in commands}


def spread(values, fmt="{:.3f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def report(results, base, comparisons):
    """Prints each command's medians, then for each (peer, kind, target):
    kind "speed": peer time / base time (above 1.0: base is faster), target a minimum;
    kind "limit": base time / peer time (how far base is above a lower bound), target a maximum."""
    print(f"{'command':<34} {'time s median (min–max)':<26} {'cpu s':>7} {'peak MB':>8}")
    for c in results.values():
        timed = f"  [work only; whole command {statistics.median(c.walls):.3f}]" if c.times != c.walls else ""
        print(f"{c.name:<34} {spread(c.times):<26} {statistics.median(c.cpus):>7.2f} {max(c.rss):>8.0f}{timed}")
    b = results[base]
    for peer, kind, target in comparisons:
        p = results[peer]
        if kind == "speed":
            of_medians = statistics.median(p.times) / statistics.median(b.times)
            pairs = [pt / bt for pt, bt in zip(p.times, b.times)]
            ok = of_medians >= target
            what, bound = f"{base} speed vs {peer}", f"target ≥ {target:.2f}x"
        else:
            of_medians = statistics.median(b.times) / statistics.median(p.times)
            pairs = [bt / pt for pt, bt in zip(p.times, b.times)]
            ok = of_medians <= target
            what, bound = f"{base} time / {peer} time", f"target ≤ {target:.2f}x"
        print(f"[{'ok ' if ok else 'MISS'}] {what}: {of_medians:.2f}x (ratio of medians; "
              f"per-round median {statistics.median(pairs):.2f}x, {min(pairs):.2f}–{max(pairs):.2f}), {bound}")
