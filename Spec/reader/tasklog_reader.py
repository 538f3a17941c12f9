#!/usr/bin/env python3
"""An independent reader of TaskLog stores, written from the Spec documents alone.

    python3 tasklog_reader.py STORE_DIR            # what `tasklog list --all --json` prints
    python3 tasklog_reader.py STORE_DIR --status   # the version vector: {"<hex>":seq,...}
    python3 tasklog_reader.py --vector F.tlog --replica HEX --placement tail|sealed [--file NAME]

References name sections of Spec/log-format.md ("LF") and Spec/crdt.md ("CRDT"). The
reader never writes, takes no lock and ignores the snapshot (LF "Snapshot file": a
reader MAY, the logs being the source of truth). Warnings go to stderr as lines starting
with "warning:". Needs the PyPI packages lz4 and xxhash (`pip install lz4 xxhash`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import lz4.block
import xxhash

U32_MAX = 2**32 - 1
MAX_PHYSICAL = 2**48 - 1  # CRDT "Hybrid logical clock"
MAX_RAW_LENGTH = 64 * 1024 * 1024  # LF "Records"
HEADER_SIZE = 36  # LF "Segment header"
SMALLEST_RECORD = 9  # LF "Reader rules", resynchronising
LISTINGS = 4  # LF "Reader rules", reading a store, step 5 (the reference reader's count)
NEWEST_STORE_FORMAT = 1  # LF "Store folder", identity file

HEX32 = re.compile(r"[0-9a-f]{32}")
SEALED_NAME = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16})\.tlog")
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Time = tuple[int, int]  # (physical ms, logical): CRDT "Hybrid logical clock"
Dot = tuple[bytes, int]  # (replica, seq): CRDT "Operations"
Stamp = tuple[int, int, bytes, int]  # (physical, logical, replica, seq)
Value = tuple[str, object]  # (kind, payload): LF "Value tags"


class Damage(Exception):
    """Bytes that break a rule of LF (a bad varint, an undecodable payload, ...)."""


class Truncated(Damage):
    """The bytes end inside a value; in record framing, "runs past the end"."""


def xxh32(data: bytes) -> int:
    """LF "Conventions": the 32-bit xxHash with seed 0."""
    return xxhash.xxh32_intdigest(data, seed=0)


class ByteReader:
    """The primitive types of LF "Conventions", read from a byte string."""

    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int) -> bytes:
        if n > self.remaining():
            raise Truncated("the bytes end early")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def u8(self) -> int:
        return self.take(1)[0]

    def uvarint(self) -> int:
        """LEB128 of at most 10 bytes, a 10th byte 0 or 1; longer forms than needed are fine."""
        value = 0
        for i in range(10):
            byte = self.u8()
            if i == 9 and byte > 1:
                raise Damage("malformed varint")
            value |= (byte & 0x7F) << (7 * i)
            if byte < 0x80:
                break
        return value

    def svarint(self) -> int:
        u = self.uvarint()
        return (u >> 1) ^ -(u & 1)

    def string(self) -> str:
        try:
            return self.take(self.uvarint()).decode("utf-8")
        except UnicodeDecodeError as e:
            raise Damage("invalid UTF-8") from e


# --------------------------------------------------------------------------------------
# Segment files: LF "Segment header", "Records", "Reader rules" (scanning, decoding)

@dataclass
class Header:
    kind: int
    replica: bytes
    first_seq: int


def parse_header(data: bytes) -> Header:
    """LF "Segment header": the checks in the order given; any failure rejects the file."""
    if data[:4] != b"TLOG":
        raise Damage("not a segment file (bad magic)")
    if len(data) < HEADER_SIZE:
        raise Damage("shorter than a segment header")
    if xxh32(data[:32]) != int.from_bytes(data[32:36], "little"):
        raise Damage("bad header checksum")
    if data[4] == 0:
        raise Damage("segment version 0 (a damaged header)")
    if data[4] != 1:
        raise Damage(f"segment format version {data[4]} is newer than this reader; upgrade")
    if data[5] not in (1, 2):
        raise Damage(f"unknown segment kind {data[5]}; upgrade")
    if data[6:8] != b"\0\0":
        raise Damage("nonzero header flags; upgrade")
    return Header(data[5], bytes(data[8:24]), int.from_bytes(data[24:32], "little"))


@dataclass
class Record:
    offset: int
    end: int
    type: int
    first_seq: int
    op_count: int
    raw_length: int
    stored: bytes


VALID, PAST_END, UNPARSABLE, BAD_CHECKSUM, WRONG = "valid", "runs past the end", "unparsable", "fails its checksum", "wrong"


def frame_record(data: bytes, offset: int, seq_ok: Callable[[int], bool]) -> tuple[str, Optional[Record]]:
    """LF "Reader rules", steps 1-5 of parsing the record at `offset`."""
    r = ByteReader(data, offset)
    try:
        checksum = int.from_bytes(r.take(4), "little")
        rtype, first_seq, op_count, raw_length = r.u8(), r.uvarint(), r.uvarint(), r.uvarint()
        if raw_length > MAX_RAW_LENGTH:
            return UNPARSABLE, None
        stored_length = r.uvarint()
    except Truncated:
        return PAST_END, None
    except Damage:
        return UNPARSABLE, None
    if stored_length > r.remaining():
        return PAST_END, None
    end = r.pos + stored_length
    if xxh32(data[offset + 4:end]) != checksum:
        return BAD_CHECKSUM, None
    record = Record(offset, end, rtype, first_seq, op_count, raw_length, data[r.pos:end])
    if (rtype not in (1, 2) or stored_length > raw_length or not seq_ok(first_seq)
            or (rtype == 2 and op_count != 0)):
        return WRONG, record
    return VALID, record


def resynchronise(data: bytes, offset: int, minimum: int) -> bool:
    """LF "Reader rules", resynchronising: is any valid record found after `offset`?"""
    seq_ok = lambda seq: minimum <= seq <= minimum + 2**32  # noqa: E731
    return any(frame_record(data, c, seq_ok)[0] == VALID
               for c in range(offset + 1, len(data) - SMALLEST_RECORD + 1))


@dataclass
class Scan:
    records: list[Record]
    ending: str  # "clean", "torn" or "corrupt"
    problem: str = ""


def scan_records(data: bytes, header: Header) -> Scan:
    """LF "Reader rules", scanning a segment, with its table of endings."""
    records: list[Record] = []
    expected, offset = header.first_seq, HEADER_SIZE
    while offset < len(data):
        status, record = frame_record(data, offset, lambda seq: seq == expected)
        if status == VALID:
            records.append(record)
            expected, offset = record.first_seq + record.op_count, record.end
            continue
        problem = f"the record at byte {offset} {'is wrong' if status == WRONG else status}"
        if status != WRONG and header.kind == 1 and (
                not any(data[offset:]) or not resynchronise(data, offset, expected)):
            return Scan(records, "torn")
        return Scan(records, "corrupt", problem)
    return Scan(records, "clean")


# LF "Commit payload": operations, set fields, value tags

TITLE, NOTES, DONE, PRIORITY, DUE, LIST, META = range(7)
FIELD_TYPES = {  # LF "Set fields": what each known field accepts
    TITLE: {"string"}, NOTES: {"string", "none"}, DONE: {"bool"}, PRIORITY: {"uint", "none"},
    DUE: {"date", "instant", "none"}, LIST: {"string", "none"}, META: {"string", "none"},
}


@dataclass
class Op:
    kind: int  # 1 add, 2 remove, 3 set, 4 add tag, 5 remove tag, 8-15 extension
    task: Optional[str] = None  # None for extensions: they name no task
    name: Optional[str] = None  # a device name (header 0x90), as written
    number: Optional[int] = None  # a set's field number
    key: Optional[str] = None  # a meta set's key
    value: Optional[Value] = None
    tag: Optional[str] = None
    dots: list[Dot] = field(default_factory=list)


@dataclass
class Commit:
    first_seq: int
    time: Time
    ops: list[Op]


def read_value(r: ByteReader) -> Value:
    """LF "Value tags"."""
    tag = r.u8()
    fixed = {0x00: ("none", None), 0x01: ("bool", False), 0x02: ("bool", True)}
    if tag in fixed:
        return fixed[tag]
    readers = {0x03: ("uint", r.uvarint), 0x04: ("string", r.string),
               0x05: ("date", r.svarint), 0x06: ("instant", r.svarint)}
    if tag in readers:
        kind, read = readers[tag]
        return (kind, read())
    if tag <= 0x0F:
        raise Damage(f"reserved value tag {tag:#04x}")
    if tag <= 0x1F:
        return ("uint", tag - 0x10)
    return ("opaque", r.take(r.uvarint()))


def read_dots(r: ByteReader) -> list[Dot]:
    return [(r.take(16), r.uvarint()) for _ in range(r.uvarint())]


def read_task_table(r: ByteReader) -> list[str]:
    """Form 0: a UUID's 16 bytes, read back as lowercase canonical text; form 1: a string."""
    table = []
    for _ in range(r.uvarint()):
        form = r.u8()
        if form == 0:
            h = r.take(16).hex()
            table.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
        elif form == 1:
            table.append(r.string())
            if not TASK_ID.fullmatch(table[-1]):
                raise Damage(f"invalid task id {table[-1]!r}")
        else:
            raise Damage(f"unknown task reference form {form}")
    return table


