# Shared by scripts/peers/cluster-check, scripts/peers/peer-proxy and scripts/soak (sourced, not run).
# Everything listens on and talks to 127.0.0.1 only.
#   source "$(dirname "$0")/../lib/serve-common.sh"   (run directly, e.g. with --help: prints this header)
if [ "${BASH_SOURCE[0]}" = "$0" ]; then awk '!/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0; fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The webimage binary: $WEBIMAGE_BIN, else the release build, else the debug build.
webimage_bin() {
  if [ -n "${WEBIMAGE_BIN:-}" ]; then echo "$WEBIMAGE_BIN"; return; fi
  for c in "$ROOT/.build/release/webimage" "$ROOT/.build/debug/webimage"; do
    if [ -x "$c" ]; then echo "$c"; return; fi
  done
  echo "no webimage binary: run 'swift build -c release --product webimage' first" >&2
  exit 1
}

# Installs Debian packages that are missing (root or sudo).
need_debian() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

# A free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# Waits until `curl`-less GET of $1 answers 200 (at most $2 seconds, default 60).
wait_http() {
  python3 - "$1" "${2:-60}" <<'PY'
import sys, time, urllib.request
url, limit = sys.argv[1], float(sys.argv[2]); end = time.time() + limit
while time.time() < end:
    try:
        if urllib.request.urlopen(url, timeout=2).status == 200: sys.exit(0)
    except Exception: pass
    time.sleep(0.2)
sys.exit(f"{url} did not answer in {limit} s")
PY
}

# Starts `webimage serve` on $1 with more flags; prints its pid.
start_serve() {
  local port="$1"; shift
  "$(webimage_bin)" serve --host 127.0.0.1 --port "$port" --allow-private-networks "$@" >/dev/null 2>>"${SERVE_LOG:-/dev/null}" &
  echo $!
}
