#!/usr/bin/env python3
"""Generate the hand-made hostile files of ``tests/data/corrupt/`` from vendored samples.

One file per failure class of the validation checklist in the format digest
(``spec/format.md``), plus encryption without a key and two resource-exhaustion shapes.
Each file is a real sample with exactly one defect, made by parsing the sample with the
small TsFile model below (data section, TsFileMetadata, metadata index, TimeseriesMetadata)
and either patching bytes in place or splicing a structure and shifting every absolute
offset behind the splice, so that the file is valid except for the defect. The list of
files, how each is made and the error the reader must return are in
``tests/data/corrupt/README.md``; ``tests/integration/corrupt.rs`` asserts them.

Deterministic, standard library only. From the repository root::

    python3 tools/make_corrupt.py            # writes tests/data/corrupt/*.tsfile
    python3 tools/make_corrupt.py --check    # fails if a committed file differs
"""

import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract_pages import Reader, skip_statistics  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "files")
ENCRYPTED = os.path.join(ROOT, "tests", "data", "encrypted")
PAGES = os.path.join(ROOT, "tests", "data", "pages")
OUT = os.path.join(ROOT, "tests", "data", "corrupt")


# ---------------------------------------------------------------- primitives

def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def varint(n):
    return uvarint(((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def varstring(s):
    b = s.encode("utf-8")
    return varint(len(b)) + b


def i64(n):
    return struct.pack(">q", n)


def read_i64(data, pos):
    return struct.unpack(">q", bytes(data[pos:pos + 8]))[0]


class R(Reader):
    """extract_pages' reader plus what the footer needs."""

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def varbinary(self):
        n = self.varint()
        return None if n == -1 else self.take(n)

    def string32(self):
        n = self.i32()
        return None if n == -1 else self.take(n)

    def device_id(self):
        n = self.uvarint()
        return [self.varstring() for _ in range(n)]


# ---------------------------------------------------------------- the model

class Model:
    """Positions of everything the generator patches, in one parsed file."""

    def __init__(self, data):
        self.data = bytearray(data)
        d = self.data
        if d[:6] != b"TsFile" or d[-6:] != b"TsFile":
            raise ValueError("not a TsFile")
        self.L = struct.unpack(">i", bytes(d[-10:-6]))[0]
        self.meta_start = len(d) - 10 - self.L
        self.offset_fields = []  # absolute positions of int64 offsets into the file
        self.nodes = []  # (pos, level, node_type, [(key, offset_field_pos)], end_field_pos)
        self.series = []  # (pos, measurement, data_type, [chunk offset field pos])
        self.chunks = []
        self._parse_metadata()
        self._walk_index()
        self._parse_data_section()

    # -- footer
    def _parse_metadata(self):
        r = R(self.data, self.meta_start)
        self.roots = []
        for _ in range(r.uvarint()):
            name = r.varstring()
            self.roots.append((name, r.pos))
            self._node(r, "device")
        self.schemas_pos = r.pos
        self.schemas = {}
        for _ in range(r.uvarint()):
            name = r.varstring()
            cols = []
            for _ in range(r.uvarint()):
                name_pos = r.pos
                cname = r.string32()
                r.take(3)
                for _ in range(r.i32()):
                    r.string32()
                    r.string32()
                r.i32()
                cols.append((cname, name_pos))
            self.schemas[name] = cols
        self.meta_offset_pos = r.pos
        self.meta_offset = r.i64()
        n = r.uvarint()
        if n:
            r.take(n)
            r.uvarint()
            r.uvarint()
        self.props_pos = r.pos
        self.props = []
        for _ in range(r.varint()):
            k = r.varstring()
            self.props.append((k, r.varbinary()))
        assert r.pos == len(self.data) - 10, "TsFileMetadata does not consume L"

    def _node(self, r, level):
        pos = r.pos
        entries = []
        for _ in range(r.uvarint()):
            key = r.device_id() if level == "device" else r.varstring()
            entries.append((key, r.pos))
            self.offset_fields.append(r.pos)
            r.i64()
        end_pos = r.pos
        self.offset_fields.append(r.pos)
        r.i64()
        node_type = r.u8()
        self.nodes.append((pos, level, node_type, entries, end_pos))
        return node_type, entries, end_pos

    def _walk_index(self):
        todo = []
        for _, pos in self.roots:
            todo.append(self.nodes[[n[0] for n in self.nodes].index(pos)])
        while todo:
            pos, level, node_type, entries, end_pos = todo.pop()
            offs = [read_i64(self.data, p) for _, p in entries] + [read_i64(self.data, end_pos)]
            for i in range(len(entries)):
                start, end = offs[i], offs[i + 1]
                if node_type in (0, 1, 2):  # child node
                    child_level = "device" if node_type == 0 else "measurement"
                    self._node(R(self.data, start), child_level)
                    todo.append(self.nodes[-1])
                else:  # LEAF_MEASUREMENT: a run of TimeseriesMetadata
                    r = R(self.data, start)
                    while r.pos < end:
                        self._timeseries(r)

    def _timeseries(self, r):
        pos = r.pos
        ts_type = r.u8()
        name = r.varstring()
        dt = r.u8()
        size = r.uvarint()
        skip_statistics(r, dt)
        end = r.pos + size
        fields = []
        while r.pos < end:
            fields.append(r.pos)
            self.offset_fields.append(r.pos)
            r.i64()
            if ts_type & 0x3F:
                skip_statistics(r, dt)
        self.series.append((pos, name, dt, fields))

    # -- data section
    def _parse_data_section(self):
        d = self.data
        pos = 7
        self.header_len = 0
        if d[7] == 0x06:
            r = R(d, 8)
            size = r.uvarint()
            pos = r.pos + size
            self.header_len = pos - 7
        r = R(d, pos)
        device = None
        while True:
            at = r.pos
            marker = r.u8()
            if marker == 0x02:
                assert at == self.meta_offset, "separator is not at meta_offset"
                return
            if marker == 0x00:
                device = r.device_id()
                continue
            if marker == 0x04:
                r.take(16)
                continue
            name_pos = r.pos
            name = r.varstring()
            ds_pos = r.pos
            data_size = r.uvarint()
            dt_pos = r.pos
            dt, comp, enc = r.u8(), r.u8(), r.u8()
            if self.header_len:
                r.take(8)
                r.take(r.i32())
            data_start = r.pos
            pages = []
            while r.pos < data_start + data_size:
                p = {"pos": r.pos}
                p["unc"] = r.uvarint()
                if p["unc"] == 0 and marker & 0x40:
                    p["empty"] = True
                    pages.append(p)
                    continue
                p["comp_pos"] = r.pos
                p["comp"] = r.uvarint()
                p["stats_pos"] = r.pos
                if marker & 0x3F == 0x01:
                    skip_statistics(r, dt)
                p["data_pos"] = r.pos
                r.take(p["comp"])
                pages.append(p)
            self.chunks.append({
                "offset": at, "marker": marker, "name": name, "name_pos": name_pos,
                "data_size_pos": ds_pos, "data_size": data_size, "dt": dt, "comp": comp,
                "enc": enc, "dt_pos": dt_pos, "data_start": data_start,
                "end": data_start + data_size, "pages": pages, "device": device,
            })

    # -- edits
    def splice(self, at, remove, insert, reparse=True):
        """Replace data[at:at+remove] by insert, shifting every offset that points behind
        the replaced bytes (and L when the splice is inside TsFileMetadata). Returns the
        re-parsed model, or the raw bytes when `reparse` is false."""
        delta = len(insert) - remove
        d = self.data
        fields = [p for p in self.offset_fields if not (at <= p < at + remove)]
        values = {p: read_i64(d, p) for p in fields}
        mo = self.meta_offset
        # An insertion right before TsFileMetadata lands in the index area.
        in_meta = at > self.meta_start or (at == self.meta_start and remove > 0)
        new = d[:at] + insert + d[at + remove:]
        for p, v in values.items():
            np = p + delta if p >= at + remove else p
            nv = v + delta if v >= at + remove else v
            new[np:np + 8] = i64(nv)
        if not in_meta:
            p = self.meta_offset_pos + delta
            new[p:p + 8] = i64(mo + delta if mo >= at + remove else mo)
        else:
            L = self.L + delta
            new[-10:-6] = struct.pack(">i", L)
        return Model(new) if reparse else bytes(new)


def load(path):
    with open(path, "rb") as f:
        return Model(f.read())


# ---------------------------------------------------------------- edit helpers

def patch(model, pos, new):
    """Overwrite bytes in place (same length); returns the raw bytes."""
    d = bytearray(model.data)
    d[pos:pos + len(new)] = new
    return bytes(d)


def uvarint_at(data, pos):
    r = R(data, pos)
    v = r.uvarint()
    return v, r.pos - pos


def set_uvarint_same_len(model, pos, value):
    old, n = uvarint_at(model.data, pos)
    new = uvarint(value)
    if len(new) != n:
        raise ValueError(f"uvarint {old} -> {value} changes length")
    return patch(model, pos, new)


def insert_many(model, inserts):
    """Insert several byte strings at once ((pos, bytes) in old coordinates), shifting every
    recorded offset (and meta_offset) that points at or behind an insertion point. All
    insertions must lie in the data section."""
    d = model.data
    inserts = sorted(inserts)
    assert all(p < model.meta_offset for p, _ in inserts)

    def shift(v):
        return v + sum(len(b) for p, b in inserts if p <= v)

    values = {p: read_i64(d, p) for p in model.offset_fields}
    out = bytearray()
    prev = 0
    for p, b in inserts:
        out += d[prev:p] + b
        prev = p
    out += d[prev:]
    for p, v in values.items():
        np = shift(p)
        out[np:np + 8] = i64(shift(v))
    mp = shift(model.meta_offset_pos)
    out[mp:mp + 8] = i64(shift(model.meta_offset))
    return bytes(out)


def rebuild_chunk(model, chunk, page_index, unc, payload):
    """The chunk with page `page_index` replaced by (unc, payload); header and data_size
    re-serialized; every offset behind it shifted."""
    d = model.data
    pages = bytearray()
    for i, p in enumerate(chunk["pages"]):
        nxt = chunk["pages"][i + 1]["pos"] if i + 1 < len(chunk["pages"]) else chunk["end"]
        if i != page_index:
            pages += d[p["pos"]:nxt]
        else:
            pages += uvarint(unc) + uvarint(len(payload)) + d[p["stats_pos"]:p["data_pos"]] + payload
    header = bytes(d[chunk["offset"]:chunk["data_size_pos"]]) + uvarint(len(pages)) \
        + bytes(d[chunk["dt_pos"]:chunk["data_start"]])
    return model.splice(chunk["offset"], chunk["end"] - chunk["offset"], header + bytes(pages))


def set_properties(model, props):
    """Replace the footer properties (VarString key, VarBinary value)."""
    blob = varint(len(props))
    for k, v in props:
        blob += varstring(k)
        blob += varint(-1) if v is None else varint(len(v)) + v
    return model.splice(model.props_pos, len(model.data) - 10 - model.props_pos, blob)


def encryption_header():
    """A Page-AEAD FileEncryptionHeader (the layout of the Page-AEAD test vectors)."""
    p = bytes([1])
    for s in ("test-aead-provider", "AES_GCM_128_AES_WRAP_128_V1", "test-key", "1"):
        p += varstring(s)
    p += uvarint(16) + bytes(range(0x40, 0x50)) + uvarint(24) + bytes(24)
    return bytes([0x06]) + uvarint(len(p)) + p


def with_encryption_header(model):
    """Insert the header at offset 7 and the Page-AEAD suffix (int64 chunk ordinal, int32
    authentication size 0) into every chunk header; page bytes stay plaintext."""
    inserts = [(7, encryption_header())]
    for i, c in enumerate(model.chunks):
        inserts.append((c["data_start"], i64(i) + struct.pack(">i", 0)))
    return insert_many(model, inserts)


def node_bytes(node_type, entries, end):
    """A device-level MetadataIndexNode: entries are (segments, offset)."""
    b = uvarint(len(entries))
    for segs, off in entries:
        b += uvarint(len(segs)) + b"".join(varstring(s) for s in segs) + i64(off)
    return b + i64(end) + bytes([node_type])


def rle_repeated_i32(runs, width):
    """An INT32 RLE section of repeated runs [(count, value)] at bit width `width`."""
    body = bytes([width])
    nbytes = (width + 7) // 8
    for count, value in runs:
        body += uvarint(count << 1) + value.to_bytes(nbytes, "little")
    return uvarint(len(body)) + body


def rle_count(data, pos):
    """Number of values in the RLE sections of data[pos:]."""
    n = 0
    while pos < len(data):
        section, pos = uvarint_at(data, pos)[0], pos + uvarint_at(data, pos)[1]
        end = pos + section
        w = data[pos]
        pos += 1
        while pos < end:
            h, k = uvarint_at(data, pos)
            pos += k
            if h & 1:
                g = h >> 1
                n += (g - 1) * 8 + data[pos]
                pos += 1 + g * w
            else:
                n += h >> 1
                pos += (w + 7) // 8
    return n


# ---------------------------------------------------------------- the files

def build():
    """name -> bytes of every hostile file."""
    out = {}
    plain = load(os.path.join(ENCRYPTED, "plain.tsfile"))
    tree = load(os.path.join(CORPUS, "tree_extremes.tsfile"))
    utf8 = load(os.path.join(CORPUS, "tree_utf8.tsfile"))

    out["bad_magic"] = patch(plain, 0, b"TsFilx")
    out["wrong_version"] = patch(plain, 6, bytes([3]))
    out["metadata_length_out_of_range"] = patch(plain, len(plain.data) - 10, struct.pack(">i", 0x7FFFFFF0))
    out["meta_offset_not_separator"] = patch(plain, plain.meta_offset_pos, i64(plain.meta_offset - 1))

    # The root of t1's device index (in TsFileMetadata) lists d1 then d2: swap the offsets.
    _, _, _, entries, _ = plain.nodes[0]
    (_, p0), (_, p1) = entries
    swapped = patch(plain, p0, plain.data[p1:p1 + 8])
    out["index_offsets_not_monotonic"] = bytes(swapped[:p1]) + bytes(plain.data[p0:p0 + 8]) + bytes(swapped[p1 + 8:])

    # A layered DAG of shared nodes: 40 levels of two byte-identical INTERNAL_DEVICE nodes,
    # each node's two entries covering both nodes of the next level, then a LEAF_DEVICE
    # level pointing at d1's and d2's real measurement indexes. Within the depth limit,
    # a walk would visit 2^40 leaves.
    meta_start = plain.meta_start
    _, _, _, leaf_entries, leaf_end = plain.nodes[0]
    devs = [(key, read_i64(plain.data, p)) for key, p in leaf_entries]
    leaf = node_bytes(1, devs, read_i64(plain.data, leaf_end))
    key = ["t1", "d1"]
    size = len(node_bytes(0, [(key, 0), (key, 0)], 0))
    levels = 40
    level_pos = [meta_start + 2 * size * i for i in range(levels)]
    leaf_pos = meta_start + 2 * size * levels
    blob = b""
    for i in range(levels):
        nxt = level_pos[i + 1] if i + 1 < levels else leaf_pos
        nsize = size if i + 1 < levels else len(leaf)
        node = node_bytes(0, [(key, nxt), (key, nxt + nsize)], nxt + 2 * nsize)
        blob += node + node
    blob += leaf + leaf
    m = plain.splice(meta_start, 0, blob)
    root_pos = m.roots[0][1]
    root_end = m.nodes[[n[0] for n in m.nodes].index(root_pos)][4] + 9
    root = node_bytes(0, [(key, level_pos[0]), (key, level_pos[0] + size)], level_pos[0] + 2 * size)
    out["index_shared_nodes"] = m.splice(root_pos, root_end - root_pos, root, reparse=False)

    # d1's `v` chunk claims 0x7FFFFFF0 bytes of pages.
    c = plain.chunks[1]
    out["chunk_past_end"] = plain.splice(c["data_size_pos"], 1, uvarint(0x7FFFFFF0), reparse=False)

    # d1's `v` page claims more stored bytes than its chunk holds (the chunk is unchanged).
    pg = c["pages"][0]
    out["page_past_chunk"] = plain.splice(pg["comp_pos"], 1, uvarint(c["data_size"] + 100), reparse=False)

    # d1's `v` LZ4 page declares one byte less than its block decompresses to.
    out["decompressed_size_mismatch"] = set_uvarint_same_len(plain, pg["pos"], pg["unc"] - 1)

    # The first page of the first uncompressed multi-page chunk: its statistics count one
    # point less than its time stream holds.
    c = next(c for c in tree.chunks if c["marker"] == 0x01 and c["comp"] == 0)
    cnt_pos = c["pages"][0]["stats_pos"]
    cnt, _ = uvarint_at(tree.data, cnt_pos)
    out["count_mismatch"] = set_uvarint_same_len(tree, cnt_pos, cnt - 1)

    # TsFileMetadata's table index count as a 5-byte varint that does not terminate.
    out["overlong_varint"] = patch(plain, plain.meta_start, b"\x80" * 5)

    # t1's first column name (String32 in the table schema) has length -2.
    name_pos = plain.schemas["t1"][0][1]
    out["negative_length"] = patch(plain, name_pos, struct.pack(">i", -2))

    # The table index name "t1" (VarString in TsFileMetadata) as bytes ff fe.
    r = R(plain.data, plain.meta_start)
    r.uvarint()
    r.varint()
    out["invalid_utf8_name"] = patch(plain, r.pos, b"\xff\xfe")

    # near_max's LZMA2 `day` page: its stored bytes replaced by an xz stream of 10 MiB of
    # zeros (1,660 bytes); the page still declares its real 88 bytes.
    with open(os.path.join(PAGES, "bomb-zeros-10MiB.xz"), "rb") as f:
        bomb = f.read()
    c = next(c for c in tree.chunks if c["comp"] == 9 and c["marker"] == 0x05)
    out["decompression_bomb"] = bytes(rebuild_chunk(tree, c, 0, c["pages"][0]["unc"], bomb).data)

    # tree_utf8's first uncompressed DICTIONARY page: same entries, indices rewritten so the
    # last value points one past the last entry.
    c = next(c for c in utf8.chunks if c["enc"] == 1 and c["comp"] == 0)
    pg = c["pages"][0]
    payload = bytes(utf8.data[pg["data_pos"]:pg["data_pos"] + pg["comp"]])
    tlen, k = uvarint_at(payload, 0)
    value_start = k + tlen
    r = R(payload, value_start)
    entries = r.varint()
    for _ in range(entries):
        r.take(r.varint())
    n = rle_count(payload, r.pos)
    stream = payload[:r.pos] + rle_repeated_i32([(n - 1, 0), (1, entries)], 8)
    out["dictionary_index_out_of_range"] = bytes(rebuild_chunk(utf8, c, 0, len(stream), stream).data)

    # Encryption without a key: footer properties and the Page-AEAD header, table and tree.
    aes = [("encryptLevel", b"2"), ("encryptType", b"org.apache.tsfile.encrypt.AES128"),
           ("encryptKey", ",".join(str(b) for b in range(16)).encode())]
    out["encrypted_level2_tree"] = bytes(set_properties(tree, aes).data)
    out["encrypted_header_table"] = with_encryption_header(plain)
    out["encrypted_header_tree"] = with_encryption_header(tree)
    out["encrypt_level_unknown"] = bytes(set_properties(plain, [("encryptLevel", b"3")]).data)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true", help="compare with the files in --out instead of writing")
    args = ap.parse_args()
    files = build()
    os.makedirs(args.out, exist_ok=True)
    bad = 0
    for name, data in sorted(files.items()):
        path = os.path.join(args.out, name + ".tsfile")
        if args.check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print(f"{path}: differs from the generator", file=sys.stderr)
                    bad += 1
            continue
        with open(path, "wb") as f:
            f.write(data)
        print(f"{name}.tsfile\t{len(data)} bytes")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
