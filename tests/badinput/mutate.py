#!/usr/bin/env python3
"""Malformed cores made from REAL fixture cores (the synthetic ones are tests/badinput/
run.sh's): every input is a real kernel, qemu or gdb core of fixtures/core with one
structural defect, and coreq must answer each with a one-line error and a distinct exit
status, or a partial answer listing its problems, within 10 s and 512 MB, never a crash
or a sanitizer report.

Mutations, per core (x86_64 kernel, x86_64 gcore, i386 kernel, s390x qemu, ppc32 qemu,
aarch64 qemu: both classes, both byte orders):
  * truncation at every structural boundary: inside the ELF header, at the end of the
    header and of the program headers, at the start, middle and end of each note segment
    and of each of the first notes, at the start of the first loads' data, one byte short;
  * ELF identity and header: wrong e_machine, class, data encoding, e_type, e_version,
    e_phentsize, e_phoff past the end, e_phnum 0xffff;
  * note segments: offset past the end, size near 2^32 and 2^64, a note's namesz/descsz
    0xffffffff, NT_FILE with a count near 2^32 and a page size of 0;
  * loads: offset past the end, filesz > memsz, a segment overlapping the previous one, a
    segment wrapping past 2^64, 0xffff loads claimed;
  * memory: r_debug.r_map pointing at itself, into unmapped space, at r_debug (a link_map
    cycle) on the x86_64 core;
  * compression: the core gzip'd and truncated, a corrupt deflate stream, a 64 MiB zero
    bomb against --max-inflate 16 MiB.
Usage: tests/badinput/mutate.py; COREQ selects the binary. Prints one line per check.
"""
import gzip
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixture"))
from testlib import COREQ_CMD, ROOT, check, summary  # noqa: E402

CASES = ["x86_64-kernel", "x86_64-gcore", "i386-kernel", "s390x-qemu", "ppc32-qemu", "aarch64-qemu"]
ALLOWED = {0: "ok", 1: "partial", 3: "io", 4: "format", 5: "malformed", 6: "compressed", 7: "query"}
LIMIT_S, LIMIT_MB = 10, 512
# the exit statuses some mutations must give (the last command run: maps)
EXPECT = {"e_machine-0x1234": {4}, "class-3": {4}, "data-0": {4}, "e_type-exec": {4},
          "truncated-in-ident": {4, 5}, "truncated-header": {5}, "e_phoff-past-end": {5},
          "gzip-corrupt": {6}, "gzip-truncated": {6}, "note0-offset-past-end": {1, 5},
          "load0-offset-past-end": {1, 5}}


class Elf:
    """The parts of a core's ELF structure the mutations aim at."""

    def __init__(self, data):
        self.d = bytearray(data)
        self.is64 = data[4] == 2
        self.e = "<" if data[5] == 1 else ">"
        if self.is64:
            (self.phoff, ) = struct.unpack_from(self.e + "Q", data, 32)
            self.phentsize, self.phnum = struct.unpack_from(self.e + "HH", data, 54)
        else:
            (self.phoff, ) = struct.unpack_from(self.e + "I", data, 28)
            self.phentsize, self.phnum = struct.unpack_from(self.e + "HH", data, 42)
        self.ph = [self.phdr(i) for i in range(self.phnum)]

    def phdr(self, i):
        o = self.phoff + i * self.phentsize
        if self.is64:
            t, f, off, va, pa, fs, ms, al = struct.unpack_from(self.e + "IIQQQQQQ", self.d, o)
        else:
            t, off, va, pa, fs, ms, f, al = struct.unpack_from(self.e + "IIIIIIII", self.d, o)
        return {"at": o, "type": t, "offset": off, "vaddr": va, "filesz": fs, "memsz": ms}

    def set_ph(self, i, key, value):
        o = self.ph[i]["at"]
        fields64 = {"offset": (8, "Q"), "vaddr": (16, "Q"), "filesz": (32, "Q"), "memsz": (40, "Q")}
        fields32 = {"offset": (4, "I"), "vaddr": (8, "I"), "filesz": (16, "I"), "memsz": (20, "I")}
        rel, fmt = (fields64 if self.is64 else fields32)[key]
        value &= (1 << (64 if fmt == "Q" else 32)) - 1
        struct.pack_into(self.e + fmt, self.d, o + rel, value)

    def notes(self):
        """(segment index, offset of each note header) for the note segments."""
        out = []
        for i, p in enumerate(self.ph):
            if p["type"] != 4:
                continue
            pos, end = p["offset"], p["offset"] + p["filesz"]
            while pos + 12 <= end and pos + 12 <= len(self.d):
                nsz, dsz, typ = struct.unpack_from(self.e + "III", self.d, pos)
                out.append((i, pos, typ))
                pos += 12 + ((nsz + 3) & ~3) + ((dsz + 3) & ~3)
        return out


