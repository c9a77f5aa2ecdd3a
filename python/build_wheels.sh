#!/usr/bin/env bash
# Build the release wheels of the Python package for Linux x86_64 and aarch64, and its sdist.
#
#   python/build_wheels.sh [--arch x86_64|aarch64|all]     (default: all)
#
# Produces, in target/wheels/ at the repository root:
#   datafusion_tsfile-<version>-cp310-abi3-manylinux_2_28_x86_64.whl
#   datafusion_tsfile-<version>-cp310-abi3-manylinux_2_28_aarch64.whl
#   datafusion_tsfile-<version>.tar.gz                               (the sdist)
#
# Why manylinux_2_28: a wheel built natively links against the build machine's glibc
# (2.36 on Debian 12, so manylinux_2_35 or newer), and pip refuses it on the systems many
# users run: RHEL 8 and 9 (and their rebuilds), Debian 11, Amazon Linux 2023 — all with
# glibc 2.28 to 2.34. Instead of building inside the manylinux_2_28 container, maturin
# cross-links with zig (`--zig`), which carries the headers and symbol lists of old glibc
# versions, so the extension only references symbols that glibc 2.28 has. The same route
# cross-compiles the aarch64 wheel from an x86_64 machine (the Rust target must be
# installed: `rustup target add aarch64-unknown-linux-gnu`). The wheels are abi3: one per
# architecture serves CPython 3.10 and later.
#
# The tools come from PyPI into a venv under the cargo target directory
# ($CARGO_TARGET_DIR, default target/): maturin, ziglang (the zig compiler as a wheel) and
# auditwheel. Each wheel is then checked with `auditwheel show`, and the script fails if
# its platform tag is newer than manylinux_2_28. Each step prints its duration; a cold
# release build takes 20 minutes or more per architecture on a 2-core machine (50 minutes
# for x86_64 with the cores shared with another build).
#
# The sdist carries the package's crate, the reader crate and the workspace's Cargo.lock;
# `pip install` from it builds for the machine it runs on (a Rust toolchain needed).
#
# C and assembly in the dependency tree, compiled by `zig cc` for the target as it is:
# zstd-sys (parquet's and the reader's ZSTD), liblzma-sys (DataFusion's XZ file
# compression), blake3 (DataFusion's hash function; SIMD kernels) and psm (stack growth
# for deep SQL expressions). They need no changes for zig; no TLS library (ring, aws-lc)
# and no C allocator (mimalloc, jemalloc) is linked, and LZ4, snappy, gzip and bzip2 are
# pure Rust.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
target=${CARGO_TARGET_DIR:-$root/target}
out=$root/target/wheels
venv=$target/wheel-build-venv
policy_minor=28 # manylinux_2_28: glibc 2.28

usage() { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; }
arch=all
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || { echo "build_wheels.sh: --arch needs a value" >&2; exit 2; }
      arch=$2; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build_wheels.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$arch" in
  x86_64|aarch64) arches=("$arch") ;;
  all) arches=(x86_64 aarch64) ;;
  *) echo "build_wheels.sh: --arch must be x86_64, aarch64 or all (got '$arch')" >&2; exit 2 ;;
esac

step_start=0
step() { step_name=$1; step_start=$SECONDS; echo "== $step_name"; }
done_step() { echo "== $step_name: $((SECONDS - step_start)) s"; }

step "tools (maturin, ziglang, auditwheel) in $venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.16,<2" ziglang auditwheel
done_step

mkdir -p "$out"
export CARGO_TARGET_DIR=$target
# maturin finds zig through the ziglang package of the interpreter on PATH.
export PATH=$venv/bin:$PATH

for a in "${arches[@]}"; do
  triple=$a-unknown-linux-gnu
  rm -f "$out"/datafusion_tsfile-*_"$a".whl
  step "wheel for $a ($triple)"
  (cd "$here" && maturin build --release --zig --compatibility manylinux_2_28 \
    --target "$triple" --out "$out")
  done_step
done

step "sdist"
rm -f "$out"/datafusion_tsfile-*.tar.gz
(cd "$here" && maturin sdist --out "$out")
done_step

# auditwheel reads the wheel's ELF files (any architecture) and reports the oldest
# manylinux policy whose symbol versions and libraries they satisfy.
step "auditwheel show"
status=0
for a in "${arches[@]}"; do
  for whl in "$out"/datafusion_tsfile-*_"$a".whl; do
    report=$(auditwheel show "$whl" | tr '\n' ' ')
    tag=$(printf '%s' "$report" | grep -oE 'platform tag: *"[a-z0-9_]+"' | head -n 1 | grep -oE '"[^"]+"' | tr -d '"' || true)
    minor=$(printf '%s' "$tag" | sed -nE 's/^manylinux_2_([0-9]+)_.*/\1/p')
    if [ -z "$minor" ]; then
      echo "$(basename "$whl"): no manylinux platform tag in the auditwheel report:" >&2
      auditwheel show "$whl" >&2
      status=1
    elif [ "$minor" -gt "$policy_minor" ]; then
      echo "$(basename "$whl"): $tag is newer than manylinux_2_$policy_minor" >&2
      auditwheel show "$whl" >&2
      status=1
    else
      echo "$(basename "$whl"): $tag (ok, glibc <= 2.$policy_minor)"
    fi
  done
done
done_step
[ "$status" -eq 0 ] || exit "$status"
ls -l "$out"
