#!/usr/bin/env bash
# The one way to build the Coding layer outside SwiftPM (scripts/fuzz, scripts/peers/peer-decoders.py):
# compiles the C targets with their own sources (CCodecLoader, CJPEGIncremental, CPNGIncremental, CColorKernel)
# with clang, writes the module maps SwiftPM would make from their include/ folders, and names the
# Swift sources, the system-library wrappers and the libraries to link. Paths are relative to the
# repository root: source it from there (run, it goes there itself; OUT relative to the root).
#   source scripts/lib/build-c-targets.sh
#   build_c_target OUT TARGET CFLAG...   compiles TARGET's .c files into OUT; appends to C_INCLUDES, C_OBJECTS
#   coding_sources                       the Swift files of Pixels/, Coding/ (but Isolation/), Processing/ and Internal/Locked.swift
#   scripts/lib/build-c-targets.sh OUT CFLAG...   (run, not sourced: all four targets with CFLAG, then
#                                                 prints every swiftc argument but the entry point, one a line)
# C_INCLUDES starts with -I for every system-library wrapper the Coding layer imports;
# CODING_LIBRARIES are the -l flags (libavif, libheif and libjxl are opened by CCodecLoader at run time).
if [ "${BASH_SOURCE[0]}" = "$0" ] && [[ "${1:-}" == -h || "${1:-}" == --help || $# -eq 0 ]]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0
fi

C_TARGETS=(CCodecLoader CJPEGIncremental CPNGIncremental CColorKernel)
C_INCLUDES=()
for wrapper in CTurboJPEG CSpng CGIF CWebP CAvif CHeif CTiff CJxl CLcms2 CZlib; do
  C_INCLUDES+=(-I "Sources/CLibraries/$wrapper")
done
C_OBJECTS=()
CODING_LIBRARIES=(-lturbojpeg -ljpeg -lpng -lspng -lgif -lwebpdemux -lwebpmux -lwebp -ltiff -llcms2 -lz -ldl)

coding_sources() {
  # Every file under the three folders, at any depth (coders live in Formats/<Format>/); the
  # frame-by-frame and incremental decoders guard their codec state with the package's lock.
  # Coding/Isolation/ (decodes in a worker process) is left out: no decoder needs it, and it
  # counts its outcomes with swift-metrics, which is not built here.
  find Sources/WebImage/Pixels Sources/WebImage/Coding Sources/WebImage/Processing -name '*.swift' -not -path '*/Coding/Isolation/*' | sort
  echo Sources/WebImage/Internal/Locked.swift
}

build_c_target() {
  local out="$1" target="$2"; shift 2
  local dir="Sources/CLibraries/$target" file header
  if [ -f "$dir/include/module.modulemap" ]; then
    C_INCLUDES+=(-I "$dir/include")
  else
    # SwiftPM makes a target's module map from include/; here one is written into OUT/TARGET.
    mkdir -p "$out/$target"
    {
      printf 'module %s {\n' "$target"
      for header in "$dir"/include/*.h; do printf '  header "%s"\n' "$PWD/$header"; done
      printf '  export *\n}\n'
    } > "$out/$target/module.modulemap"
    C_INCLUDES+=(-I "$out/$target")
  fi
  for file in "$dir"/*.c; do
    clang "$@" -I "$dir/include" -c "$file" -o "$out/$(basename "$file" .c).o"
    C_OBJECTS+=("$out/$(basename "$file" .c).o")
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/../.."
  out="$1"; shift
  mkdir -p "$out"
  for target in "${C_TARGETS[@]}"; do build_c_target "$out" "$target" "$@" >&2; done
  printf '%s\n' "${C_INCLUDES[@]}"
  coding_sources
  printf '%s\n' "${C_OBJECTS[@]}" "${CODING_LIBRARIES[@]}"
fi
