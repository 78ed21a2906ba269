#!/usr/bin/env python3
"""Writes a wheel's METADATA and WHEEL for scripts/dist, which `python -m wheel pack` then
turns into the wheel (it adds RECORD and names the file from the tags).

    metadata.py DIST_INFO_DIR VERSION DESCRIPTION README TAG...

The wheel holds no Python: albedo-otel and albedo-otel-hook are its scripts (`.data/scripts`),
which pip, pipx and uv install on PATH as they are, so an agent's hook runs the native binary
with no interpreter in front of it.
"""

import pathlib
import sys


def main():
    dist_info, version, description, readme, *tags = sys.argv[1:]
    if not tags:
        sys.exit(f"usage: {sys.argv[0]} DIST_INFO_DIR VERSION DESCRIPTION README TAG...")
    out = pathlib.Path(dist_info)
    metadata = [
        "Metadata-Version: 2.1",
        "Name: albedo-otel",
        f"Version: {version}",
        f"Summary: {description}",
        "License: Apache-2.0",
        "Description-Content-Type: text/markdown",
        "",
        pathlib.Path(readme).read_text(),
    ]
    (out / "METADATA").write_text("\n".join(metadata))
    wheel = [
        "Wheel-Version: 1.0",
        "Generator: albedo-otel scripts/dist",
        "Root-Is-Purelib: false",
        *(f"Tag: py3-none-{t}" for t in tags),
        "",
    ]
    (out / "WHEEL").write_text("\n".join(wheel))


if __name__ == "__main__":
    main()
