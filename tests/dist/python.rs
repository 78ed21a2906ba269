//! The wheel as Python users install it, each into folders of its own under a fresh HOME and
//! offline: pip into a virtualenv, `pipx install`, and `uvx` (`uv tool run`), which runs it
//! from uv's cache without installing it. Each runs the same route as the other artifacts.
//! After `uvx ... install claude-code`, `uv cache clean` empties that cache: the hook must
//! still work, from the copy `install` made of the binaries (src/cli/install/command.rs).

use super::*;

/// The Linux x86_64 wheel in dist/.
fn linux_wheel(dist: &Path) -> PathBuf {
    std::fs::read_dir(dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("albedo_otel-{VERSION}-py3-none-"))
                && name.contains("manylinux_2_17_x86_64")
                && name.ends_with(".whl")
        })
        .expect("a Linux x86_64 wheel in dist/")
}

/// pipx and uv, pinned: `.ci/run` installs them and names them in these variables.
fn installer(var: &str, name: &str) -> Option<PathBuf> {
    require_tool(
        name,
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .or_else(|| which(name)),
        &format!("set {var} (.ci/run installs pipx==1.18.4 and uv==0.13.9 from PyPI)"),
    )
}

/// What keeps pip, and uv (which pipx uses when it finds it), off the network.
fn offline(cmd: &mut Command) -> &mut Command {
    cmd.env("PIP_NO_INDEX", "1")
        .env("UV_OFFLINE", "1")
        .env("UV_PYTHON_DOWNLOADS", "never")
}

#[test]
fn the_wheel_installs_both_binaries_on_path_in_a_fresh_virtualenv() {
    let Some(dist) = dist_dir() else { return };
    let python = require_tool("python3", which("python3"), "install python3").unwrap();
    let dir = scratch("dist-wheel");
    let (venv, home) = (dir.join("venv"), dir.join("home"));
    std::fs::create_dir(&home).unwrap();
    ok(
        clean(&python, &home)
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap(),
        "venv",
    );
    ok(
        clean(venv.join("bin/pip"), &home)
            .args(["install", "--no-index", "--disable-pip-version-check"])
            .arg(linux_wheel(&dist))
            .output()
            .unwrap(),
        "pip install",
    );
    // On PATH as an activated virtualenv puts it.
    let cli = || {
        let mut c = clean("albedo-otel", &home);
        c.env(
            "PATH",
            format!("{}:{}", venv.join("bin").display(), plain_path()),
        );
        c
    };
    let command = user_route(&home, &cli, &|| {});
    assert_eq!(hook_program(&command), venv.join("bin/albedo-otel-hook"));
}

#[test]
fn pipx_install_puts_both_binaries_on_path() {
    let Some(dist) = dist_dir() else { return };
    let Some(pipx) = installer("ALBEDO_OTEL_PIPX", "pipx") else {
        return;
    };
    let dir = scratch("dist-pipx");
    let (home, pipx_home, bin) = (dir.join("home"), dir.join("pipx"), dir.join("bin"));
    std::fs::create_dir(&home).unwrap();
    let pipx_env = |cmd: &mut Command| {
        offline(cmd)
            .env("PIPX_HOME", &pipx_home)
            .env("PIPX_BIN_DIR", &bin);
    };
    let mut install = clean(&pipx, &home);
    pipx_env(&mut install);
    ok(
        install
            .arg("install")
            .arg(linux_wheel(&dist))
            .output()
            .unwrap(),
        "pipx install",
    );
    let cli = || {
        let mut c = clean("albedo-otel", &home);
        c.env("PATH", format!("{}:{}", bin.display(), plain_path()));
        c
    };
    let command = user_route(&home, &cli, &|| {});
    // PIPX_BIN_DIR holds links; the hook names what they point at, which pipx keeps.
    assert_eq!(
        hook_program(&command),
        pipx_home.join("venvs/albedo-otel/bin/albedo-otel-hook")
    );
}

#[test]
fn uvx_runs_the_wheel_and_the_hook_outlives_uv_cache_clean() {
    let Some(dist) = dist_dir() else { return };
    let Some(uvx) = installer("ALBEDO_OTEL_UVX", "uvx") else {
        return;
    };
    let uv = uvx.with_file_name("uv");
    let dir = scratch("dist-uvx");
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let wheel = linux_wheel(&dist);
    // uv's defaults under the fresh HOME (its cache in ~/.cache/uv), as a user has them.
    let cli = || {
        let mut c = clean(&uvx, &home);
        offline(&mut c)
            .args(["--offline", "--from"])
            .arg(&wheel)
            .arg("albedo-otel");
        c
    };
    let cache = home.join(".cache/uv");
    let command = user_route(&home, &cli, &|| {
        assert!(
            files_under(&cache)
                .iter()
                .any(|f| f.ends_with("bin/albedo-otel")),
            "uvx did not run from {}",
            cache.display()
        );
        let mut clean_cache = clean(&uv, &home);
        ok(
            offline(&mut clean_cache)
                .args(["cache", "clean"])
                .output()
                .unwrap(),
            "uv cache clean",
        );
        assert!(
            !files_under(&cache)
                .iter()
                .any(|f| f.ends_with("bin/albedo-otel")),
            "uv cache clean left the binary"
        );
    });
    assert_eq!(
        hook_program(&command),
        home.join(format!(
            ".local/share/albedo-otel/uv/{VERSION}/albedo-otel-hook"
        ))
    );
}

#[test]
fn pipx_run_runs_the_wheel_and_the_hook_outlives_its_cache() {
    let Some(dist) = dist_dir() else { return };
    let Some(pipx) = installer("ALBEDO_OTEL_PIPX", "pipx") else {
        return;
    };
    let dir = scratch("dist-pipx-run");
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let wheel = linux_wheel(&dist);
    let cli = || {
        let mut c = clean(&pipx, &home);
        offline(&mut c)
            .args(["run", "--spec"])
            .arg(&wheel)
            .arg("albedo-otel");
        c
    };
    // pipx's own defaults under the fresh HOME: `pipx run` works in ~/.cache/pipx, whose
    // environments it deletes after some days; it installs with uv, found beside it.
    let cache = home.join(".cache/pipx");
    let command = user_route(&home, &cli, &|| {
        assert!(
            files_under(&cache)
                .iter()
                .any(|f| f.ends_with("bin/albedo-otel")),
            "pipx run did not run from {}",
            cache.display()
        );
        std::fs::remove_dir_all(&cache).unwrap();
    });
    assert_eq!(
        hook_program(&command),
        home.join(format!(
            ".local/share/albedo-otel/pipx/{VERSION}/albedo-otel-hook"
        ))
    );
}
