//! opencode's history from its own database, for `import`: every session in `opencode.db`
//! (Kilo Code's `kilo.db` likewise) turned back into the events albedo-otel's plugin hands on
//! live, in their time order, and fed to the live route's own adapter. So a model call met both
//! ways has the same id (its message's) and is counted once, a sub-agent nests under the
//! `task` call that started it, and a refused call is refused.
//!
//! What the database keeps of each event is its last state: a session's row, a message's
//! `data` (its times, tokens and finish), a part's `data` (a tool call's state with its start
//! and end). Each gives the events the plugin saw: a message's start and its completion, a
//! tool call's `running` and its end, and the turn's `session.idle` once its last answer is
//! complete.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::payload::{Info, Part, Payload, Properties};
use super::Adapter;
use crate::protocol::Record;
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::spec::{self, Env};

/// Where an opencode-shaped agent keeps its database: `$XDG_DATA_HOME/<folder>`, by default
/// `~/.local/share/<folder>`.
pub(crate) fn roots_of(env: Env<'_>, folder: &str) -> Vec<PathBuf> {
    match env("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(data) => vec![Path::new(&data).join(folder)],
        None => spec::under_home(env, &format!(".local/share/{folder}"))
            .into_iter()
            .collect(),
    }
}

/// Where opencode keeps its database.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    roots_of(env, "opencode")
}

/// Whether `path` is opencode's database.
pub fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "opencode.db")
}

/// Every session in opencode's database at `path` written to since `since_ms`, as the live
/// route would have traced it, handed to `each` a family at a time (see [`records_as`]).
pub fn records(
    path: &Path,
    since_ms: Option<u64>,
    each: &mut spec::Each<'_>,
) -> Result<(), String> {
    records_as(super::AGENT, path, since_ms, each)
}

/// One event the plugin would have handed on, at `at_ms`; `rank` orders those of one
/// millisecond as opencode sends them.
struct Seen {
    at_ms: u64,
    rank: u8,
    payload: Payload,
}

/// The records of every session in the database at `path` written to since `since_ms`, under
/// agent name `agent`: each family (a session and its sub-agents', read together) handed to
/// `each` as it is read, so that an import holds one family's events at a time, not the
/// database's.
pub(crate) fn records_as(
    agent: &'static str,
    path: &Path,
    since_ms: Option<u64>,
    each: &mut spec::Each<'_>,
) -> Result<(), String> {
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| e.to_string())?;
    db.busy_timeout(Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    let not_ours = |e: rusqlite::Error| format!("{e} (is it opencode's database?)");
    let families = families(&db, since_ms.unwrap_or(0)).map_err(not_ours)?;
    for (top, family) in families {
        let seen = read(&db, &top, &family).map_err(not_ours)?;
        each(replay(agent, seen));
    }
    Ok(())
}