def read_op(r: ByteReader, table: list[str]) -> Op:
    """LF "Operations", "Extension kinds", "Set fields"."""
    header = r.u8()
    kind, low = header >> 4, header & 0x0F
    if kind >= 8:
        body = r.take(r.uvarint())  # an extension: skipped, its sequence number consumed
        return Op(kind, name=device_name(body) if header == 0x90 else None)
    if kind not in (1, 2, 3, 4, 5):
        raise Damage(f"reserved operation kind {kind}")
    index = r.uvarint()
    if index >= len(table):
        raise Damage("a task index outside the task table")
    op = Op(kind, task=table[index])
    if kind == 2:
        op.dots = read_dots(r)
    elif kind == 3:
        op.number = low if low < 15 else r.uvarint()
        if low == 15 and op.number < 15:
            raise Damage("a field number below 15 in the extended form")
        if low == META:
            op.key = r.string()
        op.value = read_value(r)
        if op.number in FIELD_TYPES and op.value[0] not in FIELD_TYPES[op.number]:
            raise Damage(f"a {op.value[0]} value for field {op.number}")
        if op.number == PRIORITY and op.value[0] == "uint" and op.value[1] > 3:
            raise Damage("a priority over 3")
    elif kind in (4, 5):
        op.tag = r.string()
        if kind == 5:
            op.dots = read_dots(r)
    return op


