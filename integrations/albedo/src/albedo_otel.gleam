//// albedo-otel as an albedo extension: every turn, tool call and model call of a session
//// becomes an OpenTelemetry trace.
////
//// The hook only watches: it hands each event to the session's exporter process and answers
//// `hook.proceed` at once (with a note, once, if the exporter could not be started or died).
//// The exporter is an `albedo-otel run` port owned by an Erlang process; all port handling
//// and JSON encoding is in `albedo_otel_ffi.erl`, so it is tested on a real BEAM.
////
//// The calls into Erlang are typed: one per event kind, taking `String`s, `Int`s and an
//// `Option(String)`. Each field of albedo's values is read here, by name, and handed on as
//// the type the Erlang side expects, so an albedo whose fields have other types or names
//// fails to compile this module instead of sending wrong lines. The README's table lists
//// every field read and the type assumed.

import albedo/extension
import albedo/harness/hook
import albedo/observe
import gleam/option.{type Option, None, Some}

/// A session's handle on its exporter (the Erlang process that owns the port).
type Exporter

/// `parent`: `Some(#(parent_session_id, spawn_call_id))` makes a child session join its
/// parent's exporter, so its turns nest under that `agents.spawn` call's span.
@external(erlang, "albedo_otel_ffi", "start")
fn start(session: String, parent: Option(#(String, String))) -> Exporter

@external(erlang, "albedo_otel_ffi", "prompted")
fn prompted(exporter: Exporter, text: String) -> Nil

@external(erlang, "albedo_otel_ffi", "calling")
fn calling(
  exporter: Exporter,
  id: String,
  name: String,
  arguments: String,
  within: Option(String),
) -> Nil

@external(erlang, "albedo_otel_ffi", "called")
fn called(
  exporter: Exporter,
  id: String,
  name: String,
  arguments: String,
  within: Option(String),
  output: String,
  started_ms: Int,
  finished_ms: Int,
) -> Nil

@external(erlang, "albedo_otel_ffi", "stopping")
fn stopping(exporter: Exporter, reply: String, held: Int) -> Nil

@external(erlang, "albedo_otel_ffi", "call_sent")
fn call_sent(
  exporter: Exporter,
  model: String,
  input_tokens: Int,
  output_tokens: Int,
  started_ms: Int,
  finished_ms: Int,
) -> Nil

@external(erlang, "albedo_otel_ffi", "turn_ended")
fn turn_ended(exporter: Exporter) -> Nil

@external(erlang, "albedo_otel_ffi", "close")
fn close(exporter: Exporter) -> Nil

@external(erlang, "albedo_otel_ffi", "take_note")
fn take_note(exporter: Exporter) -> Result(String, Nil)

/// The extension, as `/extensions` lists it: an `extension.ManagedPlugin`.
pub fn plugin() {
  extension.ManagedPlugin(fn(_, session, _) {
    // albedo's documented API does not say how a child session names the `agents.spawn`
    // call that started it, so no session is started as a child. Where yours does, pass
    // `Some(#(parent_session_id, spawn_call_id))`.
    let exporter = start(session.id, None)
    Ok(
      extension.Managed(
        ..extension.empty(),
        observe: fn(_, event) {
          // Only `CallSent` and `TurnEnded` make spans; other observations are not sent.
          case event {
            observe.CallSent(request, usage, timing) ->
              call_sent(
                exporter,
                request.model,
                usage.input_tokens,
                usage.output_tokens,
                timing.started_ms,
                timing.finished_ms,
              )
            observe.TurnEnded(..) -> turn_ended(exporter)
            _ -> Nil
          }
        },
        hook: Some(fn(event) {
          report(exporter, event)
          case take_note(exporter) {
            Ok(note) -> hook.Verdict(..hook.proceed, notes: [note])
            Error(Nil) -> hook.proceed
          }
        }),
        close: fn() { close(exporter) },
      ),
    )
  })
}

fn report(exporter: Exporter, event: hook.Event) -> Nil {
  case event {
    hook.Prompted(text) -> prompted(exporter, text)
    hook.Calling(call) ->
      calling(exporter, call.id, call.name, call.arguments, call.within)
    hook.Called(call, output, started_ms, finished_ms) ->
      called(
        exporter,
        call.id,
        call.name,
        call.arguments,
        call.within,
        output,
        started_ms,
        finished_ms,
      )
    hook.Stopping(reply, held) -> stopping(exporter, reply, held)
  }
}
