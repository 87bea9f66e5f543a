#!/usr/bin/env python3
"""Prints the clang-tidy -checks value CI runs: only the checks .clang-tidy makes errors
(WarningsAsErrors), minus the exclusions its Checks list makes. The advice checks fail nothing in
CI, and their tens of thousands of warnings took about a third of the step's time."""
import re
import sys
from pathlib import Path

text = Path(sys.argv[1] if len(sys.argv) > 1 else ".clang-tidy").read_text()


def globs(key: str) -> list[str]:
    match = re.search(rf"^{key}:\s*'([^']*)'", text, re.M)
    if match is None:
        sys.exit(f"tidy_checks.py: no {key} in .clang-tidy")
    return [glob.strip() for glob in match.group(1).split(",") if glob.strip()]


exclusions = [glob for glob in globs("Checks") if glob.startswith("-") and glob != "-*"]
print(",".join(["-*", *globs("WarningsAsErrors"), *exclusions]))
