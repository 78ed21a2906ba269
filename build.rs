//! Links the unwinder statically (`libgcc_eh.a`) instead of loading `libgcc_s.so` on
//! Linux with glibc. A command hook is a process per agent event, and loading that one
//! shared library was most of what `albedo-otel-hook` cost over `/bin/true`
//! (docs/performance.md has the measurement). libc stays shared, so name resolution and
//! everything else behave as in any dynamically linked program.
//!
//! How: rustc asks for `-lgcc_s`; a linker script of that name, found first, stands for
//! `libgcc_eh.a` instead. It is only put in place when the target's C compiler (named as the
//! `cc` crate names it; a cross build names none by default and is left alone) has that archive;
//! `ALBEDO_OTEL_SHARED_LIBGCC=1` turns it off. A linker's `-L` folders apply to every `-l`
//! wherever they stand on the command line, so passing it as a link argument is enough.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ALBEDO_OTEL_SHARED_LIBGCC");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    for k in compiler_vars(&var("TARGET"), &var("HOST")) {
        println!("cargo:rerun-if-env-changed={k}");
    }
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || !var("ALBEDO_OTEL_SHARED_LIBGCC").is_empty()
    {
        return;
    }
    let Some(cc) = compiler(&var("TARGET"), &var("HOST")) else {
        return;
    };
    let Ok(out) = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let archive = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // Without the archive, the compiler prints the bare name back.
    if !out.status.success() || !archive.is_absolute() || !archive.is_file() {
        return;
    }
    let dir = PathBuf::from(var("OUT_DIR")).join("static-unwinder");
    if std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(dir.join("libgcc_s.so"), "INPUT(-lgcc_eh)\n").is_err()
    {
        return;
    }
    // Only this package's executables (and its tests, which check that panics still unwind):
    // a link search path would also reach every program that uses the library, and how a
    // host links its unwinder is the host's business.
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    // A published crate has no tests/ (Cargo.toml's `include`), and cargo rejects an argument
    // for test targets that a package does not have.
    if PathBuf::from(var("CARGO_MANIFEST_DIR"))
        .join("tests")
        .is_dir()
    {
        println!("cargo:rustc-link-arg-tests=-L{}", dir.display());
    }
}

/// The variables that name the C compiler for `target`, first to last, as the `cc` crate
/// reads them: `CC_<target>` (as written, then with `_`), `TARGET_CC` or `HOST_CC`, `CC`.
fn compiler_vars(target: &str, host: &str) -> Vec<String> {
    let kind = if target == host {
        "HOST_CC"
    } else {
        "TARGET_CC"
    };
    vec![
        format!("CC_{target}"),
        format!("CC_{}", target.replace('-', "_")),
        kind.to_string(),
        "CC".to_string(),
    ]
}

/// The C compiler for the target. A cross build with none named is not probed: the host's
/// `cc` would answer for the wrong target, and the archive it names would not link.
fn compiler(target: &str, host: &str) -> Option<String> {
    compiler_vars(target, host)
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .or_else(|| (target == host).then(|| "cc".to_string()))
}
