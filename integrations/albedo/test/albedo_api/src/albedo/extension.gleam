//// Stand-in for albedo's `albedo/extension`, from hooks.md's example:
////
//// ```gleam
//// extension.ManagedPlugin(fn(_, session, _) {
////   Ok(extension.Managed(
////     ..extension.empty(),
////     observe: fn(_, event) { ... },
////     hook: Some(fn(event) { ... hook.proceed }),
////     close: fn() { ... },
////   ))
//// })
//// ```

import albedo/harness/hook
import albedo/observe
import albedo/session.{type Session}
import gleam/option.{type Option, None}

/// GUESS: the first argument of a managed plugin's start function; hooks.md ignores it.
pub type Host

/// GUESS: the third argument of a managed plugin's start function; hooks.md ignores it.
pub type Settings

/// An extension, as `/extensions` lists it.
/// GUESS: `ManagedPlugin` is the constructor of a type of the same name, with one field, the
/// start function `fn(Host, Session, Settings) -> Result(Managed, String)`.
/// GUESS: the error type is `String`; the extension always answers `Ok`.
pub type ManagedPlugin {
  ManagedPlugin(start: fn(Host, Session, Settings) -> Result(Managed, String))
}

/// What a started managed plugin contributes to the session.
/// hooks.md: `hook: Option(fn(hook.Event) -> hook.Verdict)`; `observe: fn(_, event)`;
/// `close: fn()`.
/// GUESS: `observe` and `close` return `Nil`.
/// GUESS: albedo's `Managed` has more fields, which `empty()` fills; `tools` stands for them.
pub type Managed {
  Managed(
    tools: List(String),
    hook: Option(fn(hook.Event) -> hook.Verdict),
    observe: fn(observe.Observer, observe.Event) -> Nil,
    close: fn() -> Nil,
  )
}

/// A plugin that contributes nothing, to update with `Managed(..empty(), ...)`.
pub fn empty() -> Managed {
  Managed(tools: [], hook: None, observe: fn(_, _) { Nil }, close: fn() { Nil })
}
