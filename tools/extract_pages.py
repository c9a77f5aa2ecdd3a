#!/usr/bin/env python3
"""Extract compressed page payloads from real TsFiles into test fixtures.

Walks the data section of TsFile v4 files (chunk group headers, chunk headers, page
headers, per the TsFile format digest the project was built from), and for every compression codec
copies a few stored (still compressed) page payloads into ``tests/data/pages/`` together
with a manifest, ``tests/data/pages/pages.tsv``::

    file  codec  uncompressed_size  compressed_size  crc32  source  offset

``crc32`` is the CRC-32 (zlib polynomial) of the *decompressed* page, computed by an
independent implementation, so the Rust tests check content and not just length:
Python's stdlib for UNCOMPRESSED, GZIP (zlib) and LZMA2 (lzma/xz); for SNAPPY, LZ4 and
ZSTD the ``cramjam`` package and for LZO the ``lzallright`` package when importable
(otherwise ``-``: only the size is checked). ``offset`` is the absolute file offset of
the stored page bytes in ``source``.

Walking the files needs only the standard library::

    python3 tools/extract_pages.py                      # defaults below
    python3 tools/extract_pages.py --corpus tests/data/corpus/files --out tests/data/pages
    # every page of every corpus file, for a one-off full check (not committed):
    python3 tools/extract_pages.py --all --out /tmp/pages $(ls tests/data/corpus/files)
    TSFILE_PAGES_DIR=/tmp/pages cargo test --lib compression

The checked-in fixtures were produced with ``cramjam`` 2.14.0 and ``lzallright`` 0.3.0
installed (``pip install cramjam lzallright`` in a venv).
"""

import argparse
import os
import struct
import sys
import zlib

CODECS = {0: "UNCOMPRESSED", 1: "SNAPPY", 2: "GZIP", 3: "LZO", 7: "LZ4", 8: "ZSTD", 9: "LZMA2"}

# Statistics type-specific byte sizes for fixed-width types (seed 003).
FIXED_STATS = {
    0: 1 + 1 + 8,  # BOOLEAN: first, last, true_count
    1: 4 * 4 + 8,  # INT32
    9: 4 * 4 + 8,  # DATE
    2: 8 * 4 + 8,  # INT64
    8: 8 * 4 + 8,  # TIMESTAMP
    3: 4 * 4 + 8,  # FLOAT
    4: 8 * 4 + 8,  # DOUBLE
    6: 0,  # VECTOR (aligned time chunk)
    10: 0,  # BLOB
    12: 0,  # OBJECT
}
BINARY_STATS = {5: 2, 11: 4}  # TEXT: first, last; STRING: first, last, min, max

# Default selection: every codec appears in each of these (see MANIFEST coverage).
DEFAULT_SOURCES = ["tree_enc_int64.tsfile", "tree_enc_string.tsfile"]
PAGES_PER_CODEC_PER_FILE = 1
MAX_FIXTURE_BYTES = 16 * 1024


class Reader:
    def __init__(self, data, pos):
        self.data = data
        self.pos = pos

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"truncated at {self.pos}: need {n}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def uvarint(self):
        result = 0
        for i in range(5):
            b = self.u8()
            result |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                return result
        raise ValueError(f"unterminated varint at {self.pos}")

    def varint(self):
        u = self.uvarint()
        return (u >> 1) ^ -(u & 1)

    def varstring(self):
        n = self.varint()
        if n == -1:
            return None
        return self.take(n).decode("utf-8")

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]


def skip_statistics(r, data_type):
    r.uvarint()  # count
    r.take(16)  # start_time, end_time
    if data_type in FIXED_STATS:
        r.take(FIXED_STATS[data_type])
    elif data_type in BINARY_STATS:
        for _ in range(BINARY_STATS[data_type]):
            n = r.i32()
            if n > 0:
                r.take(n)
    else:
        raise ValueError(f"no statistics layout for data type {data_type}")


