//// Stand-in for albedo's `albedo/harness/hook`, from hooks.md: a hook is
//// `fn(hook.Event) -> hook.Verdict`.

import gleam/option.{type Option, None}

/// The four events hooks.md lists, with the fields in the order it writes them:
/// `Prompted(text)`, `Calling(call)`, `Called(call, output, started_ms, finished_ms)`,
/// `Stopping(reply, held)`.
pub type Event {
  /// GUESS: `text` is a `String` (the user's message).
  Prompted(text: String)
  Calling(call: Call)
  /// GUESS: `output` is a `String`: hooks.md says it is cut to 64 KiB before hooks see it and
  /// that `run`'s is `{"exit_code", "timed_out"}`, so JSON text for `run`, other text for
  /// others. GUESS: `started_ms` and `finished_ms` are `Int` Unix milliseconds.
  Called(call: Call, output: String, started_ms: Int, finished_ms: Int)
  /// GUESS: `reply` is a `String` (the model's last words); `held` is an `Int`, how many
  /// times this stop was already held (hooks.md: "at most 8 times").
  Stopping(reply: String, held: Int)
}

/// A model tool call, or a call made inside a cell. hooks.md: "`name` is the tool, `arguments`
/// its JSON", and `within` "is the model call that ran the cell".
///
/// GUESS: the constructor and its labels are `Call(id:, name:, arguments:, within:)`.
/// GUESS: `id: String`, the call's id (hooks.md does not mention an id at all).
/// GUESS: `name: String`.
/// GUESS: `arguments: String`, the arguments as JSON text (not a `Dynamic`, a `Dict` or
/// gleam_json's `Json`).
/// GUESS: `within: Option(String)`, the id of the model call that ran the cell, `None` for a
/// model tool call (not the enclosing `Call` itself).
pub type Call {
  Call(id: String, name: String, arguments: String, within: Option(String))
}

/// What a hook answers. hooks.md: any verdict can carry `notes` (shown to the user, never the
/// model) and `halt` (the turn ends with that reason); a verdict can block, rewrite a call's
/// JSON arguments, or add context.
///
/// GUESS: the constructor is `Verdict`, with labelled fields so that
/// `Verdict(..proceed, notes: [..])` works. GUESS: `notes: List(String)`.
/// GUESS: `halt: Option(String)`, the reason. GUESS: `block: Option(String)` (the reason),
/// `rewrite: Option(String)` (JSON text) and `context: List(String)`; the extension sets none
/// of these three.
pub type Verdict {
  Verdict(
    block: Option(String),
    rewrite: Option(String),
    context: List(String),
    notes: List(String),
    halt: Option(String),
  )
}

/// Let the turn go on unchanged. hooks.md uses `hook.proceed` as a value.
/// GUESS: it is a constant (not a function to call).
pub const proceed = Verdict(
  block: None,
  rewrite: None,
  context: [],
  notes: [],
  halt: None,
)
