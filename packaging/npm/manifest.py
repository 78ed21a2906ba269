#!/usr/bin/env python3
"""The package.json of albedo-otel's npm packages, printed for scripts/dist.

    manifest.py launcher VERSION "" DESCRIPTION
    manifest.py platform VERSION OS-CPU DESCRIPTION

The launcher lists every platform package as an optional dependency, each pinned to its own
version; npm installs only the one whose `os` and `cpu` match (the convention of esbuild and
biome), and the launcher's `bin` runs its binary.
"""

import json
import sys

PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"]
SCOPE = "@albedo-otel"


def main():
    kind, version, platform, description = sys.argv[1:5]
    common = {"version": version, "license": "Apache-2.0"}
    if kind == "launcher":
        manifest = {
            "name": "albedo-otel",
            **common,
            "description": description,
            "bin": {"albedo-otel": "bin/albedo-otel.js"},
            "files": ["bin/albedo-otel.js", "README.md", "LICENSE"],
            "engines": {"node": ">=18"},
            "optionalDependencies": {f"{SCOPE}/{p}": version for p in PLATFORMS},
        }
    elif kind == "platform" and platform in PLATFORMS:
        os_name, cpu = platform.split("-")
        manifest = {
            "name": f"{SCOPE}/{platform}",
            **common,
            "description": f"albedo-otel's binaries for {os_name} on {cpu}; installed by the albedo-otel package",
            "os": [os_name],
            "cpu": [cpu],
            "files": ["bin/albedo-otel", "bin/albedo-otel-hook", "LICENSE"],
            "preferUnplugged": True,
        }
    else:
        sys.exit(f"usage: {sys.argv[0]} launcher|platform VERSION OS-CPU DESCRIPTION")
    json.dump(manifest, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
