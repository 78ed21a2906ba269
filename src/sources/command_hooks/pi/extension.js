// albedo-otel's Pi extension: Pi's turns, model calls and tool calls as OpenTelemetry traces.
// Written by `albedo-otel install pi`, removed by `albedo-otel uninstall pi`.
//
// It hands the events that make a trace to one `albedo-otel-hook` process, a JSON line each,
// through that process's stdin: the hook journals them and an albedo-otel daemon exports them.
// A pipe keeps their order, and what is in it outlives Pi, which exits right after a `-p` run.
// The extension imports nothing, awaits nothing and returns nothing (so it changes no request,
// no message and no tool call), and gives up quietly when the hook cannot run: Pi never waits
// on it and never fails because of it. The command names the configuration file and carries
// no secret.
const COMMAND = /*albedo-otel:command*/["albedo-otel-hook", "--agent", "pi"];/*albedo-otel:command*/

// A hook that keeps dying is given up on after this many starts.
const MAX_STARTS = 3;

export default function albedoOtel(pi) {
  let hook = null;
  let starts = 0;

  const start = () => {
    if (hook || starts >= MAX_STARTS) return hook;
    starts += 1;
    try {
      const { spawn } = process.getBuiltinModule("node:child_process");
      const child = spawn(COMMAND[0], COMMAND.slice(1), {
        stdio: ["pipe", "ignore", "ignore"],
        detached: true,
      });
      const gone = () => {
        if (hook === child) hook = null;
      };
      child.on("error", () => {
        starts = MAX_STARTS; // not there: no use trying again
        gone();
      });
      child.on("exit", gone);
      child.stdin.on("error", gone);
      child.unref();
      hook = child;
    } catch {
      starts = MAX_STARTS;
    }
    return hook;
  };

  const send = (name, ctx, fields) => {
    try {
      const session = ctx?.sessionManager?.getSessionId?.();
      if (!session) return;
      const line = JSON.stringify({
        session_id: session,
        hook_event_name: name,
        at_ms: Date.now(),
        ...fields,
      });
      start()?.stdin.write(line + "\n");
    } catch {
      // Never Pi's problem.
    }
  };

  // What a model call's message says of the call, without its content.
  const call = (m) => ({
    provider: m.provider,
    model: m.model,
    responseModel: m.responseModel,
    responseId: m.responseId,
    usage: m.usage,
    stopReason: m.stopReason,
    errorMessage: m.errorMessage,
    timestamp: m.timestamp,
    durationMs: m.durationMs,
  });

  const on = (name, handler) => {
    try {
      pi.on(name, (event, ctx) => {
        try {
          handler(event ?? {}, ctx);
        } catch {
          // Never Pi's problem.
        }
      });
    } catch {
      // An older Pi without this event.
    }
  };

  on("session_start", (e, ctx) => send("session_start", ctx, { reason: e.reason, cwd: ctx?.cwd }));
  on("before_agent_start", (e, ctx) =>
    send("before_agent_start", ctx, {
      messageType: e.messageType,
      prompt: typeof e.prompt === "string" ? e.prompt : "",
    }),
  );
  on("before_provider_request", (_e, ctx) =>
    send("before_provider_request", ctx, { provider: ctx?.model?.provider, model: ctx?.model?.id }),
  );
  // The response's headers came: the assistant message begins.
  let streaming = false;
  on("message_start", (e, ctx) => {
    if (e.message?.role !== "assistant") return;
    streaming = true;
    send("message_start", ctx, { message: call(e.message) });
  });
  // Its first streamed chunk only: the rest (one a chunk) say nothing a trace needs.
  on("message_update", (e, ctx) => {
    if (!streaming || e.message?.role !== "assistant") return;
    streaming = false;
    send("message_update", ctx, {});
  });
  on("message_end", (e, ctx) => {
    if (e.message?.role !== "assistant") return;
    streaming = false;
    send("message_end", ctx, { message: call(e.message) });
  });
  on("tool_execution_start", (e, ctx) =>
    send("tool_execution_start", ctx, {
      toolCallId: e.toolCallId,
      toolName: e.toolName,
      args: e.args,
      parentToolCallId: e.parentToolCallId,
    }),
  );
  on("tool_execution_end", (e, ctx) =>
    send("tool_execution_end", ctx, {
      toolCallId: e.toolCallId,
      toolName: e.toolName,
      isError: e.isError === true,
      durationMs: e.durationMs,
      // Text only: an image's bytes say nothing a trace needs.
      content: Array.isArray(e.result?.content) ? e.result.content.filter((c) => c?.type === "text") : undefined,
      parentToolCallId: e.parentToolCallId,
    }),
  );
  on("agent_settled", (e, ctx) => send("agent_settled", ctx, { aborted: e.aborted === true }));
  on("session_shutdown", (e, ctx) => {
    send("session_shutdown", ctx, { reason: e.reason });
    // This runtime is done (Pi exits, or starts another session's): the hook's input closes,
    // and the hook says so for the session.
    try {
      hook?.stdin.end();
    } catch {
      // Never Pi's problem.
    }
    hook = null;
    starts = MAX_STARTS;
  });
}
