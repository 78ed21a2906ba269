//! The hook script `install` puts in Cline's hooks folder under each event's name: a few
//! lines of `sh` that run albedo-otel's hook with the payload and answer Cline as it asks
//! (`{"cancel": false}`, never steering it), whatever the hook does. Its text is written and
//! read back here, the one place that knows it.

/// The comment that marks the script as albedo-otel's, for whoever opens it.
const MARK: &str =
    "# albedo-otel's hook for Cline: it traces this event. `albedo-otel uninstall cline` removes it.";

/// What every one of our scripts answers Cline.
const ANSWER: &str = "printf '%s\\n' '{\"cancel\": false}'";

/// Our hook's output goes nowhere: Cline reads the script's stdout as its answer.
const QUIET: &str = " >/dev/null 2>&1";

fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The script that runs `command` (its words).
pub fn text(command: &[String]) -> String {
    let line: Vec<String> = command.iter().map(|w| quote(w)).collect();
    format!("#!/bin/sh\n{MARK}\n{}{QUIET}\n{ANSWER}\n", line.join(" "))
}

/// The command a script runs, if the script is ours, exactly as [`text`] writes it.
pub fn command_in(script: &str) -> Option<Vec<String>> {
    let line = script.lines().nth(2)?.strip_suffix(QUIET)?;
    let words = unquote(line)?;
    (!words.is_empty() && text(&words) == script).then_some(words)
}

/// The words of a line of `'…'` words (with `'\''` for a quote), one space apart.
fn unquote(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let mut word = String::new();
        rest = rest.strip_prefix('\'')?;
        loop {
            let end = rest.find('\'')?;
            word.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            match rest.strip_prefix(r"\''") {
                Some(after) => {
                    word.push('\'');
                    rest = after;
                }
                None => break,
            }
        }
        words.push(word);
        if !rest.is_empty() {
            rest = rest.strip_prefix(' ')?;
        }
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_reads_back_as_the_command_it_runs_and_nothing_else_does() {
        let command: Vec<String> = [
            "/a b/albedo-otel-hook",
            "--config",
            "/c/it's",
            "--agent",
            "cline",
        ]
        .map(String::from)
        .to_vec();
        let script = text(&command);
        assert_eq!(command_in(&script), Some(command));
        assert!(script.starts_with("#!/bin/sh\n"));
        for theirs in [
            "#!/bin/sh\necho hi\n".to_string(),
            script.replace(QUIET, ""),
            script.replace(ANSWER, "printf '{\"cancel\": true}'"),
            format!("{script}rm -rf ~\n"),
            String::new(),
        ] {
            assert_eq!(command_in(&theirs), None, "{theirs}");
        }
    }
}
