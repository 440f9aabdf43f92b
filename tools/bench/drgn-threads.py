#!/usr/bin/python3
"""drgn peer for tools/bench/bench-info.sh: list threads with the symbol of their PC
(what `coreq info` prints). Run with Debian's /usr/bin/python3 (python3-drgn).
usage: drgn-threads.py CORE [EXE]"""
import sys

import drgn

prog = drgn.program_from_core_dump(sys.argv[1])
try:
    prog.load_debug_info(sys.argv[2:], default=True)
except drgn.MissingDebugInfoError:
    pass
n = 0
for t in prog.threads():
    pc, name = None, "?"
    try:
        frame = t.stack_trace()[0]
        pc = frame.pc
        name = frame.symbol().name
    except (LookupError, ValueError, drgn.FaultError):
        pass
    print(t.tid, hex(pc) if pc is not None else "-", name)
    n += 1
print("threads", n)