/// The events, in time order, fed to the live route's adapter; each top session is closed at
/// its last event, as when opencode exits.
fn replay(agent: &'static str, mut seen: Vec<Seen>) -> Vec<Record<'static>> {
    seen.sort_by_key(|s| (s.at_ms, s.rank));
    let mut last: HashMap<String, u64> = HashMap::new();
    let mut adapter = Adapter::named(agent);
    let mut out = Vec::new();
    for s in seen {
        let (at_ms, sid) = (s.at_ms, s.payload.session_id.clone());
        adapter.take(Box::new(s.payload), at_ms, &mut NoTranscripts, &mut out);
        let top = last.entry(sid).or_default();
        *top = (*top).max(at_ms);
    }
    let mut tops: Vec<(String, u64)> = last.into_iter().collect();
    tops.sort();
    for (sid, at_ms) in tops {
        AgentRules::abandon(&mut adapter, &sid, at_ms, &mut NoTranscripts, &mut out);
    }
    out
}

/// A session's row.
struct SessionRow {
    id: String,
    parent: Option<String>,
    directory: Option<String>,
    created: u64,
}

/// The sessions written to since `since_ms`, and their sub-agents', by family: each top
/// session's id (the journal's session for all of its family's events) with its family's
/// rows, in the order of those ids.
fn families(db: &Connection, since_ms: u64) -> rusqlite::Result<Vec<(String, Vec<SessionRow>)>> {
    let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
    let sessions: Vec<SessionRow> = db
        .prepare(
            "WITH RECURSIVE chosen(id) AS (
               SELECT id FROM session WHERE time_updated >= ?1
               UNION SELECT s.id FROM session s JOIN chosen c ON s.parent_id = c.id)
             SELECT id, parent_id, directory, time_created FROM session
             WHERE id IN (SELECT id FROM chosen)",
        )?
        .query_map([since], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                parent: r.get(1)?,
                directory: r.get(2)?,
                created: r.get::<_, i64>(3)?.max(0) as u64,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let parents: HashMap<String, String> = sessions
        .iter()
        .filter_map(|s| Some((s.id.clone(), s.parent.clone()?)))
        .collect();
    let top = |id: &str| -> String {
        let mut id = id;
        for _ in 0..64 {
            match parents.get(id) {
                Some(p) => id = p,
                None => break,
            }
        }
        id.to_string()
    };
    let mut by_top: std::collections::BTreeMap<String, Vec<SessionRow>> = Default::default();
    for s in sessions {
        by_top.entry(top(&s.id)).or_default().push(s);
    }
    Ok(by_top.into_iter().collect())
}

/// The events of one family (`sessions`, under top session `top`).
fn read(db: &Connection, top: &str, sessions: &[SessionRow]) -> rusqlite::Result<Vec<Seen>> {
    let top = |_: &str| top.to_string();
    let event = |sid: &str, name: &str, at_ms: u64, rank: u8, properties: Properties| Seen {
        at_ms,
        rank,
        payload: Payload {
            session_id: top(sid),
            session: Some(sid.to_string()),
            hook_event_name: name.to_string(),
            at_ms: Some(at_ms),
            properties,
        },
    };
    let mut seen = Vec::new();
    for s in sessions {
        let info = Info {
            id: Some(s.id.clone()),
            parent_id: s.parent.clone(),
            directory: s.directory.clone(),
            time: super::payload::Times {
                created: Some(s.created),
                ..Default::default()
            },
            ..Info::default()
        };
        seen.push(event(&s.id, "session.created", s.created, 0, Properties {
            info: Some(info),
            ..Properties::default()
        }));
    }
    let ids = serde_json::to_string(&sessions.iter().map(|s| &s.id).collect::<Vec<_>>())
        .unwrap_or_default();
    // Each part's `data`, by its message: the prompt's text, and the events of the rest.
    let mut texts: HashMap<String, Vec<String>> = HashMap::new();
    let mut parts = db.prepare(
        "SELECT message_id, session_id, time_created, data FROM part
         WHERE session_id IN (SELECT value FROM json_each(?1)) ORDER BY time_created, id",
    )?;
    let mut rows = parts.query([&ids])?;
    while let Some(r) = rows.next()? {
        let (message, sid): (String, String) = (r.get(0)?, r.get(1)?);
        let created = r.get::<_, i64>(2)?.max(0) as u64;
        let data: String = r.get(3)?;
        let Ok(mut part) = serde_json::from_str::<Part>(&data) else {
            continue;
        };
        part.message_id = Some(message.clone());
        match part.kind.as_str() {
            "text" => {
                #[derive(serde::Deserialize)]
                struct Text {
                    #[serde(default)]
                    text: Option<String>,
                }
                let text = serde_json::from_str::<Text>(&data).ok().and_then(|t| t.text);
                texts.entry(message).or_default().extend(text);
            }
            "step-start" => {
                let properties = Properties {
                    part: Some(part),
                    time: Some(created),
                    ..Properties::default()
                };
                seen.push(event(&sid, "message.part.updated", created, 3, properties));
            }
            "tool" => seen.extend(tool(&sid, created, part, &event)),
            _ => {}
        }
    }
    let mut messages = db.prepare(
        "SELECT id, session_id, time_created, data FROM message
         WHERE session_id IN (SELECT value FROM json_each(?1)) ORDER BY time_created, id",
    )?;
    let mut rows = messages.query([&ids])?;
    // Each prompt's last answer: its turn goes idle then.
    let mut idle: HashMap<(String, String), u64> = HashMap::new();
    while let Some(r) = rows.next()? {
        let (id, sid): (String, String) = (r.get(0)?, r.get(1)?);
        let created = r.get::<_, i64>(2)?.max(0) as u64;
        let Ok(mut info) = serde_json::from_str::<Info>(&r.get::<_, String>(3)?) else {
            continue;
        };
        info.id = Some(id.clone());
        info.time.created.get_or_insert(created);
        let created = info.time.created.unwrap_or(created);
        if info.role.as_deref() == Some("user") {
            let text = texts.remove(&id).unwrap_or_default().join("\n");
            let properties = Properties {
                message: Some(info),
                text: Some(text),
                ..Properties::default()
            };
            seen.push(event(&sid, "chat.message", created, 1, properties));
            idle.entry((sid, id)).or_insert(created);
            continue;
        }
        // Its start, as the plugin first saw it, and its end.
        let started = Info {
            time: super::payload::Times {
                created: Some(created),
                ..Default::default()
            },
            tokens: None,
            finish: None,
            error: None,
            ..info.clone()
        };
        seen.push(event(&sid, "message.updated", created, 2, Properties {
            info: Some(started),
            ..Properties::default()
        }));
        if let Some(done) = info.time.completed {
            if let Some(prompt) = info.parent_id.clone() {
                let at = idle.entry((sid.clone(), prompt)).or_insert(done);
                *at = (*at).max(done);
            }
            seen.push(event(&sid, "message.updated", done, 5, Properties {
                info: Some(info),
                ..Properties::default()
            }));
        }
    }
    for ((sid, _), at) in idle {
        seen.push(event(&sid, "session.idle", at, 6, Properties::default()));
    }
    Ok(seen)
}

/// A tool part's events: `running` at its start, and its end where it has one.
fn tool(
    sid: &str,
    created: u64,
    part: Part,
    event: &impl Fn(&str, &str, u64, u8, Properties) -> Seen,
) -> Vec<Seen> {
    let Some(state) = part.state.clone() else {
        return Vec::new();
    };
    let start = state.time.start.unwrap_or(created);
    let mut running = part.clone();
    if let Some(s) = running.state.as_mut() {
        s.status = "running".into();
        s.output = None;
        s.error = None;
        s.time.end = None;
    }
    let at = |part: Part, at_ms: u64| Properties {
        part: Some(part),
        time: Some(at_ms),
        ..Properties::default()
    };
    let mut out = vec![event(sid, "message.part.updated", start, 3, at(running, start))];
    if matches!(state.status.as_str(), "completed" | "error") {
        let end = state.time.end.unwrap_or(start).max(start);
        out.push(event(sid, "message.part.updated", end, 4, at(part, end)));
    }
    out
}