def device_name(body: bytes) -> Optional[str]:
    """LF "Device name": a body of exactly one string whose length is in the shortest form;
    any other body leaves the operation an unknown extension (None)."""
    r = ByteReader(body)
    try:
        n = r.uvarint()
        if r.remaining() != n or len(body) - n != len(encode_uvarint(n)):
            return None
        return r.take(n).decode("utf-8")
    except (Damage, UnicodeDecodeError):
        return None


def encode_uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def bounded_name(name: str) -> str:
    """CRDT "Device names": each control character becomes U+FFFD, then the longest prefix of
    whole scalars within 64 bytes of UTF-8 is kept."""
    out, size = [], 0
    for ch in name:
        v = ord(ch)
        if v < 0x20 or 0x7F <= v <= 0x9F or 0x202A <= v <= 0x202E or 0x2066 <= v <= 0x2069:
            ch = "\ufffd"
        size += len(ch.encode("utf-8"))
        if size > 64:
            break
        out.append(ch)
    return "".join(out)


def read_time(r: ByteReader, prev: Time) -> Time:
    """LF "Commit payload", commit times: delta-encoded from the previous commit's."""
    step = r.uvarint()
    delta = step >> 1
    physical = prev[0] + delta
    if physical > MAX_PHYSICAL:
        raise Damage("a commit time past the largest physical time")
    if step & 1:
        logical = r.uvarint()
        if logical > U32_MAX:
            raise Damage("a logical time over 2^32-1")
    else:
        logical = (prev[1] + 1) % 2**32 if delta == 0 else 0
    return (physical, logical)


def decode_commits(payload: bytes, first_seq: int, op_count: int) -> list[Commit]:
    """LF "Commit payload": a task table then commits to the end of the payload."""
    r = ByteReader(payload)
    table = read_task_table(r)
    commits: list[Commit] = []
    seq, prev = first_seq, (0, 0)
    while r.remaining():
        time = read_time(r, prev)
        if commits and time <= prev:
            raise Damage("commit times do not increase within the payload")
        count = r.uvarint()
        if count == 0:
            raise Damage("a commit with no operation")
        commits.append(Commit(seq, time, [read_op(r, table) for _ in range(count)]))
        seq, prev = seq + count, time
    if seq - first_seq != op_count:  # a payload with no commit is valid (opCount 0)
        raise Damage("the commits' operations do not add up to the record's opCount")
    return commits


