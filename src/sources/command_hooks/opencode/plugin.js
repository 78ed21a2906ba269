// albedo-otel's opencode plugin: opencode's turns, model calls and tool calls as OpenTelemetry
// traces. Written by `albedo-otel install opencode`, removed by `albedo-otel uninstall opencode`;
// Kilo Code, a fork of opencode with its plugin API, takes the same file (`install kilo`).
//
// It hands the events that make a trace to one `albedo-otel-hook` process, a JSON line each,
// through that process's stdin: the hook journals them and an albedo-otel daemon exports them.
// A pipe keeps their order, and what is in it outlives opencode, which exits right after a
// `run`. The plugin imports nothing (opencode installs a plugin's imports from npm first), awaits
// nothing, and gives up quietly when the hook cannot run: opencode never waits on it and never
// fails because of it. The command names the configuration file and carries no secret.
const COMMAND = /*albedo-otel:command*/["albedo-otel-hook", "--agent", "opencode"];/*albedo-otel:command*/

// The bus events that make a trace; the rest (text deltas above all) are left here.
const KEEP = new Set(["session.created", "message.updated", "message.part.updated", "session.idle"]);
// A hook that keeps dying is given up on after this many starts.
const MAX_STARTS = 3;

export const AlbedoOtel = async () => {
  let hook = null;
  let starts = 0;
  // Sub-agents' sessions, each with the session that started it: their events go to the top
  // session's journal, in one order with the call that started them.
  const parents = new Map();
  const top = (id) => {
    let at = id;
    for (let i = 0; i < 16 && parents.has(at); i++) at = parents.get(at);
    return at;
  };
  // The last status sent for each tool part: opencode repeats a running call's part as its
  // output grows, which says nothing new.
  const toolStatus = new Map();

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

  const send = (name, sessionID, properties) => {
    if (!sessionID) return;
    try {
      const line = JSON.stringify({
        session_id: top(sessionID),
        session: sessionID,
        hook_event_name: name,
        at_ms: Date.now(),
        properties,
      });
      start()?.stdin.write(line + "\n");
    } catch {
      // Never opencode's problem.
    }
  };

  const keep = (event) => {
    if (!KEEP.has(event.type)) return false;
    const part = event.properties?.part;
    if (event.type !== "message.part.updated") return true;
    if (part?.type === "step-start") return true;
    if (part?.type !== "tool") return false;
    const status = part.state?.status;
    if (status === "pending" || toolStatus.get(part.id) === status) return false;
    if (status === "completed" || status === "error") toolStatus.delete(part.id);
    else toolStatus.set(part.id, status);
    return true;
  };

  return {
    "chat.message": async (input, output) => {
      const text = (output?.parts ?? [])
        .filter((p) => p?.type === "text" && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n");
      send("chat.message", input?.sessionID ?? output?.message?.sessionID, {
        message: output?.message,
        text,
      });
    },
    event: async ({ event }) => {
      if (!event || !keep(event)) return;
      const p = event.properties ?? {};
      if (event.type === "session.created" && p.info?.id && p.info?.parentID) {
        parents.set(p.info.id, p.info.parentID);
      }
      send(event.type, p.sessionID ?? p.info?.sessionID ?? p.part?.sessionID ?? p.info?.id, p);
    },
  };
};
