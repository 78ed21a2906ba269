//! The parts of the README and `.ci/run` the suite makes from the agents' folders: each is
//! checked, and a test that finds one drifted fails with the text it should have, or, with
//! `ALBEDO_OTEL_BLESS=1`, writes it there (how a new agent's rows get in).

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Checks that the text of `path` (from the repository's root) between the lines `begin` and
/// `end` is `expected`; `what` names it in the failure.
pub(super) fn region(path: &str, begin: &str, end: &str, expected: &str, what: &str) {
    // Tests run side by side, and two regions may share a file.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let file = format!("{ROOT}/{path}");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let begin = format!("{begin}\n");
    let (before, rest) = text
        .split_once(&begin)
        .unwrap_or_else(|| panic!("{path} has no line `{}`", begin.trim_end()));
    let (found, after) = rest
        .split_once(end)
        .unwrap_or_else(|| panic!("{path} has no line `{end}` after `{}`", begin.trim_end()));
    if found == expected {
        return;
    }
    if std::env::var("ALBEDO_OTEL_BLESS").as_deref() == Ok("1") {
        std::fs::write(&file, format!("{before}{begin}{expected}{end}{after}")).unwrap();
        return;
    }
    panic!(
        "{what} in {path} is not what the agents' folders say: run the tests with \
         ALBEDO_OTEL_BLESS=1 to write it, or put this between `{}` and `{end}`:\n\n{expected}",
        begin.trim_end()
    );
}
