#!/usr/bin/env bash
# Build the Python package's wheel and run its pytest suite against it in a fresh venv.
#
#   python/ci.sh [pytest args]
#
# The wheel is built by maturin in the dev profile (the suite checks answers, not speed) in
# its own target directory (`target/python`): the package's feature set differs from the
# workspace's, and a separate directory keeps the two builds from invalidating each other.
# The venv (`target/python-test-venv`) is made anew each run and gets the wheel with the
# released datafusion 55, pyarrow, pandas and polars from PyPI, and the official `tsfile`
# 2.5.0 package, whose C++ reader cross-checks the files we write (tests/test_write.py), and
# the object-store servers (moto's S3 API, a Range-aware HTTP server: tools/test-servers/),
# which tests/test_object_stores.py starts on 127.0.0.1. `TSFILE_BIN` names the
# `tsfile` binary the SQL tests compare with (default: target/debug/tsfile, built if missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/python-test-venv
wheels=$target/python-wheels

if [ -z "${TSFILE_BIN:-}" ]; then
  TSFILE_BIN=$target/debug/tsfile
  [ -x "$TSFILE_BIN" ] || cargo build -q -p tsfile-cli --manifest-path "$root/Cargo.toml"
fi
export TSFILE_BIN

t0=$SECONDS
rm -rf "$venv" "$wheels"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.16,<2" pytest "datafusion>=55,<56" pyarrow pandas polars "tsfile==2.5.0" \
  -r "$root/tools/test-servers/requirements.txt"
echo "python: venv ready in $((SECONDS - t0)) s"

t0=$SECONDS
(cd "$here" && "$venv/bin/maturin" build --quiet --out "$wheels" --target-dir "$target/python")
echo "python: wheel built in $((SECONDS - t0)) s"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$wheels"/datafusion_tsfile-*.whl

cd "$here"
"$venv/bin/pytest" tests -q -p no:cacheprovider "$@"