def decode_clock(payload: bytes) -> Time:
    """LF "Records": a clock record; bytes after its two varints are ignored."""
    r = ByteReader(payload)
    physical, logical = r.uvarint(), r.uvarint()
    if physical > MAX_PHYSICAL or logical > U32_MAX:
        raise Damage("a clock time out of range")
    return (physical, logical)


def record_payload(record: Record) -> bytes:
    """LF "Records": stored raw, or an LZ4 block decoding to exactly rawLength bytes."""
    if len(record.stored) == record.raw_length:
        return record.stored
    try:
        out = lz4.block.decompress(record.stored, uncompressed_size=record.raw_length)
    except Exception as e:  # the lz4 package raises plain errors for bad blocks
        raise Damage("a bad LZ4 block") from e
    if len(out) != record.raw_length:
        raise Damage("an LZ4 block shorter than rawLength")
    return out


@dataclass
class Segment:
    header: Header
    commits: list[Commit]
    ending: str
    problem: str = ""


def read_segment(data: bytes) -> Segment:
    """LF "Reader rules": scan, then decode the valid records in order. A payload that
    does not decode ends the file there, as corruption (even in a tail)."""
    header = parse_header(data)
    scan = scan_records(data, header)
    commits: list[Commit] = []
    for record in scan.records:
        try:
            payload = record_payload(record)
            if record.type == 1:
                decoded = decode_commits(payload, record.first_seq, record.op_count)
                if decoded and commits and decoded[0].time <= commits[-1].time:
                    raise Damage("commit times go backwards across records")
                commits += decoded
            else:
                decode_clock(payload)
        except Damage as e:
            return Segment(header, commits, "corrupt", f"the record at byte {record.offset} does not decode: {e}")
    return Segment(header, commits, scan.ending, scan.problem)


# --------------------------------------------------------------------------------------
# The replicated state: CRDT "LWW register", "OR-set", "Task model", "Materialising"

@dataclass
class Register:
    value: Value
    stamp: Stamp

    def assign(self, value: Value, stamp: Stamp) -> None:
        """Keeps the write with the greater stamp."""
        if stamp > self.stamp:
            self.value, self.stamp = value, stamp


@dataclass
class ORSet:
    """Add-wins: live dots per element, tombstones for the whole set."""
    live: dict[str, set[Dot]] = field(default_factory=dict)
    owner: dict[Dot, str] = field(default_factory=dict)
    tombstones: set[Dot] = field(default_factory=set)

    def add(self, element: str, dot: Dot) -> None:
        if dot not in self.tombstones:
            self.live.setdefault(element, set()).add(dot)
            self.owner[dot] = element

    def remove(self, observed: list[Dot]) -> None:
        """A tombstoned dot is dead wherever it is, under whichever element holds it."""
        for dot in observed:
            self.tombstones.add(dot)
            if dot in self.owner:
                self.live[self.owner.pop(dot)].discard(dot)

    def present(self, element: str) -> bool:
        return bool(self.live.get(element))


@dataclass
class TaskRecord:
    fields: dict[int, Register] = field(default_factory=dict)
    meta: dict[str, Register] = field(default_factory=dict)
    tags: ORSet = field(default_factory=ORSet)
    created: Optional[Time] = None
    updated: Optional[Time] = None


