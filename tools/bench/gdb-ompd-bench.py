# gdb-ompd-bench.py - the gdb side of bench-ompd.sh: run inside gdb after LLVM's
# OMPD gdb plugin (libomp-16-dev's python `ompd` package) was sourced and a core
# was loaded:
#
#   gdb -batch -nx -ex 'source <plugin>/ompd/__init__.py' \
#       -ex "python BENCH_THREADS='1-65'; BENCH_OUT='out.json'; BENCH_COUNT=1" \
#       -ex 'source gdb-ompd-bench.py' EXE CORE
#
# Does `ompd init`, then for each gdb thread number in BENCH_THREADS ("1-65",
# "7", "1,3,5-9"): `thread N` + `ompd parallel`. Plugin output is captured by
# swapping sys.stdout (gdb.execute(..., to_string=True) on a plugin command stops
# gdb 13, see tools/fixtures/omp/gdb-ompd.py); the plugin's print_string callback
# is replaced by a plain print (it fails on libompd's messages otherwise).
# BENCH_COUNT=1: also count the plugin's callbacks into gdb (ompd_callbacks._read,
# _read_string, _sym_addr, _thread_context: calls and bytes) by wrapping them;
# 0 (the default) leaves the plugin untouched apart from print_string, for timing.
# BENCH_OUT (optional): JSON per thread (regions, rows, errors, seconds), rewritten
# after every thread so that a gdb crash leaves what was done.
import io
import json
import re
import sys
import time

import gdb

T0 = time.time()
OUT = globals().get('BENCH_OUT')
COUNT = int(globals().get('BENCH_COUNT', 0))
HDR = re.compile(r'Parallel Region: Nesting Level (\d+): Team Size: (\d+)')
ROW = re.compile(r'^\s*\d+\s+(\(master\)\s+)?ompt_state_\w+')


def thread_list(spec):
    out = []
    for part in str(spec).split(','):
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def run(cmd):
    buf = io.StringIO()
    old = sys.stdout, sys.stderr
    err = None
    try:
        sys.stdout = sys.stderr = buf
        gdb.execute(cmd)
    except Exception as e:   # gdb.error, or the plugin's own exceptions
        err = '%s: %s' % (type(e).__name__, e)
    finally:
        sys.stdout, sys.stderr = old
    return buf.getvalue(), err


res = {'threads': [], 'counts': None}
counts = {}


def save():
    res['seconds'] = round(time.time() - T0, 4)
    if counts:
        res['counts'] = counts
    if OUT:
        with open(OUT, 'w') as f:
            json.dump(res, f, indent=1)
            f.write('\n')


try:
    import ompd_callbacks

    def _print_plain(*args):
        print('[plugin print_string] %s' % (args[0],))
    ompd_callbacks._print = _print_plain
    if COUNT:
        def wrap(name, nbytes):
            f = getattr(ompd_callbacks, name)
            counts[name] = {'calls': 0, 'bytes': 0}
            c = counts[name]

            def w(*args):
                r = f(*args)
                c['calls'] += 1
                c['bytes'] += nbytes(args, r)
                return r
            setattr(ompd_callbacks, name, w)
        wrap('_read', lambda a, r: a[1])
        wrap('_read_string', lambda a, r: len(r) + 1 if r is not None else 0)
        wrap('_sym_addr', lambda a, r: 0)
        wrap('_thread_context', lambda a, r: 0)
except Exception as e:
    res['patch_error'] = repr(e)

text, err = run('ompd init')
res['init_ok'] = 'Loaded OMPD lib successfully' in text
res['init_error'] = err
save()
by_num = {t.num: t for t in gdb.selected_inferior().threads()}
for n in thread_list(globals().get('BENCH_THREADS', '1-%d' % len(by_num))):
    t = time.time()
    row = {'gdb_num': n}
    if n not in by_num:
        row['error'] = 'no such thread'
    else:
        by_num[n].switch()
        row['lwp'] = by_num[n].ptid[1]
        text, err = run('ompd parallel')
        row['regions'] = [[int(m.group(1)), int(m.group(2))] for m in HDR.finditer(text)]
        row['rows'] = sum(1 for line in text.splitlines() if ROW.match(line))
        if err or 'Traceback' in text or 'Error' in text:
            row['error'] = err or [l for l in text.splitlines() if 'Error' in l][-1:]
    row['seconds'] = round(time.time() - t, 4)
    res['threads'].append(row)
    save()
res['complete'] = True
save()
print('gdb-ompd-bench: %d threads, %d rows, %.3f s' % (
    len(res['threads']), sum(r.get('rows', 0) for r in res['threads']), res['seconds']))