def walk_pages(data):
    """Yield (codec_id, uncompressed_size, payload_offset, payload_bytes) for every page."""
    if data[:6] != b"TsFile" or data[6] != 4:
        raise ValueError("not a TsFile v4")
    r = Reader(data, 7)
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
        if marker & 0x3F not in (0x01, 0x05):
            raise ValueError(f"unknown marker 0x{marker:02x} at {r.pos - 1}")
        r.varstring()  # measurement id
        data_size = r.uvarint()
        data_type = r.u8()
        codec = r.u8()
        r.u8()  # encoding
        end = r.pos + data_size
        multi_page = marker & 0x3F == 0x01
        while r.pos < end:
            uncompressed = r.uvarint()
            if uncompressed == 0 and marker & 0x40:
                continue  # empty aligned value page: just UVarInt(0)
            compressed = r.uvarint()
            if multi_page:
                skip_statistics(r, data_type)
            offset = r.pos
            payload = r.take(compressed)
            yield codec, uncompressed, offset, payload
        if r.pos != end:
            raise ValueError(f"chunk pages overrun data_size at {r.pos}")


def reference_decompress(codec, payload, size):
    """Decompress with an independent implementation, or None when none is available."""
    name = CODECS[codec]
    if name == "UNCOMPRESSED":
        return payload
    if name == "GZIP":
        return zlib.decompress(payload, 16 + zlib.MAX_WBITS)
    if name == "LZMA2":
        import lzma

        return lzma.decompress(payload, format=lzma.FORMAT_XZ)
    try:
        if name == "SNAPPY":
            import cramjam

            return bytes(cramjam.snappy.decompress_raw(payload))
        if name == "LZ4":
            import cramjam

            return bytes(cramjam.lz4.decompress_block(payload, output_len=size))
        if name == "ZSTD":
            import cramjam

            return bytes(cramjam.zstd.decompress(payload))
        if name == "LZO":
            import lzallright

            return lzallright.LZOCompressor().decompress(payload, output_size_hint=size)
    except ImportError:
        return None
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.path.join(root, "tests", "data", "corpus", "files"))
    ap.add_argument("--out", default=os.path.join(root, "tests", "data", "pages"))
    ap.add_argument("--all", action="store_true",
                    help="extract every page (no size cap) instead of one per codec and file; "
                         "for a full check: TSFILE_PAGES_DIR=<out> cargo test --lib compression")
    ap.add_argument("files", nargs="*", default=DEFAULT_SOURCES)
    args = ap.parse_args()
    per_codec = None if args.all else PAGES_PER_CODEC_PER_FILE

    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.files:
        with open(os.path.join(args.corpus, name), "rb") as f:
            data = f.read()
        stem = os.path.splitext(name)[0]
        picked = {}
        # Prefer the largest page under the size cap for each codec: more content to check.
        candidates = {}
        for codec, size, offset, payload in walk_pages(data):
            if args.all or (len(payload) <= MAX_FIXTURE_BYTES and size <= 4 * MAX_FIXTURE_BYTES):
                candidates.setdefault(codec, []).append((len(payload), offset, size, payload))
        for codec, pages in sorted(candidates.items()):
            if per_codec is not None:
                pages.sort(key=lambda p: (-p[0], p[1]))
            picked[codec] = pages[:per_codec]
        for codec, pages in sorted(picked.items()):
            for i, (_, offset, size, payload) in enumerate(pages):
                fname = f"{CODECS[codec].lower()}-{stem}-{i}.bin"
                with open(os.path.join(args.out, fname), "wb") as f:
                    f.write(payload)
                ref = reference_decompress(codec, payload, size)
                if ref is not None and len(ref) != size:
                    raise SystemExit(f"{fname}: reference decompressed {len(ref)} bytes, declared {size}")
                crc = f"{zlib.crc32(ref) & 0xFFFFFFFF:08x}" if ref is not None else "-"
                rows.append((fname, CODECS[codec], size, len(payload), crc, name, offset))
        missing = set(CODECS) - set(picked)
        if missing and not args.all:
            print(f"warning: {name}: no page for {sorted(CODECS[m] for m in missing)}", file=sys.stderr)

    with open(os.path.join(args.out, "pages.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("file\tcodec\tuncompressed_size\tcompressed_size\tcrc32\tsource\toffset\n")
        for row in rows:
            f.write("\t".join(str(x) for x in row) + "\n")
    if not args.all:
        for row in rows:
            print("\t".join(str(x) for x in row))
    print(f"{len(rows)} pages written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
