#!/usr/bin/env python3
"""Sort ThreadSanitizer reports (log files given as arguments) into ours and
Qt-internal ones, and exit 1 when any is ours (docs/hardening.md).

A report is ours when, in either of its two access stacks, the racing
instruction is ServeLab code: the first frame that is not a sanitizer
interceptor (memmove, memcpy, ...) lies in a ServeLab source file or a
`sl::` function. Distribution Qt has no symbols, so its internal races
(the posted-event list, implicitly shared data, the raster thread pool)
show `<null> (libQt6*.so)` there and are counted, not failed on."""
import os
import re
import sys

INTERCEPTOR = re.compile(r"sanitizer_common|libsanitizer|tsan_interceptors")
OURS = re.compile(r"\bsl::|/(ui|core|app|tests)/[^ ]+\.(cpp|h)")


def access_stacks(report):
    """The stacks under the report's two access headers."""
    stacks, cur = [], None
    for line in report.splitlines():
        if re.match(r"  (Read|Write|Previous read|Previous write|Atomic)", line):
            cur = []
            stacks.append(cur)
        elif re.match(r"  \S", line):  # Location / Thread / Mutex sections
            cur = None
        elif cur is not None and re.match(r"\s+#\d+ ", line):
            cur.append(line)
    return stacks


def is_ours(report):
    for stack in access_stacks(report):
        for frame in stack:
            if INTERCEPTOR.search(frame):
                continue
            if OURS.search(frame):
                return True
            break  # the racing instruction is outside ServeLab
    return False


def main(paths):
    ours = other = 0
    for p in paths:
        if not os.path.isfile(p):  # no log at all: nothing was reported
            continue
        text = open(p, encoding="utf-8", errors="replace").read()
        for rep in text.split("WARNING: ThreadSanitizer")[1:]:
            if is_ours(rep):
                ours += 1
                print(f"{p}: a race in ServeLab code:\nWARNING: ThreadSanitizer{rep[:4000]}", file=sys.stderr)
            else:
                other += 1
    print(f"{ours} {other}")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
