#!/usr/bin/python3
"""drgn peer for tools/bench/bench-bt.sh: every thread's stack (what `coreq bt` prints),
one line per frame: pc and symbol. Run with Debian's /usr/bin/python3 (python3-drgn).
usage: drgn-bt.py CORE [EXE]"""
import sys

import drgn

prog = drgn.program_from_core_dump(sys.argv[1])
try:
    prog.load_debug_info(sys.argv[2:], default=True)
except drgn.MissingDebugInfoError:
    pass
nthreads = nframes = 0
for t in prog.threads():
    print(f"thread {t.tid}")
    nthreads += 1
    try:
        trace = t.stack_trace()
    except (LookupError, ValueError, drgn.FaultError) as e:
        print(f"  no stack: {e}")
        continue
    for i, frame in enumerate(trace):
        try:
            pc = hex(frame.pc)
        except LookupError:  # drgn 0.0.22: the outermost frame may have no pc (not counted)
            pc = None
        try:
            name = frame.symbol().name
        except (LookupError, ValueError):
            name = frame.name or "?"
        print(f"  #{i} {pc or '-'} {name}")
        nframes += pc is not None
print("threads", nthreads)
print("frames", nframes)  # frames with a pc