@dataclass
class State:
    vv: dict[bytes, int] = field(default_factory=dict)
    membership: ORSet = field(default_factory=ORSet)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    names: dict[bytes, Register] = field(default_factory=dict)  # CRDT "Device names"

    def apply_commit(self, replica: bytes, commit: Commit) -> bool:
        """Applies a commit that continues the replica's prefix; False for one that
        neither continues it nor was applied already (CRDT "Materialising")."""
        have = self.vv.get(replica, 0)
        last = commit.first_seq + len(commit.ops) - 1
        if last <= have:
            return True
        if commit.first_seq != have + 1:
            return False
        for i, op in enumerate(commit.ops):
            self.apply_op(op, commit.time, (replica, commit.first_seq + i))
        self.vv[replica] = last
        return True

    def apply_op(self, op: Op, t: Time, dot: Dot) -> None:
        """The table of effects of CRDT "Materialising"; every op naming a task touches it."""
        if op.name is not None:
            stamp = (t[0], t[1], dot[0], dot[1])
            name = bounded_name(op.name)
            self.names.setdefault(dot[0], Register(name, stamp)).assign(name, stamp)
        if op.task is None:
            return  # extensions (the lost operation placeholder included): no effect
        task = self.tasks.setdefault(op.task, TaskRecord())
        stamp = (t[0], t[1], dot[0], dot[1])
        if op.kind == 1:
            self.membership.add(op.task, dot)
            task.created = t if task.created is None else min(task.created, t)
        elif op.kind == 2:
            self.membership.remove(op.dots)
        elif op.kind == 3 and op.number == META:
            task.meta.setdefault(op.key, Register(op.value, stamp)).assign(op.value, stamp)
        elif op.kind == 3 and op.number in FIELD_TYPES:
            task.fields.setdefault(op.number, Register(op.value, stamp)).assign(op.value, stamp)
        elif op.kind == 4:
            task.tags.add(op.tag, dot)
        elif op.kind == 5:
            task.tags.remove(op.dots)
        task.updated = t if task.updated is None else max(task.updated, t)


# --------------------------------------------------------------------------------------
# Reading a store: LF "Store folder" (identity file, names), "Reader rules" (reading a store)

class Refusal(Exception):
    """The folder cannot be read as a store."""


def warn(message: str, _seen: set[str] = set()) -> None:
    """Each distinct warning once: listing a folder again must not repeat them."""
    if message not in _seen:
        _seen.add(message)
        print(f"warning: {message}", file=sys.stderr)


def read_identity(store: str) -> str:
    """LF "Store folder", identity file: the store's own replica, lowercase hex."""
    try:
        with open(os.path.join(store, "tasklog-store"), "rb") as f:
            lines = [line for line in f.read().split(b"\n") if line]
    except FileNotFoundError:
        raise Refusal(f"{store} is not a TaskLog store (it has no tasklog-store file)")
    first = re.fullmatch(rb"tasklog-store ([0-9]+)", lines[0]) if lines else None
    second = re.fullmatch(rb"replica ([0-9a-fA-F]{32})", lines[1]) if len(lines) > 1 else None
    if not first or not second or int(first.group(1)) < 1:
        raise Refusal(f"{store}: its tasklog-store identity file is malformed")
    if int(first.group(1)) > NEWEST_STORE_FORMAT:
        raise Refusal(f"{store} uses store format {int(first.group(1))}, newer than this reader; upgrade")
    return second.group(1).decode().lower()


@dataclass
class Listing:
    sealed: list[tuple[int, int, str]]  # (first, last, path), first ascending, last descending
    tail: Optional[str]


def list_replica_folder(folder: str) -> Listing:
    """LF "Store folder", names in a replica folder."""
    sealed, tail = [], None
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        m = SEALED_NAME.fullmatch(name)
        if name.startswith(".") or name.startswith("tail.tlog.damaged"):
            continue
        if name == "tail.tlog":
            tail = path
        elif m and 1 <= int(m.group(1), 16) <= int(m.group(2), 16):
            sealed.append((int(m.group(1), 16), int(m.group(2), 16), path))
        else:
            warn(f"{path}: not a segment name; ignored")
    sealed.sort(key=lambda entry: (entry[0], -entry[1]))
    return Listing(sealed, tail)


def load_segment(path: str, replica: bytes, kind: int, name_first: Optional[int]) -> Optional[Segment]:
    """Reads a file whose header must match where it is (LF "Segment header"); None for a
    file skipped with a warning. Raises FileNotFoundError for a file gone meanwhile."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        segment = read_segment(data)
    except Damage as e:
        warn(f"{path}: {e}; skipped")
        return None
    h = segment.header
    if h.replica != replica or h.kind != kind or name_first not in (None, h.first_seq):
        warn(f"{path}: its header does not match its name and folder; skipped")
        return None
    if segment.ending == "corrupt":
        warn(f"{path}: damaged: {segment.problem}; nothing after it is used")
    return segment


class Stop(Exception):
    """This replica's log cannot be read further; `retry`: list the folder again."""

    def __init__(self, message: str, retry: bool):
        super().__init__(message)
        self.retry = retry


