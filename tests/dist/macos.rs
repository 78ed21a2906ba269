//! The macOS builds of `scripts/dist`, checked for what can be checked on Linux, where they
//! cannot run: each binary is a Mach-O executable of its archive's architecture, linked
//! against libSystem with its entry point at `main`; the hook's C `main` is that entry point
//! and the libc functions it calls are imported; the debug map is stripped and the ad-hoc
//! code signature still matches every page (arm64 macOS kills a binary whose pages do not);
//! the .dSYM beside the archive is that very binary's (same UUID).
//!
//! The artifacts are found in `ALBEDO_OTEL_DIST_DIR`, as for tests/dist/mod.rs; CI builds the
//! Apple silicon one (see `dist_dir`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");

const ARM64: u32 = 0x0100_000c;
const X86_64: u32 = 0x0100_0007;
const MH_EXECUTE: u32 = 2;
const MH_DSYM: u32 = 0xa;
const LC_SYMTAB: u32 = 0x2;
const LC_LOAD_DYLIB: u32 = 0xc;
const LC_SEGMENT_64: u32 = 0x19;
const LC_UUID: u32 = 0x1b;
const LC_CODE_SIGNATURE: u32 = 0x1d;
const LC_MAIN: u32 = 0x8000_0028;
/// The commands that add a library to the two-level namespace's list, which a symbol's
/// library ordinal counts in.
const DYLIB_COMMANDS: [u32; 4] = [LC_LOAD_DYLIB, 0x8000_0018, 0x8000_001f, 0x8000_0023];

/// What a test reads from a 64-bit Mach-O file.
#[derive(Debug, Default)]
struct MachO {
    cpu: u32,
    filetype: u32,
    text_vmaddr: u64,
    entryoff: Option<u64>,
    dylibs: Vec<String>,
    uuid: Option<[u8; 16]>,
    /// (name, n_type, n_desc, n_value)
    symbols: Vec<(String, u8, u16, u64)>,
    signature: Option<(usize, usize)>,
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}

fn u64_at(d: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(d[at..at + 8].try_into().unwrap())
}

fn c_str(d: &[u8], at: usize) -> String {
    let end = d[at..]
        .iter()
        .position(|&b| b == 0)
        .map_or(d.len(), |n| at + n);
    String::from_utf8_lossy(&d[at..end]).into_owned()
}

fn parse(d: &[u8]) -> MachO {
    assert_eq!(u32_at(d, 0), 0xfeed_facf, "a 64-bit little-endian Mach-O");
    let mut m = MachO {
        cpu: u32_at(d, 4),
        filetype: u32_at(d, 12),
        ..MachO::default()
    };
    let mut at = 32;
    for _ in 0..u32_at(d, 16) {
        let (cmd, size) = (u32_at(d, at), u32_at(d, at + 4) as usize);
        match cmd {
            LC_SEGMENT_64 if c_str(&d[at + 8..at + 24], 0) == "__TEXT" => {
                m.text_vmaddr = u64_at(d, at + 24)
            }
            LC_MAIN => m.entryoff = Some(u64_at(d, at + 8)),
            c if DYLIB_COMMANDS.contains(&c) => {
                m.dylibs.push(c_str(d, at + u32_at(d, at + 8) as usize))
            }
            LC_UUID => m.uuid = Some(d[at + 8..at + 24].try_into().unwrap()),
            LC_CODE_SIGNATURE => {
                m.signature = Some((u32_at(d, at + 8) as usize, u32_at(d, at + 12) as usize))
            }
            LC_SYMTAB => {
                let (symoff, nsyms) = (u32_at(d, at + 8) as usize, u32_at(d, at + 12) as usize);
                let stroff = u32_at(d, at + 16) as usize;
                for i in 0..nsyms {
                    let s = symoff + 16 * i;
                    let name = c_str(d, stroff + u32_at(d, s) as usize);
                    let desc = u16::from_le_bytes([d[s + 6], d[s + 7]]);
                    m.symbols.push((name, d[s + 4], desc, u64_at(d, s + 8)));
                }
            }
            _ => {}
        }
        at += size;
    }
    m
}

