#!/usr/bin/env python3
"""Seed the cargo-fuzz corpora (``fuzz/corpus/<target>/``) from the vendored test data.

* ``open_metadata`` and ``read_table``: every TsFile of ``tests/data/corpus/files`` and
  ``tests/data/encrypted`` as is.
* ``page_decode``: for every chunk of those files, the 5 selector bytes the target expects
  (data type, encoding, compression, chunk marker, flags) followed by the chunk's data
  region cut after the last whole page within 8 KiB; at most 2 seeds per
  (type, encoding, compression, marker) combination, plus the page fixtures of
  ``tests/data/pages`` wrapped as single-page chunks.

Only the standard library is needed; the chunk walk reuses ``extract_pages.py``. Usage
(from the repository root)::

    python3 tools/fuzz_seeds.py [--out fuzz/corpus]

The generated corpora are not committed (``.gitignore``).
"""

import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract_pages import Reader, skip_statistics  # noqa: E402

REGION_CAP = 8 * 1024
PER_COMBO = 2
CODEC_IDS = {"UNCOMPRESSED": 0, "SNAPPY": 1, "GZIP": 2, "LZO": 3, "LZ4": 7, "ZSTD": 8, "LZMA2": 9}


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def walk_chunks(data):
    """Yield (marker, data_type, codec, encoding, region_bytes) for every chunk of a file.

    The region is cut after the last whole page that ends within REGION_CAP bytes."""
    if data[:6] != b"TsFile" or data[6] != 4:
        return
    r = Reader(data, 7)
    if data[7] == 0x06:  # Page-AEAD header: skip it (its chunk headers have a suffix)
        return
    while True:
        marker = r.u8()
        if marker == 0x02:
            return
        if marker == 0x00:
            for _ in range(r.uvarint()):
                r.varstring()
            continue
        if marker == 0x04:
            r.take(16)
            continue
        r.varstring()
        data_size = r.uvarint()
        data_type, codec, encoding = r.u8(), r.u8(), r.u8()
        start = r.pos
        end = start + data_size
        cut = start
        multi = marker & 0x3F == 0x01
        while r.pos < end:
            uncompressed = r.uvarint()
            if not (uncompressed == 0 and marker & 0x40):
                compressed = r.uvarint()
                if multi:
                    skip_statistics(r, data_type)
                r.take(compressed)
            if r.pos - start <= REGION_CAP or cut == start:
                cut = r.pos
        yield marker, data_type, codec, encoding, data[start:cut]


def write(dirname, payload):
    name = hashlib.sha1(payload).hexdigest()
    with open(os.path.join(dirname, name), "wb") as f:
        f.write(payload)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(root, "fuzz", "corpus"))
    args = ap.parse_args()
    sources = []
    for sub in ("tests/data/corpus/files", "tests/data/encrypted"):
        d = os.path.join(root, sub)
        sources += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".tsfile")]
    dirs = {t: os.path.join(args.out, t) for t in ("open_metadata", "read_table", "page_decode")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    combos = {}
    pages = 0
    for path in sources:
        with open(path, "rb") as f:
            data = f.read()
        write(dirs["open_metadata"], data)
        write(dirs["read_table"], data)
        try:
            for marker, dt, codec, enc, region in walk_chunks(data):
                key = (dt, enc, codec, marker)
                if combos.get(key, 0) >= PER_COMBO:
                    continue
                combos[key] = combos.get(key, 0) + 1
                for flags in (0,):
                    write(dirs["page_decode"], bytes([dt, enc, codec, marker, flags]) + region)
                    pages += 1
        except ValueError as e:
            print(f"warning: {path}: {e}", file=sys.stderr)
    # The stored page fixtures, as single-page non-aligned INT64/STRING chunks.
    pdir = os.path.join(root, "tests", "data", "pages")
    with open(os.path.join(pdir, "pages.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    for fname, codec, usize, csize, *_ in rows:
        with open(os.path.join(pdir, fname), "rb") as f:
            stored = f.read()
        dt = 11 if "string" in fname else 2
        enc = 0
        region = uvarint(int(usize)) + uvarint(int(csize)) + stored
        write(dirs["page_decode"], bytes([dt, enc, CODEC_IDS[codec], 0x05, 0]) + region)
        pages += 1
    print(f"{len(sources)} files, {pages} page seeds ({len(combos)} combinations) in {args.out}")


if __name__ == "__main__":
    main()
