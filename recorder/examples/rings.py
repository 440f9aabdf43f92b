# gdb script: dump and check the flight recorder's rings in a core (or a live process),
# reading only what coreq_rec_format.h describes (raw bytes, the header's own byte order,
# field table and kind names; no debug info needed).
#   gdb -batch -x rings.py -ex 'coreq-rings [LAST]' EXE CORE
# Exits gdb with status 1 if the recording is malformed.
import struct
import gdb

def rd(addr, n):
    return bytes(gdb.selected_inferior().read_memory(addr, n))

class Rings(gdb.Command):
    def __init__(self):
        super().__init__("coreq-rings", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        last = int(arg) if arg.strip() else 12
        base = int(gdb.parse_and_eval("(unsigned long)&coreq_rec"))
        h = rd(base, 2144)
        if h[:8] != b"COREQREC":
            raise gdb.GdbError("bad magic")
        e = "<" if struct.unpack("<I", h[12:16])[0] == 0x01020304 else ">"
        u16 = lambda o: struct.unpack_from(e + "H", h, o)[0]
        u32 = lambda o: struct.unpack_from(e + "I", h, o)[0]
        u64 = lambda o: struct.unpack_from(e + "Q", h, o)[0]
        version, word, hsize, rsize, nfields = u32(8), u16(16), u16(18), u16(20), u16(22)
        nrec, rhs, maxr, nrings, lost, nkinds = (u32(24 + 4 * i) for i in range(6))
        rings, start = u64(48), u64(56)
        producer = h[64:96].split(b"\0")[0].decode()
        fields = {}
        for i in range(nfields):
            o = 96 + 32 * i
            fields[h[o:o + 24].split(b"\0")[0].decode()] = struct.unpack_from(e + "HH", h, o + 24)
        kinds = [h[608 + 24 * k:632 + 24 * k].split(b"\0")[0].decode() for k in range(64)]
        print(f"coreq_rec v{version} {producer!r} order {'LE' if e == '<' else 'BE'} word {word} "
              f"header {hsize} record {rsize} ring_records {nrec} rings {nrings}/{maxr} lost {lost} kinds {nkinds}")
        assert nrec & (nrec - 1) == 0, "ring_records not a power of two"
        def fv(rec, name):
            off, size = fields[name]
            return struct.unpack_from(e + ("Q" if size == 8 else "I"), rec, off)[0]
        bad = 0
        table = rd(rings, 8 * maxr) if maxr else b""
        for i in range(maxr):
            ra = struct.unpack_from(e + "Q", table, 8 * i)[0]
            if ra == 0:
                continue
            rh = rd(ra, rhs)
            magic, rs, tid, head, tdata = struct.unpack_from(e + "IIQQQ", rh, 0)
            if magic != 0x474E4952 or rs != rsize:
                print(f"ring {i}: bad ring header"); bad += 1; continue
            body = rd(ra + rhs, rsize * nrec)
            valid, torn = [], 0
            for s in range(nrec):
                rec = body[s * rsize:(s + 1) * rsize]
                seq = fv(rec, "seq")
                if seq == 0 and head <= s:
                    continue  # never written
                if seq == 0 or ((seq - 1) & (nrec - 1)) != s or seq > head + 1:
                    torn += 1; continue
                valid.append(rec)
            valid.sort(key=lambda r: fv(r, "seq"))
            seqs = [fv(r, "seq") for r in valid]
            # the valid records are the newest min(head, nrec), consecutive
            want = list(range(max(1, head - nrec + 1), head + 1))
            extra = [s for s in seqs if s == head + 1]
            ok = [s for s in seqs if s <= head] == [w for w in want if w in seqs] and len(seqs) >= len(want) - torn
            print(f"ring {i}: tid {tid} thread {tdata} head {head} valid {len(valid)} torn {torn}"
                  f"{' (one complete past head)' if extra else ''}{'' if ok else ' INCONSISTENT'}")
            bad += 0 if ok else 1
            prev_t = 0
            for r in valid[-last:]:
                k, fl, t = fv(r, "kind"), fv(r, "flags"), fv(r, "time_ns")
                if t < prev_t:
                    print("   time goes backwards"); bad += 1
                prev_t = t
                ep = {0: "  ", 1: "B ", 2: "E "}.get(fl & 3, "? ")
                cp = fv(r, "codeptr")
                sym = ""
                if cp:
                    s = gdb.execute(f"info symbol {cp:#x}", to_string=True).strip()
                    sym = "" if s.startswith("No symbol") else "  <" + s.split(" in section")[0] + ">"
                name = kinds[k] if k < 64 and kinds[k] else f"kind{k}"
                extra_f = f" state={fl >> 16:#x}" if fl & 0x8 else (f" line={fl >> 8}" if fl >> 8 else "")
                print(f"   #{fv(r, 'seq') - 1:<6} +{(t - start) / 1e6:10.3f}ms {ep}{name:<22} a={fv(r, 'a'):#x} "
                      f"b={fv(r, 'b'):#x} c={fv(r, 'c'):#x} d={fv(r, 'd'):#x}{extra_f}{sym}")
        if bad:
            gdb.execute("quit 1")

Rings()