def apply_segment(state: State, replica: bytes, path: str, kind: int, name_first: Optional[int]) -> None:
    """Steps 2-4 for one file: read it, then apply its commits in order."""
    try:
        segment = load_segment(path, replica, kind, name_first)
    except FileNotFoundError:
        raise Stop(f"{path}: vanished while being read", retry=True)
    if segment is None:
        return
    have = state.vv.get(replica, 0)
    if kind == 1 and segment.header.first_seq > have + 1:
        raise Stop(f"{path}: operations {have + 1}…{segment.header.first_seq - 1} of this "
                   "replica are missing; its tail is not applied", retry=True)
    for commit in segment.commits:
        if not state.apply_commit(replica, commit):
            raise Stop(f"{path}: the commit at {commit.first_seq} does not continue operations "
                       f"1…{state.vv.get(replica, 0)}; nothing later of this replica is applied", retry=False)


def walk_replica(state: State, replica: bytes, listing: Listing) -> None:
    """LF "Reader rules", reading a store, steps 2-4."""
    for first, last, path in listing.sealed:
        have = state.vv.get(replica, 0)
        if last <= have:
            continue
        if first > have + 1:
            raise Stop(f"{os.path.dirname(path)}: operations {have + 1}…{first - 1} are missing; "
                       "later operations of this replica are not applied", retry=True)
        apply_segment(state, replica, path, 2, first)
    if listing.tail is not None:
        apply_segment(state, replica, listing.tail, 1, None)


def read_replica(state: State, replica: bytes, list_folder: Callable[[], Listing]) -> None:
    """Step 5: after a race or a gap, list again (keeping what was applied), then give up."""
    for _ in range(LISTINGS):
        try:
            return walk_replica(state, replica, list_folder())
        except Stop as stop:
            reason = str(stop)
            if not stop.retry:
                break
    warn(reason)


def read_store(store: str) -> State:
    """Every replica folder of logs/, in any order (the result does not depend on it)."""
    read_identity(store)
    state = State()
    logs = os.path.join(store, "logs")
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        folder = os.path.join(logs, name)
        if name.startswith("."):
            continue
        if not HEX32.fullmatch(name) or not os.path.isdir(folder):
            warn(f"{folder}: not a replica folder; ignored")
            continue
        read_replica(state, bytes.fromhex(name), lambda f=folder: list_replica_folder(f))
    return state


def read_vector(path: str, replica_hex: str, placement: str, name: Optional[str]) -> State:
    """One segment file as the only file of a replica (vectors/README.md, placements).
    Without its sealed name, a sealed file's name is taken to start at its header's firstSeq."""
    state = State()
    if placement == "tail":
        listing = Listing([], path)
    else:
        m = SEALED_NAME.fullmatch(name or "")
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
        first = int(m.group(1), 16) if m else int.from_bytes(head[24:32], "little") if len(head) == HEADER_SIZE else 1
        listing = Listing([(first, int(m.group(2), 16) if m else 2**64 - 1, path)], None)
    read_replica(state, bytes.fromhex(replica_hex), lambda: listing)
    return state


