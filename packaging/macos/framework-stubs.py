#!/usr/bin/env python3
"""Stand-in macOS frameworks for cross-linking on Linux, made by scripts/dist.

    llvm-nm -u --just-symbol-name deps/lib*.rlib | framework-stubs.py SDK_DIR

Zig carries macOS's libc (libSystem) but no frameworks, and the TLS stack links two of them
for the system's certificate store (security-framework, core-foundation). A linker needs only
a text stub (.tbd) of a framework: its install name and the symbols it exports. This writes
SDK_DIR/System/Library/Frameworks/{CoreFoundation,Security}.framework/*.tbd listing the
symbols our crates import from each, by the prefixes Apple gives them (CF for CoreFoundation;
Sec, kSec and SSL for Security); cargo-zigbuild passes SDKROOT=SDK_DIR on as a framework path.
The binary then names each symbol's framework as Apple's linker would, and macOS's own
frameworks supply them at run time. Nothing of Apple's SDK is copied.
"""

import pathlib
import re
import sys

FRAMEWORKS = {
    "CoreFoundation": re.compile(r"^_+k?CF[A-Z]"),
    "Security": re.compile(r"^_(k?Sec[A-Z]|SSL[A-Z])"),
}
TARGETS = "[ x86_64-macos, arm64-macos ]"


def main():
    sdk = pathlib.Path(sys.argv[1])
    symbols = {line.strip() for line in sys.stdin if line.strip()}
    for name, pattern in FRAMEWORKS.items():
        exported = sorted(s for s in symbols if pattern.match(s))
        if not exported:
            sys.exit(f"no symbol imported from {name}: were the dependencies built?")
        folder = sdk / "System/Library/Frameworks" / f"{name}.framework"
        folder.mkdir(parents=True, exist_ok=True)
        stub = [
            "--- !tapi-tbd",
            "tbd-version: 4",
            f"targets: {TARGETS}",
            f"install-name: '/System/Library/Frameworks/{name}.framework/Versions/A/{name}'",
            "exports:",
            f"  - targets: {TARGETS}",
            f"    symbols: [ {', '.join(exported)} ]",
            "...",
            "",
        ]
        (folder / f"{name}.tbd").write_text("\n".join(stub))
        print(f"{name}: {len(exported)} symbols", file=sys.stderr)


if __name__ == "__main__":
    main()