/// Every page hash of the ad-hoc signature's code directory matches the file (SHA-256).
fn signature_matches(d: &[u8], (off, _): (usize, usize)) -> Result<usize, String> {
    let be = |at: usize| u32::from_be_bytes(d[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(be(off), 0xfade_0cc0, "an embedded signature");
    for i in 0..be(off + 8) {
        let blob = off + be(off + 12 + 8 * i + 4);
        if be(blob) != 0xfade_0c02 {
            continue;
        }
        let (hash_offset, code_slots, code_limit) = (be(blob + 16), be(blob + 28), be(blob + 32));
        let (hash_size, hash_type, page_shift) = (d[blob + 36], d[blob + 37], d[blob + 39]);
        if (hash_size, hash_type) != (32, 2) {
            return Err(format!(
                "hash type {hash_type}, size {hash_size}: not SHA-256"
            ));
        }
        let page = 1usize << page_shift;
        for slot in 0..code_slots {
            let range = slot * page..((slot + 1) * page).min(code_limit);
            let want = &d[blob + hash_offset + 32 * slot..][..32];
            if ring::digest::digest(&ring::digest::SHA256, &d[range]).as_ref() != want {
                return Err(format!(
                    "page {slot} of {code_slots} does not match its hash"
                ));
            }
        }
        return Ok(code_slots);
    }
    Err("no code directory".into())
}

fn unpack(archive: &Path, into: &Path) {
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_target(dist: &Path, target: &str, cpu: u32) {
    let dir = scratch("dist-macos");
    let name = format!("albedo-otel-{VERSION}-{target}");
    unpack(&dist.join(format!("{name}.tar.gz")), &dir);
    let debug = dir.join("debug");
    std::fs::create_dir(&debug).unwrap();
    unpack(&dist.join(format!("{name}-debug.tar.gz")), &debug);
    for bin in ["albedo-otel", "albedo-otel-hook"] {
        let data = std::fs::read(dir.join(&name).join(bin)).unwrap();
        let m = parse(&data);
        assert_eq!((m.cpu, m.filetype), (cpu, MH_EXECUTE), "{target} {bin}");
        assert!(
            m.dylibs.iter().any(|l| l == "/usr/lib/libSystem.B.dylib"),
            "{bin}: {:?}",
            m.dylibs
        );
        let main = m
            .symbols
            .iter()
            .find(|(n, t, _, _)| n == "_main" && t & 0x0e == 0x0e && t & 1 == 1)
            .unwrap_or_else(|| panic!("{target} {bin}: no external _main defined"));
        assert_eq!(
            m.entryoff.map(|e| m.text_vmaddr + e),
            Some(main.3),
            "{target} {bin}: the entry point (LC_MAIN) is _main"
        );
        let stabs: Vec<_> = m
            .symbols
            .iter()
            .filter(|(_, t, _, _)| t & 0xe0 != 0)
            .collect();
        assert!(
            stabs.is_empty(),
            "{bin}: a debug map is left: {:?}",
            &stabs[..3.min(stabs.len())]
        );
        // Intel Macs run unsigned code; Apple silicon does not. A signature present must hold.
        match m.signature {
            Some(signature) => {
                signature_matches(&data, signature)
                    .unwrap_or_else(|e| panic!("{target} {bin}: {e}"));
            }
            None => assert_ne!(cpu, ARM64, "{target} {bin}: unsigned"),
        }

        // The debug info beside the archive belongs to this very build of the binary.
        let dwarf_dir = debug.join(format!("{bin}.dSYM/Contents/Resources/DWARF"));
        let dwarf: Vec<PathBuf> = std::fs::read_dir(&dwarf_dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dwarf_dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dwarf.len(), 1, "{dwarf:?}");
        let dsym = std::fs::read(&dwarf[0]).unwrap();
        let d = parse(&dsym);
        assert_eq!(
            (d.cpu, d.filetype),
            (cpu, MH_DSYM),
            "{}",
            dwarf[0].display()
        );
        assert!(
            m.uuid.is_some() && d.uuid == m.uuid,
            "{bin}: the dSYM is another build's"
        );
        assert!(
            dsym.windows(b"__debug_line".len())
                .any(|w| w == b"__debug_line"),
            "{bin}: the dSYM has no line tables"
        );
    }
    // The C `main` of the hook (src/bin/albedo-otel-hook.rs) calls these before std is set up;
    // each import is bound to the library that has it (two-level namespace: dyld looks there
    // only), the TLS stack's to the frameworks packaging/macos stood in for.
    let hook = parse(&std::fs::read(dir.join(&name).join("albedo-otel-hook")).unwrap());
    let from = |symbol: &str| -> Option<&str> {
        let (_, _, desc, _) = hook
            .symbols
            .iter()
            .find(|(n, t, _, _)| n == symbol && t & 0x0e == 0)?;
        let ordinal = usize::from(desc >> 8);
        hook.dylibs.get(ordinal.checked_sub(1)?).map(String::as_str)
    };
    for needed in ["_signal", "_fcntl", "_open", "___error"] {
        assert_eq!(
            from(needed),
            Some("/usr/lib/libSystem.B.dylib"),
            "{target}: {needed}"
        );
    }
    for (name, _, _, _) in &hook.symbols {
        let want = if name.starts_with("_Sec") || name.starts_with("_kSec") {
            "Security"
        } else if name.starts_with("_CF") || name.starts_with("_kCF") {
            "CoreFoundation"
        } else {
            continue;
        };
        let lib = from(name).unwrap_or_else(|| panic!("{target}: {name} is not imported"));
        assert_eq!(
            lib,
            format!("/System/Library/Frameworks/{want}.framework/Versions/A/{want}"),
            "{target}: {name}"
        );
    }
    // Its npm package and its wheel are there too.
    let cpu_name = if target.starts_with("aarch64") {
        "arm64"
    } else {
        "x64"
    };
    assert!(dist
        .join(format!("albedo-otel-darwin-{cpu_name}-{VERSION}.tgz"))
        .is_file());
    let arch = if target.starts_with("aarch64") {
        "arm64"
    } else {
        "x86_64"
    };
    assert!(std::fs::read_dir(dist).unwrap().any(|e| {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        n.starts_with(&format!("albedo_otel-{VERSION}-py3-none-macosx_"))
            && n.ends_with(&format!("_{arch}.whl"))
    }));
}

/// `ALBEDO_OTEL_DIST_DIR` if it holds `target`'s archive. `ALBEDO_OTEL_DIST_TARGETS`, when set,
/// says which targets were built there (`.ci/run` builds one macOS target; the release
/// workflow all): another target is skipped, a listed one must be there.
fn dist_dir(target: &str) -> Option<PathBuf> {
    if let Ok(built) = std::env::var("ALBEDO_OTEL_DIST_TARGETS") {
        if !built.split_whitespace().any(|t| t == target) {
            eprintln!("SKIPPED: {target} is not in ALBEDO_OTEL_DIST_TARGETS ({built})");
            return None;
        }
    }
    require_tool(
        &format!("scripts/dist's {target} artifacts"),
        std::env::var_os("ALBEDO_OTEL_DIST_DIR")
            .map(PathBuf::from)
            .filter(|d| {
                d.join(format!("albedo-otel-{VERSION}-{target}.tar.gz"))
                    .is_file()
            }),
        &format!("run `scripts/dist {target}` and set ALBEDO_OTEL_DIST_DIR=dist"),
    )
}

#[test]
fn the_apple_silicon_build_is_a_signed_arm64_executable_with_its_dsym() {
    let target = "aarch64-apple-darwin";
    if let Some(dist) = dist_dir(target) {
        check_target(&dist, target, ARM64);
    }
}

#[test]
fn the_intel_mac_build_is_an_x86_64_executable_with_its_dsym() {
    let target = "x86_64-apple-darwin";
    if let Some(dist) = dist_dir(target) {
        check_target(&dist, target, X86_64);
    }
}
