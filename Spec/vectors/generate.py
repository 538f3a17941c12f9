#!/usr/bin/env python3
"""Writes the TaskLog golden vectors into the folder of this script.

An independent implementation of Spec/log-format.md and Spec/crdt.md: a writer that
builds the segment files, and a reader that decodes them and materialises the task list
as the spec says. The expected results are what that reader gives; the script also checks
them against hand-written facts, so a change to either side shows. It also implements the
writer's rescue of a damaged tail (log-format.md, "Writer rules"), for the vector
lost-placeholder.tlog.

Needs: pip install lz4 xxhash
"""

import json
import os
import shutil
import sys

import lz4.block
import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Primitives ("Records": integers, varints, strings)


def u16le(v):
    return v.to_bytes(2, "little")


def u32le(v):
    return v.to_bytes(4, "little")


def u64le(v):
    return v.to_bytes(8, "little")


def uvarint(v):
    assert 0 <= v < 1 << 64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def svarint(v):
    assert -(1 << 63) <= v < 1 << 63
    return uvarint(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


def string(s):
    b = s.encode("utf-8")
    return uvarint(len(b)) + b


def xxh32(b):
    return xxhash.xxh32_intdigest(bytes(b), seed=0)


class Reader:
    """Bounds-checked decoding; raises Short at the end of data, Bad otherwise."""

    class Short(Exception):
        pass

    class Bad(Exception):
        pass

    def __init__(self, data, offset=0):
        self.data = data
        self.pos = offset

    def at_end(self):
        return self.pos >= len(self.data)

    def remaining(self):
        return len(self.data) - self.pos

    def u8(self):
        if self.pos >= len(self.data):
            raise Reader.Short("unexpected end of data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def take(self, n):
        if n > self.remaining():
            raise Reader.Short("unexpected end of data")
        b = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return b

    def uvarint(self):
        result = 0
        for i in range(10):
            b = self.u8()
            if i == 9 and b > 1:
                raise Reader.Bad("varint overflows 64 bits")
            result |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                return result
        raise AssertionError("unreachable")

    def svarint(self):
        u = self.uvarint()
        return (u >> 1) ^ -(u & 1)

    def count(self, limit):
        v = self.uvarint()
        if v > limit:
            raise Reader.Bad("length %d exceeds %d" % (v, limit))
        return v

    def string(self):
        n = self.count(self.remaining())
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Reader.Bad("string is not valid UTF-8")


# ---------------------------------------------------------------------------
# Identities and times

TAIL, SEALED = 1, 2
COMMITS, CLOCK = 1, 2
MAX_RAW = 64 << 20

# 2026-11-30T08:00:00.000Z in milliseconds since the epoch.
T0 = 1796025600000


def replica(hex32):
    b = bytes.fromhex(hex32)
    assert len(b) == 16
    return b


def days_from_civil(y, m, d):
    y -= m <= 2
    era = y // 400  # Python's // already floors
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def date_string(days):
    y, m, d = civil_from_days(days)
    # A year before 0 is "-" and its absolute value padded to 4 digits (crdt.md, "JSON task form").
    return "%s%04d-%02d-%02d" % ("-" if y < 0 else "", abs(y), m, d)


def instant_string(ms):
    days, rem = divmod(ms, 86_400_000)
    return "%sT%02d:%02d:%02d.%03dZ" % (
        date_string(days), rem // 3_600_000, rem // 60_000 % 60, rem // 1000 % 60, rem % 1000)


assert days_from_civil(1970, 1, 1) == 0
assert instant_string(T0) == "2026-11-30T08:00:00.000Z"
assert date_string(days_from_civil(-1, 12, 31)) == "-0001-12-31" and days_from_civil(0, 1, 1) == -719528
assert all(civil_from_days(days_from_civil(y, 2, 29)) == (y, 2, 29) for y in (-400, -4, 0, 4, 2000))


def uuid_bytes(task_id):
    """The 16 bytes of a lowercase canonical UUID id, or None (task id form 1)."""
    if len(task_id) != 36 or any(task_id[i] != "-" for i in (8, 13, 18, 23)):
        return None
    digits = task_id.replace("-", "")
    if any(c not in "0123456789abcdef" for c in digits):
        return None
    return bytes.fromhex(digits)


def uuid_text(b):
    h = b.hex()
    return "%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])


def valid_task_id(s):
    if not 1 <= len(s.encode("utf-8")) <= 128:
        return False
    alnum = lambda c: c.isascii() and c.isalnum()
    return alnum(s[0]) and all(alnum(c) or c in "._-" for c in s[1:])


# ---------------------------------------------------------------------------
# Writer: "Segment header", "Records", "Commit payload"
#
# An operation is a tuple:
#   ("add", id)                       ("remove", id, [dot, ...])
#   ("set", id, field, value)         ("set", id, "meta", key, value)
#   ("addTag", id, tag)               ("removeTag", id, tag, [dot, ...])
#   ("ext", header_byte, body_bytes)  an extension kind (8-15)
#   ("set", id, "unknown", number, encoded_value)
#   ("set", id, "extended", number, encoded_value)   always nibble 15 (damage if number < 15)
# A dot is (replica_bytes, seq). A time is (physical, logical).

FIELDS = {"title": 0, "notes": 1, "done": 2, "priority": 3, "due": 4, "list": 5, "meta": 6}


def segment_header(kind, rep, first_seq, version=1, flags=0):
    b = b"TLOG" + bytes([version, kind]) + u16le(flags) + rep + u64le(first_seq)
    return b + u32le(xxh32(b))


def record(rtype, first_seq, op_count, payload, compress=True):
    stored = payload
    if compress and payload:
        c = lz4.block.compress(payload, store_size=False)
        if len(c) < len(payload):
            stored = c
    body = (bytes([rtype]) + uvarint(first_seq) + uvarint(op_count)
            + uvarint(len(payload)) + uvarint(len(stored)) + stored)
    return u32le(xxh32(body)) + body


def clock_record(first_seq, time):
    return record(CLOCK, first_seq, 0, uvarint(time[0]) + uvarint(time[1]))


def enc_value(field, v):
    if field in ("title",):
        return b"\x04" + string(v)
    if field in ("notes", "list", "meta"):
        return b"\x00" if v is None else b"\x04" + string(v)
    if field == "done":
        return b"\x02" if v else b"\x01"
    if field == "priority":
        return b"\x00" if v is None else bytes([0x10 + v])
    if field == "due":
        if v is None:
            return b"\x00"
        form, n = v
        return (b"\x05" if form == "date" else b"\x06") + svarint(n)
    raise ValueError(field)


def enc_dots(dots):
    out = uvarint(len(dots))
    for rep, seq in dots:
        out += rep + uvarint(seq)
    return out


def commit_payload(commits):
    """commits: [(time, [op, ...]), ...] in increasing time order."""
    table, order = {}, []
    for _, ops in commits:
        for op in ops:
            if op[0] != "ext" and op[1] not in table:
                table[op[1]] = len(order)
                order.append(op[1])
    out = uvarint(len(order))
    for t in order:
        u = uuid_bytes(t)
        out += b"\x00" + u if u is not None else b"\x01" + string(t)
    prev = (0, 0)
    for time, ops in commits:
        assert time > prev or (prev == (0, 0) and time == (0, 0))
        delta = time[0] - prev[0]
        implicit = (prev[1] + 1) & 0xFFFFFFFF if delta == 0 else 0
        if time[1] == implicit:
            out += uvarint(delta << 1)
        else:
            out += uvarint(delta << 1 | 1) + uvarint(time[1])
        prev = time
        out += uvarint(len(ops))
        for op in ops:
            out += enc_op(op, table)
    return out


def enc_op(op, table):
    kind = op[0]
    if kind == "ext":
        _, header, body = op
        assert header >> 4 >= 8
        return bytes([header]) + uvarint(len(body)) + body
    idx = uvarint(table[op[1]])
    if kind == "add":
        return b"\x10" + idx
    if kind == "remove":
        return b"\x20" + idx + enc_dots(op[2])
    if kind == "addTag":
        return b"\x40" + idx + string(op[2])
    if kind == "removeTag":
        return b"\x50" + idx + string(op[2]) + enc_dots(op[3])
    assert kind == "set"
    field = op[2]
    if field == "unknown":
        number, value = op[3], op[4]
        if number < 15:
            return bytes([0x30 | number]) + idx + value
        return b"\x3f" + idx + uvarint(number) + value
    if field == "extended":
        return b"\x3f" + idx + uvarint(op[3]) + op[4]
    if field == "meta":
        return bytes([0x36]) + idx + string(op[3]) + enc_value("meta", op[4])
    return bytes([0x30 | FIELDS[field]]) + idx + enc_value(field, op[3])


class Log:
    """One replica's log: assigns sequence numbers, frames commits."""

    def __init__(self, rep):
        self.rep = rep
        self.next = 1
        self.commits = []  # (first_seq, time, ops)

    def commit(self, time, ops):
        c = (self.next, time, ops)
        self.commits.append(c)
        self.next += len(ops)
        return c

    def dot(self, c, i):
        """The id (dot) of operation i of commit c."""
        return (self.rep, c[0] + i)


def tail_file(rep, first_seq, commits, clock=None):
    """A tail: header, optional clock record, one commits record per commit."""
    out = segment_header(TAIL, rep, first_seq)
    if clock is not None:
        out += clock_record(first_seq, clock)
    for first, time, ops in commits:
        out += record(COMMITS, first, len(ops), commit_payload([(time, ops)]))
    return out


def sealed_file(rep, groups):
    """A sealed segment: one commits record per group of consecutive commits."""
    out = segment_header(SEALED, rep, groups[0][0][0])
    for g in groups:
        n = sum(len(ops) for _, _, ops in g)
        out += record(COMMITS, g[0][0], n, commit_payload([(t, ops) for _, t, ops in g]))
    return out


def sealed_name(first, last):
    return "%016x-%016x.tlog" % (first, last)


# ---------------------------------------------------------------------------
# Reader: the reader rules of Spec/log-format.md


class HeaderError(Exception):
    pass


def read_header(b):
    if len(b) < 4 or b[:4] != b"TLOG":
        raise HeaderError("not a segment")
    if len(b) < 36:
        raise HeaderError("truncated header")
    if xxh32(b[:32]) != int.from_bytes(b[32:36], "little"):
        raise HeaderError("header checksum mismatch")
    if b[4] == 0:
        raise HeaderError("format version 0 is invalid")
    if b[4] != 1:
        raise HeaderError("unsupported version %d" % b[4])
    if b[5] not in (TAIL, SEALED):
        raise HeaderError("unknown segment kind %d" % b[5])
    if b[6] or b[7]:
        raise HeaderError("unsupported flags")
    return {"kind": b[5], "replica": bytes(b[8:24]), "first": int.from_bytes(b[24:32], "little")}


RUNS_PAST_END = "runs past end"
MIN_RECORD = 9  # checksum 4, type 1, and four one-byte varints


def parse_record(b, off, expected_seq, minimum_seq=None):
    """A record dict, RUNS_PAST_END, or (reason, checksum_held).

    checksum_held is False when the framing does not parse or the checksum fails (bytes
    that may be a torn write), True when the checksum holds but the contents are wrong.
    With expected_seq None (resynchronising), any firstSeq with
    minimum_seq <= firstSeq <= minimum_seq + 2**32 is accepted.
    """
    r = Reader(b, off)
    try:
        stored_sum = int.from_bytes(r.take(4), "little")
        rtype = r.u8()
        first = r.uvarint()
        if expected_seq is None and not minimum_seq <= first <= minimum_seq + (1 << 32):
            return ("implausible sequence number", False)
        count = r.uvarint()
        raw_len = r.count(MAX_RAW)
        stored_len = r.uvarint()
    except Reader.Short:
        return RUNS_PAST_END
    except Reader.Bad as e:
        return (str(e), False)
    if stored_len > r.remaining():
        return RUNS_PAST_END
    start, end = r.pos, r.pos + stored_len
    if xxh32(b[off + 4:end]) != stored_sum:
        return ("checksum mismatch", False)
    if rtype not in (COMMITS, CLOCK):
        return ("unknown record type", True)
    if stored_len > raw_len:
        return ("stored payload longer than its raw length", True)
    if expected_seq is not None and first != expected_seq:
        return ("sequence gap", True)
    if rtype == CLOCK and count != 0:
        return ("clock record carries operations", True)
    return {"offset": off, "type": rtype, "first": first, "count": count,
            "raw": raw_len, "stored": bytes(b[start:end]), "end": end}


def resync(b, off, minimum_seq):
    """The valid records after damage at `off`, found byte by byte (log-format.md, "Reader rules")."""
    found, cand = [], off + 1
    while cand + MIN_RECORD <= len(b):
        p = parse_record(b, cand, None, minimum_seq)
        if isinstance(p, dict):
            found.append(p)
            cand, minimum_seq = p["end"], p["first"] + p["count"]
        else:
            cand += 1
    return found


def scan(b):
    """Walks the records: (header, records, ending, damage_offset) with ending clean/torn/corrupt."""
    h = read_header(b)
    records, off, seq = [], 36, h["first"]
    while off < len(b):
        p = parse_record(b, off, seq)
        if isinstance(p, dict):
            records.append(p)
            off, seq = p["end"], p["first"] + p["count"]
            continue
        if p != RUNS_PAST_END and p[1]:
            return h, records, "corrupt", off  # the checksum holds: written that way
        torn = h["kind"] == TAIL and (all(x == 0 for x in b[off:]) or not resync(b, off, seq))
        return h, records, "torn" if torn else "corrupt", off
    return h, records, "clean", None


def payload_of(rec):
    if len(rec["stored"]) == rec["raw"]:
        return rec["stored"]
    try:
        out = lz4.block.decompress(rec["stored"], uncompressed_size=rec["raw"])
    except Exception:
        raise Reader.Bad("LZ4 payload does not decode")
    if len(out) != rec["raw"]:
        raise Reader.Bad("LZ4 payload does not decode")
    return out


def dec_dots(r):
    n = r.count(r.remaining() // 17)
    return [(r.take(16), r.uvarint()) for _ in range(n)]


def dec_value(r):
    """(kind, value); kinds: none bool uint string date instant opaque."""
    tag = r.u8()
    if tag == 0:
        return ("none", None)
    if tag in (1, 2):
        return ("bool", tag == 2)
    if tag == 3:
        return ("uint", r.uvarint())
    if tag == 4:
        return ("string", r.string())
    if tag in (5, 6):
        return ("date" if tag == 5 else "instant", r.svarint())
    if 0x10 <= tag <= 0x1F:
        return ("uint", tag - 0x10)
    if tag >= 0x20:
        r.take(r.count(r.remaining()))
        return ("opaque", None)
    raise Reader.Bad("invalid value tag %d" % tag)


ACCEPTS = {
    "title": {"string"}, "notes": {"string", "none"}, "done": {"bool"},
    "priority": {"uint", "none"}, "due": {"date", "instant", "none"},
    "list": {"string", "none"}, "meta": {"string", "none"},
}
FIELD_NAMES = {v: k for k, v in FIELDS.items()}


def dec_op(r, tasks):
    header = r.u8()
    kind = header >> 4
    if kind >= 8:
        n = r.count(r.remaining())
        return ("ext", header, r.take(n))
    if not tasks:
        raise Reader.Bad("task index with an empty task table")
    task = tasks[r.count(len(tasks) - 1)]
    if kind == 1:
        return ("add", task)
    if kind == 2:
        return ("remove", task, dec_dots(r))
    if kind == 4:
        return ("addTag", task, r.string())
    if kind == 5:
        tag = r.string()
        return ("removeTag", task, tag, dec_dots(r))
    if kind != 3:
        raise Reader.Bad("invalid operation kind %d" % kind)
    nibble = header & 15
    if nibble == 15:
        number = r.uvarint()
        if number < 15:
            raise Reader.Bad("field %d in the extended form" % number)
        start = r.pos
        dec_value(r)
        return ("set", task, "unknown", number, bytes(r.data[start:r.pos]))
    if nibble > 6:
        start = r.pos
        dec_value(r)
        return ("set", task, "unknown", nibble, bytes(r.data[start:r.pos]))
    field = FIELD_NAMES[nibble]
    key = r.string() if field == "meta" else None
    vkind, v = dec_value(r)
    if vkind not in ACCEPTS[field] or (field == "priority" and vkind == "uint" and v > 3):
        raise Reader.Bad("wrong value type for field %d" % nibble)
    if vkind == "date" or vkind == "instant":
        v = (vkind, v)
    if field == "meta":
        return ("set", task, "meta", key, v)
    return ("set", task, field, v)


def dec_commits(payload, first_seq, op_count):
    r = Reader(payload)
    tasks = []
    for _ in range(r.count(len(payload))):
        form = r.u8()
        if form == 0:
            tasks.append(uuid_text(r.take(16)))
        elif form == 1:
            s = r.string()
            if not valid_task_id(s):
                raise Reader.Bad("invalid task id")
            tasks.append(s)
        else:
            raise Reader.Bad("unknown task id form")
    commits, prev, seq, end = [], (0, 0), first_seq, first_seq + op_count
    while not r.at_end():
        step = r.uvarint()
        delta = step >> 1
        physical = prev[0] + delta
        if physical >= 1 << 64:
            raise Reader.Bad("clock overflows")
        if step & 1:
            logical = r.uvarint()
            if logical > 0xFFFFFFFF:
                raise Reader.Bad("logical clock overflows")
        else:
            logical = (prev[1] + 1) & 0xFFFFFFFF if delta == 0 else 0
        time = (physical, logical)
        if commits and not time > prev:
            raise Reader.Bad("commit times do not increase")
        prev = time
        n = r.count(end - seq)
        if n == 0:
            raise Reader.Bad("empty commit")
        ops = [dec_op(r, tasks) for _ in range(n)]
        commits.append((seq, time, ops))
        seq += n
    if seq != end:
        raise Reader.Bad("operation count does not match the record")
    return commits


def dec_clock(payload):
    r = Reader(payload)
    physical, logical = r.uvarint(), r.uvarint()
    if logical > 0xFFFFFFFF:
        raise Reader.Bad("logical clock overflows")
    return (physical, logical)  # bytes after the two varints are ignored


def read_segment(b, want_damage=False):
    """(header, commits, latest_time, ending); ending clean/torn/corrupt.

    With want_damage, also the offset of the first damaged record (None if none)."""
    h, records, ending, damage = scan(b)
    if ending != "corrupt":
        damage = None
    commits, latest = [], (0, 0)
    for rec in records:
        try:
            payload = payload_of(rec)
            if rec["type"] == COMMITS:
                got = dec_commits(payload, rec["first"], rec["count"])
                if got:
                    latest = max(latest, got[-1][1])
                commits += got
            else:
                latest = max(latest, dec_clock(payload))
        except (Reader.Bad, Reader.Short):
            ending, damage = "corrupt", rec["offset"]
            break
    return (h, commits, latest, ending, damage) if want_damage else (h, commits, latest, ending)


def successor(t):
    return (t[0], t[1] + 1) if t[1] < 0xFFFFFFFF else (t[0] + 1, 0)


LOST = ("ext", 0x80, b"")  # the lost operation placeholder: extension kind 8, empty body


def rescue(b):
    """What compaction keeps of a tail damaged in the middle (log-format.md, "Writer rules"):
    (commits for the sealed segment, first sequence number of the fresh tail, its clock)."""
    h, commits, latest, ending, damage = read_segment(b, want_damage=True)
    assert ending == "corrupt"
    nxt = commits[-1][0] + len(commits[-1][2]) if commits else h["first"]
    later = []
    for rec in resync(b, damage, nxt):
        if rec["type"] != COMMITS:
            continue
        try:
            later += dec_commits(payload_of(rec), rec["first"], rec["count"])
        except (Reader.Bad, Reader.Short):
            continue
    kept = list(commits)
    expect = nxt
    for c in later:
        if c[0] > expect:  # unreadable sequence numbers: one placeholder each, in one commit
            last_time = kept[-1][1] if kept else latest
            kept.append((expect, successor(last_time), [LOST] * (c[0] - expect)))
        kept.append(c)
        expect = c[0] + len(c[2])
    clock = max([latest] + [c[1] for c in kept])
    return kept, expect, clock


# ---------------------------------------------------------------------------
# Materialising (Spec/crdt.md)


class ORSet:
    def __init__(self):
        self.tags = {}  # element -> set of dots
        self.tombstones = set()

    def add(self, element, dot):
        if dot not in self.tombstones:
            self.tags.setdefault(element, set()).add(dot)

    def remove(self, element, observed):
        """Tombstones the dots and deletes them from whichever element holds them: normally
        `element`, but a dot named under another element is dead all the same (crdt.md)."""
        for dot in observed:
            self.tombstones.add(dot)
            for holder in [e for e, live in self.tags.items() if dot in live]:
                self.tags[holder].discard(dot)
                if not self.tags[holder]:
                    del self.tags[holder]


class Record:
    def __init__(self):
        self.fields = {}  # name -> (stamp, value)
        self.meta = {}  # key -> (stamp, value)
        self.tags = ORSet()
        self.created = None
        self.updated = (0, 0)

    def touch(self, t):
        self.updated = max(self.updated, t)


def device_name(header, body):
    """The name a device name operation holds (LF "Device name": header 0x90, a body of
    exactly one shortest-form string), bounded as CRDT "Device names" says; None for any
    other extension."""
    if header != 0x90:
        return None
    n, i, shift = 0, 0, 0
    while i < len(body):
        n |= (body[i] & 0x7F) << shift
        shift += 7
        i += 1
        if body[i - 1] < 0x80:
            break
    else:
        return None
    if len(body) != i + n or i != len(uvarint(n)):
        return None
    try:
        name = body[i:].decode("utf-8")
    except UnicodeDecodeError:
        return None
    out = ""
    for ch in name:
        v = ord(ch)
        control = v < 0x20 or 0x7F <= v <= 0x9F or 0x202A <= v <= 0x202E or 0x2066 <= v <= 0x2069
        kept = "\ufffd" if control else ch
        if len((out + kept).encode("utf-8")) > 64:
            break
        out += kept
    return out


class State:
    def __init__(self):
        self.membership = ORSet()
        self.records = {}
        self.version = {}
        self.names = {}  # replica -> (stamp, bounded name)

    def apply_commit(self, rep, commit):
        first, time, ops = commit
        have = self.version.get(rep, 0)
        if first + len(ops) <= have + 1:
            return True
        if first != have + 1:
            return False
        for i, op in enumerate(ops):
            self.apply_op(op, time, rep, first + i)
        self.version[rep] = first + len(ops) - 1
        return True

    def apply_op(self, op, time, rep, seq):
        kind = op[0]
        if kind == "ext":
            name = device_name(op[1], op[2])
            cur = self.names.get(rep)
            if name is not None and (cur is None or (time, rep, seq) > cur[0]):
                self.names[rep] = ((time, rep, seq), name)
            return  # other extension operations name no task and have no effect
        dot = (rep, seq)
        stamp = (time, rep, seq)
        rec = self.records.setdefault(op[1], Record())
        if kind == "add":
            self.membership.add(op[1], dot)
            if rec.created is None or time < rec.created:
                rec.created = time
        elif kind == "remove":
            self.membership.remove(op[1], op[2])
        elif kind == "set" and op[2] == "unknown":
            pass  # no effect but the touch below: it is still an operation on the task
        elif kind == "set" and op[2] == "meta":
            cur = rec.meta.get(op[3])
            if cur is None or stamp > cur[0]:
                rec.meta[op[3]] = (stamp, op[4])
        elif kind == "set":
            cur = rec.fields.get(op[2])
            if cur is None or stamp > cur[0]:
                rec.fields[op[2]] = (stamp, op[3])
        elif kind == "addTag":
            rec.tags.add(op[2], dot)
        elif kind == "removeTag":
            rec.tags.remove(op[2], op[3])
        rec.touch(time)

    def live_tasks(self):
        out = []
        for tid in self.membership.tags:
            rec = self.records[tid]
            f = lambda name, default=None: rec.fields[name][1] if name in rec.fields else default
            done = f("done", False)
            out.append({
                "id": tid, "title": f("title", ""), "notes": f("notes"), "done": done,
                "completedAt": rec.fields["done"][0][0] if done else None,
                "priority": f("priority"), "due": f("due"),
                "tags": sorted(rec.tags.tags, key=lambda s: s.encode("utf-8")),
                "list": f("list"),
                "meta": {k: v for k, (_, v) in rec.meta.items() if v is not None},
                "createdAt": rec.created, "updatedAt": rec.updated,
            })
        out.sort(key=lambda t: (t["createdAt"], t["id"]))
        return out


def read_store_logs(logs_dir, state):
    """The store reader rules, for a quiescent store: returns the worst ending met."""
    worst = "clean"
    rank = {"clean": 0, "torn": 1, "corrupt": 2}
    for name in sorted(os.listdir(logs_dir)):
        if name.startswith("."):
            continue
        if len(name) != 32 or any(c not in "0123456789abcdef" for c in name):
            continue
        rep = bytes.fromhex(name)
        d = os.path.join(logs_dir, name)
        sealed = []
        for n in os.listdir(d):
            if n.startswith(".") or len(n) != 38 or n[16] != "-" or not n.endswith(".tlog"):
                continue
            if any(c not in "0123456789abcdef" for c in n[:16] + n[17:33]):
                continue  # not the canonical name: ignored (a reader warns)
            first, last = int(n[:16], 16), int(n[17:33], 16)
            if first >= 1 and last >= first:
                sealed.append((first, last, n))
        sealed.sort(key=lambda s: (s[0], -s[1]))

        def apply(path, kind, expect_first):
            """Applies the file's commits; False when the replica's log must stop here."""
            nonlocal worst
            with open(path, "rb") as f:
                b = f.read()
            try:
                h, commits, _, ending = read_segment(b)
            except HeaderError:
                worst = "corrupt"
                return True
            if h["replica"] != rep or h["kind"] != kind or (expect_first is not None and h["first"] != expect_first):
                return True
            assert not (kind == TAIL and h["first"] > state.version.get(rep, 0) + 1), "gap before the tail"
            if rank[ending] > rank[worst]:
                worst = ending
            for c in commits:
                if c[0] + len(c[2]) - 1 > state.version.get(rep, 0):
                    if not state.apply_commit(rep, c):
                        return False
            return True

        going = True
        for first, last, n in sealed:
            have = state.version.get(rep, 0)
            if last <= have:
                continue
            if first > have + 1:
                going = False  # a gap: nothing later of this replica applies (a reader warns)
                break
            going = apply(os.path.join(d, n), SEALED, first)
            if not going:
                break
        tail = os.path.join(d, "tail.tlog")
        if going and os.path.exists(tail):
            apply(tail, TAIL, None)
    return worst


def read_one_file(b, state):
    """Reads a single segment file as the only file of its replica."""
    h, commits, _, ending = read_segment(b)
    for c in commits:
        if not state.apply_commit(h["replica"], c):
            break
    return ending


# ---------------------------------------------------------------------------
# The JSON task form (Spec/crdt.md, "JSON task form")


def json_string(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def json_opt(s):
    return "null" if s is None else json_string(s)


def due_text(due):
    if due is None:
        return None
    form, n = due
    return date_string(n) if form == "date" else instant_string(n)


def task_json(t):
    meta_keys = sorted(t["meta"], key=lambda k: k.encode("utf-8"))
    return "".join([
        '{"id":', json_string(t["id"]),
        ',"title":', json_string(t["title"]),
        ',"notes":', json_opt(t["notes"]),
        ',"done":', "true" if t["done"] else "false",
        ',"completedAt":', json_opt(instant_string(t["completedAt"][0]) if t["completedAt"] else None),
        ',"priority":', "null" if t["priority"] is None else str(t["priority"]),
        ',"due":', json_opt(due_text(t["due"])),
        ',"tags":[', ",".join(json_string(x) for x in t["tags"]), "]",
        ',"list":', json_opt(t["list"]),
        ',"meta":{', ",".join(json_string(k) + ":" + json_string(t["meta"][k]) for k in meta_keys), "}",
        ',"createdAt":', json_string(instant_string(t["createdAt"][0])),
        ',"updatedAt":', json_string(instant_string(t["updatedAt"][0])),
        "}",
    ])


def expected_text(state, ending, placement):
    """The expected result. Its first line says how to place the vector in a store:
    placement (rep, "tail" | "sealed" | "store", file name as placed)."""
    rep, where, file = placement
    tasks = [task_json(t) for t in state.live_tasks()]
    version = ",".join('"%s":%d' % (r.hex(), s) for r, s in sorted(state.version.items()))
    body = "[]" if not tasks else "[\n" + ",\n".join(tasks) + "\n]"
    # Device names only where a vector has any, so the others' expected files stay as they were.
    names = "".join(',"devices":{%s}' % ",".join(
        '"%s":%s' % (r.hex(), json.dumps(n, ensure_ascii=False)) for r, (_, n) in sorted(state.names.items()))
        for _ in [0] if state.names)
    text = ('{"replica":"%s","placement":"%s","file":"%s",\n"tasks":%s,"version":{%s},"ending":"%s"%s}\n'
            % (rep.hex(), where, file, body, version, ending, names))
    json.loads(text)  # well-formed
    return text


# ---------------------------------------------------------------------------
# The vectors

A = replica("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")
B = replica("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2")
C = replica("c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3")

MILK = "6f1c2d3e-4b5a-4c6d-8e7f-0123456789ab"
TRIP = "0c0ffee0-1111-4222-8333-444455556666"
PLANTS = "deadbeef-0000-4000-8000-00000000beef"
BILLS = "bi11s"

written = []


def write(name, data):
    path = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    written.append(name)


def single(name, data, must, last=None):
    """Writes a one-file vector and its expected result; checks `must(tasks, version, ending)`.

    A tail is placed as tail.tlog; a sealed segment as <first>-<last>.tlog, with `last` the
    last sequence number it was written to hold (its readable part may end earlier)."""
    write(name, data)
    h = read_header(data)
    if h["kind"] == TAIL:
        placement = (h["replica"], "tail", "tail.tlog")
    else:
        placement = (h["replica"], "sealed", sealed_name(h["first"], last))
    state = State()
    ending = read_one_file(data, state)
    by_id = {t["id"]: t for t in state.live_tasks()}
    must(by_id, state.version, ending)
    write(name.replace(".tlog", ".expected.json"), expected_text(state, ending, placement))
    return state


def ms(seconds):
    return (T0 + seconds * 1000, 0)


def example():
    """The worked example of Spec/log-format.md: a fresh tail with one commit."""
    log = Log(A)
    log.commit((T0, 0), [("add", "task1"), ("set", "task1", "title", "Hi")])
    data = tail_file(A, 1, log.commits, clock=(0, 0))

    def must(t, v, e):
        assert e == "clean" and v == {A: 2} and t["task1"]["title"] == "Hi"
    single("example.tlog", data, must)


def basic_tail():
    log = Log(A)
    c1 = log.commit(ms(0), [
        ("add", MILK), ("set", MILK, "title", "Buy milk"), ("set", MILK, "priority", 2),
        ("addTag", MILK, "home"), ("addTag", MILK, "errand"), ("addTag", MILK, "caf\u00e9"),
        ("addTag", MILK, "Zulu"),
    ])
    c2 = log.commit((T0, 1), [
        ("add", BILLS), ("set", BILLS, "title", 'Pay "the" bills\n\tby Friday\x01'),
        ("set", BILLS, "due", ("date", days_from_civil(2026, 12, 1))),
        ("set", BILLS, "list", "home"), ("set", BILLS, "meta", "source", "mail"),
        ("add", TRIP), ("set", TRIP, "title", "Book trip \u2708"),
        ("set", TRIP, "due", ("instant", T0 + 86_400_000 + 1234)),
    ])
    log.commit(ms(1), [("set", MILK, "title", "Buy oat milk"), ("set", MILK, "notes", "2% fat"),
                       ("set", MILK, "due", ("instant", T0 + 86_400_000 + 1234))])
    log.commit(ms(2), [("set", MILK, "done", True)])
    log.commit(ms(3), [("removeTag", MILK, "errand", [log.dot(c1, 4)])])
    log.commit(ms(4), [("remove", BILLS, [log.dot(c2, 0)]), ("remove", TRIP, [log.dot(c2, 5)])])
    log.commit(ms(5), [("add", BILLS), ("set", BILLS, "meta", "source", None),
                       ("set", BILLS, "meta", "seen", "yes"), ("set", BILLS, "meta", "Zed", "z"),
                       ("set", BILLS, "meta", "a-key", "1")])
    data = tail_file(A, 1, log.commits, clock=(T0 - 60_000, 7))

    def must(t, v, e):
        assert e == "clean" and v == {A: log.next - 1}
        assert set(t) == {MILK, BILLS}, "the trip stays deleted; the bills are restored"
        m = t[MILK]
        assert (m["title"], m["notes"], m["done"], m["priority"], m["tags"]) == (
            "Buy oat milk", "2% fat", True, 2, ["Zulu", "caf\u00e9", "home"])
        assert due_text(m["due"]) == "2026-12-01T08:00:01.234Z"
        assert m["completedAt"] == ms(2) and m["createdAt"] == ms(0) and m["updatedAt"] == ms(3)
        b = t[BILLS]
        assert b["createdAt"] == (T0, 1) and b["updatedAt"] == ms(5) and b["meta"] == {"seen": "yes", "Zed": "z", "a-key": "1"}
        assert b["due"] == ("date", days_from_civil(2026, 12, 1)) and b["list"] == "home"
    single("basic-tail.tlog", data, must)


def sealed():
    log = Log(C)
    ids = ["bulk-%03d" % i for i in range(40)]
    for i, tid in enumerate(ids):
        # Two commits per millisecond: the second has an implicit logical part of 1.
        ops = [("add", tid), ("set", tid, "title", "Bulk task number %d" % i), ("addTag", tid, "bulk")]
        if i % 4:
            ops.append(("set", tid, "priority", i % 4))
        log.commit((T0 + (i // 2) * 1000, i % 2), ops)
    # An explicit logical part: same millisecond, logical 5 after 1.
    log.commit((T0 + 19_000, 5), [("set", ids[0], "done", True)])
    log.commit(ms(30), [("remove", ids[1], [log.dot(log.commits[1], 0)])])
    data = sealed_file(C, [log.commits])
    h, recs, _, _ = scan(data)
    assert len(recs) == 1 and len(recs[0]["stored"]) < recs[0]["raw"], "LZ4 must shrink the payload"

    def must(t, v, e):
        assert e == "clean" and v == {C: log.next - 1} and len(t) == 39 and "bulk-001" not in t
        assert t["bulk-000"]["done"] and t["bulk-000"]["completedAt"] == (T0 + 19_000, 5)
        assert t["bulk-003"]["createdAt"] == (T0 + 1000, 1) and t["bulk-003"]["priority"] == 3
    single("sealed.tlog", data, must, last=log.next - 1)


def two_replicas():
    a, b = Log(A), Log(B)
    # A's first commits, later sealed.
    a1 = a.commit(ms(0), [("add", TRIP), ("set", TRIP, "title", "Plan trip"), ("set", TRIP, "priority", 1),
                          ("addTag", TRIP, "travel")])
    a2 = a.commit(ms(1), [("add", PLANTS), ("set", PLANTS, "title", "Water plants")])
    a3 = a.commit(ms(2), [("add", MILK), ("set", MILK, "title", "Milk")])
    # B has synced A's first commits and edits concurrently with A's tail below.
    b.commit(ms(10), [("set", TRIP, "title", "Plan summer trip"), ("set", PLANTS, "title", "Water the plants"),
                      ("addTag", TRIP, "travel")])
    b.commit(ms(12), [("add", MILK), ("set", MILK, "notes", "from B")])
    b.commit(ms(15), [("set", TRIP, "priority", 0), ("set", TRIP, "done", True)])
    # A's tail: same time as B's first commit (tie broken by replica id: B wins).
    a.commit(ms(10), [("set", TRIP, "title", "Plan Japan trip"),
                      ("removeTag", TRIP, "travel", [a.dot(a1, 3)])])
    a.commit(ms(11), [("remove", PLANTS, [a.dot(a2, 0)])])
    a.commit(ms(20), [("set", TRIP, "priority", 3)])
    a.commit(ms(30), [("remove", MILK, [a.dot(a3, 0)])])

    root = "two-replicas"
    if os.path.exists(os.path.join(HERE, root)):
        shutil.rmtree(os.path.join(HERE, root))
    write(root + "/tasklog-store", "tasklog-store 1\nreplica %s\n" % A.hex())
    sealed_commits = a.commits[:3]
    last = sealed_commits[-1][0] + len(sealed_commits[-1][2]) - 1
    write("%s/logs/%s/%s" % (root, A.hex(), sealed_name(1, last)), sealed_file(A, [sealed_commits]))
    write("%s/logs/%s/tail.tlog" % (root, A.hex()),
          tail_file(A, last + 1, a.commits[3:], clock=sealed_commits[-1][1]))
    # B's operations as integration writes them into this store: sealed segments, one per sync.
    b_last1 = b.commits[1][0] + len(b.commits[1][2]) - 1
    write("%s/logs/%s/%s" % (root, B.hex(), sealed_name(1, b_last1)), sealed_file(B, [b.commits[:2]]))
    write("%s/logs/%s/%s" % (root, B.hex(), sealed_name(b_last1 + 1, b.next - 1)), sealed_file(B, [b.commits[2:]]))

    state = State()
    ending = read_store_logs(os.path.join(HERE, root, "logs"), state)
    t = {x["id"]: x for x in state.live_tasks()}
    assert ending == "clean" and state.version == {A: a.next - 1, B: b.next - 1}
    assert set(t) == {TRIP, MILK}, "plants: a remove beats a concurrent edit"
    trip = t[TRIP]
    assert trip["title"] == "Plan summer trip", "equal times: the greater replica id wins"
    assert trip["priority"] == 3 and trip["done"] and trip["completedAt"] == ms(15)
    assert trip["tags"] == ["travel"], "add-wins: B's concurrent tag add survives A's removal"
    assert t[MILK]["createdAt"] == ms(2) and t[MILK]["notes"] == "from B", "B's concurrent add survives"
    assert trip["updatedAt"] == ms(20) and t[MILK]["updatedAt"] == ms(30)
    write(root + ".expected.json", expected_text(state, ending, (A, "store", root)))


def unknown_kinds():
    log = Log(A)
    log.commit(ms(0), [
        ("add", MILK), ("set", MILK, "title", "Milk"),
        ("ext", 0x83, b"\x01future\x00"),                     # extension kind 8
        ("set", MILK, "unknown", 9, b"\x25\x03abc"),          # field 9, opaque value tag 0x25
        ("set", MILK, "unknown", 300, b"\x17"),               # extended field 300, small uint 7
        ("set", MILK, "priority", 1),
    ])
    log.commit(ms(1), [("ext", 0xF0, b"")])                   # a commit of extension ops only
    log.commit(ms(2), [("set", MILK, "unknown", 7, b"\x04\x02hi"), ("set", MILK, "notes", "kept")])
    log.commit(ms(3), [("set", MILK, "unknown", 20, b"\x02")])  # only an unknown field: still touches
    log.commit(ms(4), [("ext", 0x9A, b"\x00\x01")])              # only an extension: touches nothing
    data = tail_file(A, 1, log.commits, clock=(0, 0))

    def must(t, v, e):
        assert e == "clean" and v == {A: log.next - 1} == {A: 11}
        m = t[MILK]
        assert m["priority"] == 1 and m["notes"] == "kept" and m["updatedAt"] == ms(3)
    single("unknown-kinds.tlog", data, must)


def device_names():
    def name(text, extra=b""):
        raw = text.encode("utf-8")
        return ("ext", 0x90, uvarint(len(raw)) + raw + extra)
    hostile = "\x1b[31mevil\u202e" + "\u20ac" * 40
    log = Log(A)
    log.commit(ms(0), [name("laptop"), ("add", MILK), ("set", MILK, "title", "Milk")])
    log.commit(ms(1), [name("kitchen laptop")])                 # a rename: the newest wins
    log.commit(ms(2), [("ext", 0x91, uvarint(3) + b"odd")])     # kind 9, low nibble 1: unknown
    log.commit(ms(3), [name("trailing", b"\x00")])              # bytes after the string: unknown
    log.commit(ms(4), [("ext", 0x90, b"\x85\x00" + b"wider")])  # a length not in shortest form
    log.commit(ms(5), [name(hostile)])                          # bounded when read
    data = tail_file(A, 1, log.commits, clock=(0, 0))

    def must(t, v, e):
        assert e == "clean" and v == {A: 8} and t[MILK]["updatedAt"] == ms(0)
    state = single("device-names.tlog", data, must)
    bounded = state.names[A][1]
    assert bounded == "\ufffd[31mevil\ufffd" + "\u20ac" * 16 and len(bounded.encode("utf-8")) == 62


def torn_tail():
    log = Log(A)
    log.commit(ms(0), [("add", MILK), ("set", MILK, "title", "Milk")])
    log.commit(ms(1), [("set", MILK, "priority", 3)])
    log.commit(ms(2), [("set", MILK, "title", "Lost milk")])
    full = tail_file(A, 1, log.commits, clock=(0, 0))
    data = full[:-3]  # the last record is cut short

    def must(t, v, e):
        assert e == "torn" and v == {A: 3} and t[MILK]["title"] == "Milk" and t[MILK]["priority"] == 3
    single("torn-tail.tlog", data, must)

    data = tail_file(A, 1, log.commits[:2], clock=(0, 0)) + bytes(64)  # preallocated zeros

    def must_zeros(t, v, e):
        assert e == "torn" and v == {A: 3}
    single("torn-zeros.tlog", data, must_zeros)


def corrupt():
    # A sealed segment of three records; a payload byte of the second is flipped.
    log = Log(B)
    for i in range(9):
        tid = "item-%d" % i
        log.commit(ms(i), [("add", tid), ("set", tid, "title", "Item %d" % i)])
    groups = [log.commits[0:3], log.commits[3:6], log.commits[6:9]]
    data = bytearray(sealed_file(B, groups))
    h, recs, _, _ = scan(bytes(data))
    data[recs[1]["end"] - 2] ^= 0x01

    def must(t, v, e):
        assert e == "corrupt" and v == {B: 6} and set(t) == {"item-0", "item-1", "item-2"}
    single("corrupt-middle.tlog", bytes(data), must, last=log.next - 1)

    # The same damage in a tail, with whole records after it: corruption, not a torn tail.
    tail = bytearray(tail_file(B, 1, log.commits[:4], clock=(0, 0)))
    h, recs, _, _ = scan(bytes(tail))
    tail[recs[2]["end"] - 2] ^= 0x01  # records[0] is the clock record: this damages commit 2

    def must_tail(t, v, e):
        assert e == "corrupt" and v == {B: 2} and set(t) == {"item-0"}
    single("corrupt-tail.tlog", bytes(tail), must_tail)
    return bytes(tail), log


def torn_or_corrupt():
    """The torn-vs-corrupt rule of a tail: the checksum decides, then resynchronisation."""
    log = Log(A)
    log.commit(ms(0), [("add", MILK), ("set", MILK, "title", "Milk")])
    log.commit(ms(1), [("set", MILK, "priority", 3)])
    log.commit(ms(2), [("set", MILK, "title", "Lost milk")])
    full = tail_file(A, 1, log.commits, clock=(0, 0))
    # The last record's end is overwritten and stale non-zero bytes follow it: its checksum
    # fails and no valid record can be found after it, so it is a torn write.
    data = full[:-6] + b"\xa5" * 30
    h, recs, ending, off = scan(data)
    assert ending == "torn" and off < len(full) - 6 and len(recs) == 3

    def must_garbage(t, v, e):
        assert e == "torn" and v == {A: 3} and t[MILK]["title"] == "Milk"
    single("torn-garbage.tlog", data, must_garbage)

    # A last record whose checksum holds but whose type is unknown: written that way, so
    # corruption even at the end of a tail.
    data = tail_file(A, 1, log.commits[:2], clock=(0, 0)) + record(3, 4, 0, b"future")

    def must_type(t, v, e):
        assert e == "corrupt" and v == {A: 3} and t[MILK]["priority"] == 3
    single("corrupt-type-tail.tlog", data, must_type)


def extended_low_field():
    """A set writing field 3 (priority) in the extended form: damage, even in a tail."""
    log = Log(A)
    log.commit(ms(0), [("add", MILK), ("set", MILK, "title", "Milk")])
    log.commit(ms(1), [("set", MILK, "extended", 3, b"\x12")])
    log.commit(ms(2), [("set", MILK, "notes", "after the damage")])
    data = tail_file(A, 1, log.commits, clock=(0, 0))

    def must(t, v, e):
        assert e == "corrupt" and v == {A: 2} and t[MILK]["priority"] is None and t[MILK]["notes"] is None
    single("extended-low-field.tlog", data, must)


def misnamed_remove():
    """A remove naming another task's add dot: that dot is dead all the same."""
    log = Log(A)
    c1 = log.commit(ms(0), [("add", MILK), ("set", MILK, "title", "Milk"),
                            ("add", BILLS), ("set", BILLS, "title", "Bills")])
    log.commit(ms(1), [("remove", BILLS, [log.dot(c1, 0)])])  # names MILK's add under BILLS

    def must(t, v, e):
        assert e == "clean" and v == {A: 5} and set(t) == {BILLS}
        assert t[BILLS]["updatedAt"] == ms(1), "the remove touches the task it names"
    single("misnamed-remove.tlog", tail_file(A, 1, log.commits, clock=(0, 0)), must)


def lost_placeholder(damaged_tail, log):
    """What compaction makes of corrupt-tail.tlog: the readable commit, a placeholder commit
    for the unreadable operations, and the commits recovered after the damage."""
    kept, next_seq, clock = rescue(damaged_tail)
    assert [c[0] for c in kept] == [1, 3, 5, 7] and next_seq == 9 and clock == ms(3)
    assert kept[1][2] == [LOST, LOST] and kept[1][1] == (T0, 1), "successor of the last readable time"
    assert kept[0] == log.commits[0] and kept[2:] == log.commits[2:4]
    data = sealed_file(B, [kept])

    def must(t, v, e):
        assert e == "clean" and v == {B: 8} and set(t) == {"item-0", "item-2", "item-3"}
    single("lost-placeholder.tlog", data, must, last=next_seq - 1)


def main():
    example()
    basic_tail()
    sealed()
    two_replicas()
    unknown_kinds()
    device_names()
    torn_tail()
    damaged_tail, log = corrupt()
    torn_or_corrupt()
    extended_low_field()
    misnamed_remove()
    lost_placeholder(damaged_tail, log)
    for name in written:
        print(name)


if __name__ == "__main__":
    sys.exit(main())
