#!/usr/bin/env python3
"""README.md states exactly the Debian packages that .ci/servelab installs.

Every bash array named *PACKAGES in .ci/servelab is collected; the README's
list is every `code span` between the markers <!-- packages:begin --> and
<!-- packages:end -->. The two sets must be equal."""
import re
import sys

src = sys.argv[1]
script = open(f"{src}/.ci/servelab", encoding="utf-8").read()
readme = open(f"{src}/README.md", encoding="utf-8").read()

installed = set()
for body in re.findall(r"^\s*[A-Z_]*PACKAGES=\(([^)]*)\)", script, re.M):
    body = re.sub(r"#.*", "", body)
    installed.update(body.split())

m = re.search(r"<!-- packages:begin -->(.*?)<!-- packages:end -->", readme, re.S)
if not m:
    sys.exit("README.md has no <!-- packages:begin --> ... <!-- packages:end --> block")
stated = set()
for span in re.findall(r"`([^`]+)`", m.group(1)):
    stated.update(span.split())

if not installed:
    sys.exit(".ci/servelab: no *PACKAGES=(...) array found")
missing, extra = installed - stated, stated - installed
if missing or extra:
    if missing:
        print("installed by .ci/servelab but not in README.md:", " ".join(sorted(missing)))
    if extra:
        print("in README.md but not installed by .ci/servelab:", " ".join(sorted(extra)))
    sys.exit(1)
print(f"ok: README.md and .ci/servelab agree on {len(installed)} packages")