def mutations(data):
    """(name, bytes) of every mutation of one core."""
    elf = Elf(data)
    out = []
    ehsize = 64 if elf.is64 else 52

    def mut(name, fn):
        e = Elf(bytes(data))
        fn(e)
        out.append((name, bytes(e.d)))

    # truncations at structural boundaries
    cuts = {"in-ident": 10, "in-header": ehsize - 7, "header": ehsize,
            "in-phdrs": elf.phoff + elf.phentsize // 2,
            "phdrs": elf.phoff + elf.phnum * elf.phentsize, "one-short": len(data) - 1}
    for i, p in enumerate(elf.ph):
        if p["type"] == 4:
            cuts[f"note{i}-start"] = p["offset"]
            cuts[f"note{i}-mid"] = p["offset"] + p["filesz"] // 2
            cuts[f"note{i}-end"] = p["offset"] + p["filesz"]
    for k, (seg, at, typ) in enumerate(elf.notes()[:8]):
        cuts[f"note-{k}-header"] = at + 6
        cuts[f"note-{k}-desc"] = at + 20
    loads = [p for p in elf.ph if p["type"] == 1 and p["filesz"]]
    for k, p in enumerate(loads[:4]):
        cuts[f"load{k}-start"] = p["offset"]
        cuts[f"load{k}-mid"] = p["offset"] + p["filesz"] // 2
    for name, at in cuts.items():
        if 0 < at < len(data):
            out.append((f"truncated-{name}", data[:at]))

    # identity and header fields
    def put(at, fmt, v):
        return lambda e: struct.pack_into(e.e + fmt, e.d, at, v)
    mut("e_machine-0x1234", put(18, "H", 0x1234))
    mut("class-3", lambda e: e.d.__setitem__(4, 3))
    mut("class-swapped", lambda e: e.d.__setitem__(4, 1 if e.is64 else 2))
    mut("data-0", lambda e: e.d.__setitem__(5, 0))
    mut("data-swapped", lambda e: e.d.__setitem__(5, 3 - e.d[5]))
    mut("e_type-exec", put(16, "H", 2))
    mut("e_version-7", put(20, "I", 7))
    mut("e_phentsize-7", put(54 if elf.is64 else 42, "H", 7))
    mut("e_phoff-past-end", put(32 if elf.is64 else 28, "Q" if elf.is64 else "I", len(data) + 4096))
    mut("e_phoff-huge", put(32 if elf.is64 else 28, "Q" if elf.is64 else "I",
                            (1 << 63) if elf.is64 else 0xfffffff0))
    mut("e_phnum-0xffff", put(56 if elf.is64 else 44, "H", 0xffff))
    mut("e_phnum-0", put(56 if elf.is64 else 44, "H", 0))

    # note segments and notes
    for i, p in enumerate(elf.ph):
        if p["type"] != 4:
            continue
        mut(f"note{i}-offset-past-end", lambda e, i=i: e.set_ph(i, "offset", len(data) + 8192))
        mut(f"note{i}-size-2^32", lambda e, i=i: e.set_ph(i, "filesz", 0xfffffff0))
        if elf.is64:
            mut(f"note{i}-size-2^64", lambda e, i=i: e.set_ph(i, "filesz", (1 << 64) - 16))
    for k, (seg, at, typ) in enumerate(elf.notes()[:6]):
        mut(f"note-{k}-namesz-max", put(at, "I", 0xffffffff))
        mut(f"note-{k}-descsz-max", put(at + 4, "I", 0xffffffff))
        mut(f"note-{k}-descsz-odd", put(at + 4, "I", 3))
    for k, (seg, at, typ) in enumerate(elf.notes()):
        if typ == 0x46494c45:  # NT_FILE: count, page size, then entries
            nsz, = struct.unpack_from(elf.e + "I", data, at)
            desc = at + 12 + ((nsz + 3) & ~3)
            w = 8 if elf.is64 else 4
            mut("nt_file-count-2^32", put(desc, "Q" if elf.is64 else "I", 0xffffffff))
            mut("nt_file-pagesize-0", put(desc + w, "Q" if elf.is64 else "I", 0))
            break

    # loads
    li = [i for i, p in enumerate(elf.ph) if p["type"] == 1]
    for k, i in enumerate(li[:3]):
        mut(f"load{k}-offset-past-end", lambda e, i=i: e.set_ph(i, "offset", len(data) + 65536))
        mut(f"load{k}-filesz-gt-memsz", lambda e, i=i: (e.set_ph(i, "filesz", e.ph[i]["memsz"] + 8192)))
        mut(f"load{k}-wraps", lambda e, i=i: (e.set_ph(i, "vaddr", (1 << (64 if e.is64 else 32)) - 4096),
                                              e.set_ph(i, "memsz", 1 << 20)))
    if len(li) > 2:
        mut("load-overlaps-previous", lambda e: e.set_ph(li[2], "vaddr", e.ph[li[1]]["vaddr"] + 16))
        mut("load-duplicate", lambda e: (e.set_ph(li[2], "vaddr", e.ph[li[1]]["vaddr"]),
                                         e.set_ph(li[2], "memsz", e.ph[li[1]]["memsz"])))
    return out


