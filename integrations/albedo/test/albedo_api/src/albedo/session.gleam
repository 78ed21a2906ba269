//// Stand-in for albedo's `albedo/session`.
////
//// hooks.md shows only that a managed plugin's start function gets the session as its second
//// argument (`fn(_, session, _)`); it names none of its fields.

/// GUESS: the type is `session.Session`, a record with a field `id: String`, the session's
/// id. albedo's real session surely has more fields; the extension reads none of them, so
/// none are guessed here.
pub type Session {
  Session(id: String)
}