# --------------------------------------------------------------------------------------
# Output: CRDT "JSON task form", "Listing order"

ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def json_string(text: str) -> bytes:
    """Escaped byte by byte; bytes from 0x20 up (UTF-8 sequences included) as they are."""
    out = bytearray(b'"')
    for b in text.encode("utf-8"):
        out += ESCAPES.get(b, b"\\u%04x" % b if b < 0x20 else bytes([b]))
    return bytes(out + b'"')


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) in the proleptic Gregorian calendar of a day count since 1970-01-01."""
    z = days + 719468
    era, doe = divmod(z, 146097)
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def date_string(days: int) -> str:
    """YYYY-MM-DD; a year past 9999 in full, a year before 0 as '-' and 4 or more digits."""
    y, m, d = civil_from_days(days)
    return f"{'-' if y < 0 else ''}{abs(y):04d}-{m:02d}-{d:02d}"


def instant_string(ms: int) -> str:
    """YYYY-MM-DDTHH:MM:SS.sssZ (UTC) of signed milliseconds since 1970."""
    days, ms = divmod(ms, 86_400_000)
    return (f"{date_string(days)}T{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:"
            f"{ms // 1000 % 60:02d}.{ms % 1000:03d}Z")


# The planning registers, shown as top-level keys in this order (crdt.md, "JSON task form"),
# and the prefix of the tag-set elements that are dependencies.
PLANNING_KEYS = ("parent", "wait", "scheduled", "start", "recur", "series")
DEPENDS = "\x01depends:"


def task_json(task_id: str, task: TaskRecord) -> bytes:
    """One task: these keys in this order (the planning ones only when set), no whitespace."""
    def value(number: int) -> Value:
        return task.fields[number].value if number in task.fields else ("none", None)

    def string_or_null(v: Value) -> bytes:
        return json_string(v[1]) if v[0] == "string" else b"null"

    done = value(DONE) == ("bool", True)
    due, priority = value(DUE), value(PRIORITY)
    due_text = {"date": date_string, "instant": instant_string}.get(due[0])
    elements = sorted((t for t in task.tags.live if task.tags.present(t)), key=str.encode)
    tags = [t for t in elements if not t.startswith("\x01")]
    depends = [t[len(DEPENDS):] for t in elements if t.startswith(DEPENDS)]
    all_meta = {k: r.value[1] for k, r in task.meta.items() if r.value[0] == "string"}
    meta = sorted(((k, v) for k, v in all_meta.items() if k not in PLANNING_KEYS), key=lambda kv: kv[0].encode())
    planning = [(k.encode(), json_string(all_meta[k])) for k in PLANNING_KEYS if k in all_meta]
    if depends:
        planning.insert(1 if "parent" in all_meta else 0, (b"depends", b"[" + b",".join(map(json_string, depends)) + b"]"))
    members = [
        (b"id", json_string(task_id)),
        (b"title", json_string(value(TITLE)[1] if TITLE in task.fields else "")),
        (b"notes", string_or_null(value(NOTES))),
        (b"done", b"true" if done else b"false"),
        (b"completedAt", json_string(instant_string(task.fields[DONE].stamp[0])) if done else b"null"),
        (b"priority", str(priority[1]).encode() if priority[0] == "uint" else b"null"),
        (b"due", json_string(due_text(due[1])) if due_text else b"null"),
        (b"tags", b"[" + b",".join(map(json_string, tags)) + b"]"),
        (b"list", string_or_null(value(LIST))),
        *planning,
        (b"meta", b"{" + b",".join(json_string(k) + b":" + json_string(v) for k, v in meta) + b"}"),
        (b"createdAt", json_string(instant_string(task.created[0]))),
        (b"updatedAt", json_string(instant_string(task.updated[0]))),
    ]
    return b"{" + b",".join(b'"' + k + b'":' + v for k, v in members) + b"}"


def list_all_json(state: State) -> bytes:
    """`list --all --json`: the live tasks in the created order (createdAt, then id bytes)."""
    live = sorted((t.created, i.encode(), i, t) for i, t in state.tasks.items() if state.membership.present(i))
    if not live:
        return b"[]\n"
    return b"[\n" + b",\n".join(task_json(i, t) for _, _, i, t in live) + b"\n]\n"


def version_json(state: State) -> bytes:
    """The version vector, replicas ascending."""
    return ("{" + ",".join(f'"{r.hex()}":{s}' for r, s in sorted(state.vv.items())) + "}\n").encode()


def devices_json(state: State) -> bytes:
    """Each named device's name, replicas ascending."""
    return (json.dumps({r.hex(): reg.value for r, reg in sorted(state.names.items()) if reg.value},
                       ensure_ascii=False) + "\n").encode()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="An independent reader of TaskLog stores.")
    parser.add_argument("store", nargs="?", help="a store folder")
    parser.add_argument("--vector", metavar="FILE", help="read one segment file instead of a store")
    parser.add_argument("--replica", help="with --vector: the replica (32 lowercase hex digits)")
    parser.add_argument("--placement", choices=["tail", "sealed"], default="tail")
    parser.add_argument("--file", metavar="NAME", help="with --placement sealed: the sealed name")
    parser.add_argument("--status", action="store_true", help="print the version vector")
    parser.add_argument("--devices", action="store_true", help="print each named device's name")
    args = parser.parse_args(argv)
    if (args.store is None) == (args.vector is None):
        parser.error("give a STORE_DIR or --vector FILE")
    if args.vector and not HEX32.fullmatch(args.replica or ""):
        parser.error("--vector needs --replica HEX (32 lowercase hex digits)")
    try:
        if args.vector:
            state = read_vector(args.vector, args.replica, args.placement, args.file)
        else:
            state = read_store(args.store)
    except (Refusal, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = version_json(state) if args.status else devices_json(state) if args.devices else list_all_json(state)
    sys.stdout.buffer.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
