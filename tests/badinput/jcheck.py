#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""JSON helpers for tests/badinput/run.sh. Exit 0 on success; on failure print one line
saying why (run.sh puts it after "not ok - ...") and exit 1.

  jcheck.py subset EXPECTED.json KEY ACTUAL.json   expected[KEY] is contained in ACTUAL
  jcheck.py list EXPECTED.json KEY FIELD...        print FIELDs of each entry of expected[KEY]
  jcheck.py expr ACTUAL.json PYTHON-EXPR           the expression (document: d) is true
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def subset(want, have, where="$"):
    """First difference between want and the same part of have, or None. Objects: every
    key of want must be in have; arrays: same length, element-wise."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return f"{where}: expected an object, got {json.dumps(have)}"
        for k, v in want.items():
            if k not in have:
                return f"{where}.{k}: missing"
            d = subset(v, have[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return f"{where}: expected {len(want)} entries, got {json.dumps(have)[:200]}"
        for i, (w, h) in enumerate(zip(want, have)):
            d = subset(w, h, f"{where}[{i}]")
            if d:
                return d
        return None
    if want != have or type(want) is not type(have):
        return f"{where}: expected {json.dumps(want)}, got {json.dumps(have)}"
    return None


def main(argv):
    cmd = argv[1]
    try:
        if cmd == "subset":
            want = load(argv[2])[argv[3]]
            have = load(argv[4])
            if argv[3] == "maps":
                have = have.get("segments")
            d = subset(want, have)
            if d:
                print(d)
                return 1
            return 0
        if cmd == "list":
            for e in load(argv[2])[argv[3]]:
                print(" ".join(str(e.get(f, "-")) for f in argv[4:]))
            return 0
        if cmd == "expr":
            d = load(argv[2])  # noqa: F841 (used by the expression)
            if eval(argv[3]):
                return 0
            print(f"false: {argv[3]}")
            return 1
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"{type(e).__name__}: {e}")
        return 1
    print(f"jcheck.py: unknown command {cmd}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
