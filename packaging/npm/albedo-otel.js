#!/usr/bin/env node
// albedo-otel's npm launcher: runs the native `albedo-otel` from this platform's package
// (@albedo-otel/<os>-<cpu>, an optional dependency that npm installs only where `os` and `cpu`
// match), as esbuild and biome do. Only the command line goes through Node: the hook command
// that `install` writes runs the native `albedo-otel-hook` itself, so an agent's hook costs no
// Node start-up.
//
// `npx albedo-otel install ...` runs from npx's cache, which `npm cache clean` or a newer
// version removes; a hook command pointing there would break silently. So for `install` both
// native binaries are first copied to $XDG_DATA_HOME/albedo-otel/npm/<version>/ (default
// ~/.local/share), and `install` runs from that copy: it writes the path of the executable
// that runs it, and the hook starts the daemon (`albedo-otel`) from its own folder.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawn } = require("child_process");

const PLATFORMS = {
  "linux x64": "@albedo-otel/linux-x64",
  "linux arm64": "@albedo-otel/linux-arm64",
  "darwin x64": "@albedo-otel/darwin-x64",
  "darwin arm64": "@albedo-otel/darwin-arm64",
};
const BINARIES = ["albedo-otel", "albedo-otel-hook"];

function fail(message) {
  process.stderr.write(`albedo-otel: ${message}\n`);
  process.exit(1);
}

function platformDir() {
  const name = PLATFORMS[`${process.platform} ${process.arch}`];
  if (!name) {
    fail(
      `no build for ${process.platform} ${process.arch}; ` +
        "`cargo install --locked albedo-otel` builds one from source",
    );
  }
  try {
    return path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(
      `${name} is not installed (it is an optional dependency: ` +
        "was npm run with --omit=optional or --no-optional?)",
    );
  }
}

// Copies both binaries to a folder outside npm's trees, unless an identical copy is there.
// Each file is written beside its final name and renamed into place, so a hook running the
// old copy never sees half a file.
function stableCopy(from) {
  const version = require("../package.json").version;
  const data = process.env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
  const dir = path.join(data, "albedo-otel", "npm", version);
  fs.mkdirSync(dir, { recursive: true });
  for (const bin of BINARIES) {
    const src = path.join(from, "bin", bin);
    const dst = path.join(dir, bin);
    const same = (() => {
      try {
        return (
          fs.statSync(dst).size === fs.statSync(src).size &&
          fs.readFileSync(dst).equals(fs.readFileSync(src))
        );
      } catch {
        return false;
      }
    })();
    if (!same) {
      const tmp = `${dst}.${process.pid}.tmp`;
      fs.copyFileSync(src, tmp);
      fs.chmodSync(tmp, 0o755);
      fs.renameSync(tmp, dst);
    }
  }
  return dir;
}

const args = process.argv.slice(2);
let binDir = path.join(platformDir(), "bin");
if (args[0] === "install") {
  binDir = stableCopy(path.dirname(binDir));
}
const child = spawn(path.join(binDir, "albedo-otel"), args, { stdio: "inherit" });
// `run` flushes on SIGTERM and reports on SIGUSR1: signals sent to this process are the
// native one's. Ctrl-C reaches both processes from the terminal, so SIGINT is only ignored
// here (forwarded, the native one would get it twice).
for (const sig of ["SIGTERM", "SIGHUP", "SIGUSR1"]) {
  process.on(sig, () => child.kill(sig));
}
process.on("SIGINT", () => {});
child.on("error", (e) => fail(`cannot run ${path.join(binDir, "albedo-otel")}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