def memory_mutations(tmp, core_path, data):
    """r_debug.r_map of the x86_64 core pointed at itself, at unmapped space, at r_debug."""
    p = subprocess.run([*COREQ_CMD, "sym", "--json", "--sysroot", os.path.join(ROOT, "build/sysroot/x86_64"),
                        core_path, "_r_debug"], capture_output=True, text=True)
    if p.returncode != 0:
        return []
    rdebug = int(json.loads(p.stdout)["address"], 16)
    maps = json.loads(subprocess.run([*COREQ_CMD, "maps", "--json", core_path], capture_output=True,
                                     text=True).stdout)["segments"]
    off = None
    for s in maps:
        a, b = int(s["start"], 16), int(s["end"], 16)
        if a <= rdebug + 8 < b and s["source"] == "core" and s["core_offset"]:
            off = int(s["core_offset"], 16) + (rdebug + 8 - a)
    if off is None:
        return []
    out = []
    for name, v in (("r_map-self", rdebug + 8), ("r_map-wild", 0xdead0000), ("r_map-r_debug", rdebug),
                    ("r_map-top", (1 << 64) - 8)):
        d = bytearray(data)
        struct.pack_into("<Q", d, off, v)
        out.append((name, bytes(d)))
    return out


def run_one(path, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-q", "-f", "%M", *COREQ_CMD, *args, path], capture_output=True,
                           text=True, timeout=LIMIT_S + 5)
    except subprocess.TimeoutExpired:
        return None, "timed out", 0, 0
    secs = time.monotonic() - start
    lines = p.stderr.splitlines()
    rss_kb = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return p, "\n".join(lines[:-1]), secs, rss_kb


def sane(p, err, secs, rss_kb):
    if p is None:
        return "timed out"
    if p.returncode not in ALLOWED:
        return f"exit {p.returncode}"
    if any(s in err for s in ("Sanitizer", "runtime error:")):
        return "sanitizer report"
    bad = [l for l in err.splitlines() if not l.startswith("coreq: ")]
    if bad:
        return f"stderr line not from coreq: {bad[0][:80]}"
    if p.returncode >= 3 and (err.count("\n") != 0 or p.stdout):
        return "a fatal error must be one line on stderr and nothing on stdout"
    if secs > LIMIT_S:
        return f"{secs:.1f} s"
    if rss_kb > LIMIT_MB * 1024:
        return f"{rss_kb // 1024} MB"
    return ""


def main():
    os.chdir(ROOT)
    subprocess.run(["tools/fixtures/sysroot.sh", "x86_64", "build/sysroot/x86_64"], check=True,
                   stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="coreq-mutate-")
    codes = {}
    n = 0
    try:
        for case in CASES:
            src = os.path.join("fixtures/core", case, "core.gz")
            with gzip.open(src) as f:
                data = f.read()
            muts = mutations(data)
            if case == "x86_64-kernel":
                raw = os.path.join(tmp, "raw.core")
                open(raw, "wb").write(data)
                muts += memory_mutations(tmp, raw, data)
            gz = gzip.compress(data, 1)
            muts += [("gzip-truncated", gz[:len(gz) // 2]),
                     ("gzip-corrupt", gz[:10] + bytes(b ^ 0x5a for b in gz[10:200]) + gz[200:])]
            for name, blob in muts:
                path = os.path.join(tmp, f"{case}.{name}")
                open(path, "wb").write(blob)
                worst = ""
                for args in (["info", "--json"], ["threads"], ["maps"]):
                    p, err, secs, rss = run_one(path, args)
                    why = sane(p, err, secs, rss)
                    if why:
                        worst = f"{args[0]}: {why}"
                        break
                    codes.setdefault(name.split("-")[0], set()).add(ALLOWED[p.returncode])
                if not worst and name in EXPECT:
                    want = EXPECT[name]
                    if p.returncode not in want:
                        worst = f"exit {p.returncode}, expected {sorted(want)}"
                check(not worst, f"{case} {name}: " + (worst or f"exit {ALLOWED[p.returncode]}, "
                                                       f"{secs:.2f} s, {rss // 1024} MB"))
                os.unlink(path)
                n += 1
        # a zero bomb: 64 MiB of zeros against --max-inflate 16 MiB
        bomb = os.path.join(tmp, "bomb.gz")
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        with open(bomb, "wb") as f:
            zero = bytes(1 << 20)
            for _ in range(64):
                f.write(c.compress(zero))
            f.write(c.flush())
        p, err, secs, rss = run_one(bomb, ["info", "--max-inflate", str(16 << 20)])
        check(p is not None and p.returncode == 6 and "16777216" in err and rss < 256 * 1024,
              f"gzip bomb: refused at --max-inflate (exit {p and p.returncode}, {rss // 1024} MB): {err[:100]}")
        n += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(n >= 200, f"{n} malformed inputs made from real cores")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
