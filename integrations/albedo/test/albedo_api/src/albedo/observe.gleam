//// Stand-in for albedo's `albedo/observe`. hooks.md: "`CallSent` carries each model call's
//// request, usage and timing; `TurnEnded` closes the turn". It shows an observer as
//// `fn(_, event)`, and nothing more.

/// GUESS: what an observer gets as its first argument; hooks.md ignores it (`fn(_, event)`).
pub type Observer

/// GUESS: the type is `observe.Event`.
pub type Event {
  /// GUESS: the three fields are in this order: `CallSent(request, usage, timing)`, and their
  /// types are the records below.
  CallSent(request: Request, usage: Usage, timing: Timing)
  /// GUESS: `TurnEnded` has a field (a reason); the extension matches `TurnEnded(..)`, so
  /// any fields, or none, fit.
  TurnEnded(reason: String)
  /// GUESS: albedo observes more than these two; this stands for the others, which the
  /// extension ignores.
  Other
}

/// GUESS: a model call's request is a record with the model's name as `model: String`.
pub type Request {
  Request(model: String)
}

/// GUESS: usage is a record with `input_tokens: Int` (without cached tokens, as providers
/// report it) and `output_tokens: Int`.
pub type Usage {
  Usage(input_tokens: Int, output_tokens: Int)
}

/// GUESS: timing is a record with `started_ms: Int` and `finished_ms: Int`, Unix
/// milliseconds.
pub type Timing {
  Timing(started_ms: Int, finished_ms: Int)
}
