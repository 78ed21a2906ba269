//// albedo-otel as an albedo extension: every turn, tool call and model call of a session
//// becomes an OpenTelemetry trace.
////
//// The hook only watches: it hands each event to the session's exporter process and answers
//// `hook.proceed` at once (with a note, once, if the exporter could not be started or died).
//// The exporter is an `albedo-otel run` port owned by an Erlang process; all port handling
//// and JSON encoding is in `albedo_otel_ffi.erl`, so it is tested on a real BEAM.

import albedo/extension
import albedo/harness/hook
import albedo/observe
import albedo/session.{type Session}
import gleam/dict.{type Dict}
import gleam/dynamic.{type Dynamic}
import gleam/option.{type Option, None, Some}

/// The process that owns the session's exporter port.
pub type Exporter

@external(erlang, "albedo_otel_ffi", "start")
fn ffi_start(session: String, meta: Dict(String, Dynamic)) -> Exporter

@external(erlang, "albedo_otel_ffi", "send")
fn ffi_send(exporter: Exporter, session: String, event: Dict(String, Dynamic)) -> Nil

@external(erlang, "albedo_otel_ffi", "close")
fn ffi_close(exporter: Exporter, session: String) -> Nil

@external(erlang, "albedo_otel_ffi", "take_note")
fn ffi_take_note(session: String) -> Result(String, Nil)

@external(erlang, "albedo_otel_ffi", "raw")
fn raw_json(json: String) -> Dynamic

@external(erlang, "erlang", "system_time")
fn system_time(unit: TimeUnit) -> Int

type TimeUnit {
  Millisecond
}

fn now_ms() -> Int {
  system_time(Millisecond)
}

fn to_dynamic(value: a) -> Dynamic {
  dynamic.from(value)
}

/// The extension, as `/extensions` lists it.
pub fn plugin() -> extension.ManagedPlugin {
  extension.ManagedPlugin(fn(_, session, _) {
    let id = session.id
    let exporter = ffi_start(id, session_meta(session))
    Ok(
      extension.Managed(
        ..extension.empty(),
        observe: fn(_, event) {
          case observed(event) {
            Some(line) -> ffi_send(exporter, id, line)
            None -> Nil
          }
        },
        hook: Some(fn(event) {
          ffi_send(exporter, id, hooked(event))
          case ffi_take_note(id) {
            Ok(note) -> hook.Verdict(..hook.proceed, notes: [note])
            Error(_) -> hook.proceed
          }
        }),
        close: fn() { ffi_close(exporter, id) },
      ),
    )
  })
}

fn session_meta(session: Session) -> Dict(String, Dynamic) {
  let meta =
    dict.from_list([
      #("agent", to_dynamic(session.agent)),
      #("model", to_dynamic(session.model)),
      #("workspace", to_dynamic(session.workspace)),
    ])
  case session.parent {
    Some(parent) ->
      meta
      |> dict.insert("parent_session", to_dynamic(parent.session))
      |> dict.insert("parent_call", to_dynamic(parent.call))
    None -> meta
  }
}

fn call(c: hook.Call) -> Dynamic {
  to_dynamic(
    dict.from_list([
      #("id", to_dynamic(c.id)),
      #("name", to_dynamic(c.name)),
      #("arguments", raw_json(c.arguments)),
      #("within", within(c.within)),
    ]),
  )
}

fn within(w: Option(String)) -> Dynamic {
  case w {
    Some(id) -> to_dynamic(id)
    None -> to_dynamic(Nil)
  }
}

fn hooked(event: hook.Event) -> Dict(String, Dynamic) {
  case event {
    hook.Prompted(text) ->
      dict.from_list([
        #("kind", to_dynamic("prompted")),
        #("at_ms", to_dynamic(now_ms())),
        #("text", to_dynamic(text)),
      ])
    hook.Calling(c) ->
      dict.from_list([
        #("kind", to_dynamic("calling")),
        #("at_ms", to_dynamic(now_ms())),
        #("call", call(c)),
      ])
    hook.Called(c, output, started_ms, finished_ms) ->
      dict.from_list([
        #("kind", to_dynamic("called")),
        #("call", call(c)),
        #("output", raw_json(output)),
        #("started_ms", to_dynamic(started_ms)),
        #("finished_ms", to_dynamic(finished_ms)),
      ])
    hook.Stopping(reply, held) ->
      dict.from_list([
        #("kind", to_dynamic("stopping")),
        #("at_ms", to_dynamic(now_ms())),
        #("reply", to_dynamic(reply)),
        #("held", to_dynamic(held)),
      ])
  }
}

/// Only `CallSent` and `TurnEnded` make spans; other observations are not sent.
fn observed(event: observe.Event) -> Option(Dict(String, Dynamic)) {
  case event {
    observe.CallSent(request, usage, timing) ->
      Some(dict.from_list([
        #("kind", to_dynamic("call_sent")),
        #("request", raw_json(request)),
        #("usage", raw_json(usage)),
        #("started_ms", to_dynamic(timing.started_ms)),
        #("finished_ms", to_dynamic(timing.finished_ms)),
      ]))
    observe.TurnEnded(reason) ->
      Some(dict.from_list([
        #("kind", to_dynamic("turn_ended")),
        #("at_ms", to_dynamic(now_ms())),
        #("reason", to_dynamic(reason)),
      ]))
    _ -> None
  }
}
