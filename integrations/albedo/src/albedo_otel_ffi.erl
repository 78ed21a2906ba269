%% The Erlang side of albedo's albedo-otel extension: the exporter port and the JSON lines.
%%
%% albedo_otel.gleam calls one typed function per event kind, with Gleam strings (binaries),
%% integers and options (`none` | `{some, X}`); so does the test, on a real BEAM. Nothing here
%% reads albedo's types. One process per exporter owns an `albedo-otel run` port. A session's
%% hook and observe send it messages and return at once; nothing here ever blocks or crashes the
%% session's process:
%%
%% - a full port (the exporter is slow) drops the line and counts it (`nosuspend`);
%% - an exporter that exits, or a binary that cannot be found, becomes one note for the
%%   session, and the port is started again with backoff; lines sent meanwhile wait in a
%%   bounded buffer;
%% - a child session that names its parent joins the parent's exporter, so its turns can nest
%%   under the spawn call's span, which lives in that exporter's memory.
-module(albedo_otel_ffi).

-export([start/2, prompted/2, calling/5, called/8, stopping/3, call_sent/6, turn_ended/1,
         close/1, take_note/1]).
-export([stats/1, os_pid/1, encode/1, json_or_text/1]).

-define(TABLE, albedo_otel_sessions).
-define(BUFFER_MAX, 10000).
-define(BACKOFF_MIN, 100).
-define(BACKOFF_MAX, 30000).

%% ------------------------------------------------------------------ API (typed, for Gleam)

%% Starts (or joins) the exporter for the session `Session` (a binary). `Parent` is `none`, or
%% `{some, {ParentSession, SpawnCallId}}` for a child session started by an `agents.spawn` call.
%% The executable is ALBEDO_OTEL_BIN, else `albedo-otel` on PATH, looked up now. Returns the
%% session's handle (Gleam's `Exporter`), which every other call takes.
start(Session, Parent) when is_binary(Session) ->
    ensure_table(),
    Meta = case Parent of
        {some, {PS, PC}} when is_binary(PS), is_binary(PC) -> #{parent => {PS, PC}};
        none -> #{}
    end,
    Owner = case parent_owner(Meta) of
        {ok, Pid} ->
            Pid ! {join, Session, Meta},
            Pid;
        none ->
            Exe = executable(),
            spawn(fun() -> init(Session, Meta, Exe) end)
    end,
    ets:insert(?TABLE, {{owner, Session}, Owner}),
    {albedo_otel, Owner, Session}.

%% albedo's `Prompted(text)`.
prompted(H, Text) when is_binary(Text) ->
    send(H, #{<<"kind">> => <<"prompted">>, <<"at_ms">> => now_ms(), <<"text">> => Text}).

%% `Calling(call)`: the call's id, name, arguments (text) and `within` (`none` | `{some, Id}`).
calling(H, Id, Name, Arguments, Within) ->
    send(H, #{<<"kind">> => <<"calling">>, <<"at_ms">> => now_ms(),
              <<"call">> => call(Id, Name, Arguments, Within)}).

%% `Called(call, output, started_ms, finished_ms)`.
called(H, Id, Name, Arguments, Within, Output, StartedMs, FinishedMs)
        when is_binary(Output), is_integer(StartedMs), is_integer(FinishedMs) ->
    send(H, #{<<"kind">> => <<"called">>, <<"call">> => call(Id, Name, Arguments, Within),
              <<"output">> => json_or_text(Output),
              <<"started_ms">> => StartedMs, <<"finished_ms">> => FinishedMs}).

%% `Stopping(reply, held)`.
stopping(H, Reply, Held) when is_binary(Reply), is_integer(Held) ->
    send(H, #{<<"kind">> => <<"stopping">>, <<"at_ms">> => now_ms(), <<"reply">> => Reply,
              <<"held">> => Held}).

%% observe's `CallSent`: the model, the token counts and the call's start and end.
call_sent(H, Model, InputTokens, OutputTokens, StartedMs, FinishedMs)
        when is_binary(Model), is_integer(InputTokens), is_integer(OutputTokens),
             is_integer(StartedMs), is_integer(FinishedMs) ->
    send(H, #{<<"kind">> => <<"call_sent">>, <<"request">> => #{<<"model">> => Model},
              <<"usage">> => #{<<"input_tokens">> => InputTokens,
                               <<"output_tokens">> => OutputTokens},
              <<"started_ms">> => StartedMs, <<"finished_ms">> => FinishedMs}).

%% observe's `TurnEnded`.
turn_ended(H) ->
    send(H, #{<<"kind">> => <<"turn_ended">>, <<"at_ms">> => now_ms()}).

%% The session is over: its open turn is exported; the last session closes the port, so the
%% exporter flushes and exits.
close({albedo_otel, Owner, Session}) ->
    Owner ! {close, Session},
    catch ets:delete(?TABLE, {owner, Session}),
    nil.

%% A note for the user about the session's exporter, once: Gleam's `Result(String, Nil)`.
take_note({albedo_otel, _, Session}) ->
    case catch ets:take(?TABLE, {note, Session}) of
        [{_, Text}] -> {ok, Text};
        _ -> {error, nil}
    end.

%% ------------------------------------------------------------------ for tests and people

%% Counters of the session's owner: a map.
stats({albedo_otel, Owner, _}) ->
    Ref = make_ref(),
    Owner ! {stats, self(), Ref},
    receive {Ref, Stats} -> Stats after 5000 -> #{} end.

%% The OS pid of the exporter process, or undefined.
os_pid(H) ->
    maps:get(os_pid, stats(H), undefined).

%% ------------------------------------------------------------------ events

%% Hands one event to the owner. Never blocks.
send({albedo_otel, Owner, Session}, Event) ->
    Owner ! {event, Session, Event},
    nil.

call(Id, Name, Arguments, Within) when is_binary(Id), is_binary(Name), is_binary(Arguments) ->
    #{<<"id">> => Id, <<"name">> => Name, <<"arguments">> => json_or_text(Arguments),
      <<"within">> => case Within of {some, W} when is_binary(W) -> W; none -> null end}.

%% A call's arguments and a tool's output arrive as text: text that is one JSON value is
%% embedded as it is (`run`'s `{"exit_code", "timed_out"}`), any other text as a JSON string,
%% so a line is always valid JSON. A line break in JSON text is whitespace (JSON strings cannot
%% hold one), so it becomes a space: a line stays one line.
json_or_text(Text) ->
    case is_json(Text) of
        true -> {raw, binary:replace(Text, [<<"\n">>, <<"\r">>], <<" ">>, [global])};
        false -> Text
    end.

%% ------------------------------------------------------------------ registry

ensure_table() ->
    case ets:whereis(?TABLE) of
        undefined ->
            Self = self(),
            %% The table outlives any session: a small process of its own owns it.
            Pid = spawn(fun() ->
                try ets:new(?TABLE, [named_table, public, set]) of
                    _ -> Self ! {table, self()}, receive stop -> ok end
                catch error:badarg -> Self ! {table, self()}
                end
            end),
            receive {table, Pid} -> ok after 5000 -> ok end;
        _ ->
            ok
    end.

parent_owner(Meta) ->
    case maps:get(parent, Meta, undefined) of
        undefined -> none;
        {Parent, _} ->
            case ets:lookup(?TABLE, {owner, Parent}) of
                [{_, Pid}] -> case is_process_alive(Pid) of true -> {ok, Pid}; false -> none end;
                [] -> none
            end
    end.

%% ------------------------------------------------------------------ the owner

-record(st, {
    exe,
    port = undefined,
    os_pid = undefined,
    sessions = #{},          % Session => Meta, in the order they came
    order = [],
    buffer = queue:new(),
    buffered = 0,
    backoff = ?BACKOFF_MIN,
    restarts = 0,
    dropped = 0,
    sent = 0,
    last_output = <<>>,
    closing = false
}).

init(Session, Meta, Exe) ->
    process_flag(trap_exit, true),
    St0 = #st{exe = Exe, sessions = #{Session => Meta}, order = [Session]},
    loop(open(St0)).

executable() ->
    case os:getenv("ALBEDO_OTEL_BIN") of
        false -> os:find_executable("albedo-otel");
        "" -> os:find_executable("albedo-otel");
        Path -> Path
    end.

open(St = #st{exe = false}) ->
    note_all(St, <<"albedo-otel: the albedo-otel executable was not found (set ALBEDO_OTEL_BIN or put it on PATH); traces are not exported">>),
    retry_later(St);
open(St = #st{exe = Exe}) ->
    try open_port({spawn_executable, Exe}, [binary, exit_status, use_stdio, stderr_to_stdout, hide, {args, ["run"]}]) of
        Port ->
            {os_pid, OsPid} = erlang:port_info(Port, os_pid),
            St1 = St#st{port = Port, os_pid = OsPid},
            %% A new exporter knows nothing yet: each session introduces itself again.
            St2 = lists:foldl(fun(S, Acc) -> write(session_line(S, maps:get(S, Acc#st.sessions)), Acc) end,
                              St1, St1#st.order),
            flush_buffer(St2)
    catch
        error:Reason ->
            note_all(St, iolist_to_binary(io_lib:format("albedo-otel: cannot start ~s: ~p", [Exe, Reason]))),
            retry_later(St)
    end.

retry_later(St = #st{backoff = B}) ->
    erlang:send_after(B, self(), restart),
    St#st{port = undefined, os_pid = undefined, backoff = min(B * 2, ?BACKOFF_MAX)}.

loop(St) ->
    receive
        {event, Session, Event} ->
            loop(write(event_line(Session, Event), St));
        {join, Session, Meta} ->
            St1 = St#st{sessions = maps:put(Session, Meta, St#st.sessions), order = St#st.order ++ [Session]},
            loop(write(session_line(Session, Meta), St1));
        {close, Session} ->
            St1 = write(event_line(Session, #{<<"kind">> => <<"closed">>, <<"at_ms">> => now_ms()}), St),
            Order = lists:delete(Session, St1#st.order),
            St2 = St1#st{order = Order, sessions = maps:remove(Session, St1#st.sessions)},
            case Order of
                [] -> finish(St2);
                _ -> loop(St2)
            end;
        {Port, {data, Data}} when Port =:= St#st.port ->
            %% The exporter's log (stderr). The last of it explains an exit.
            loop(St#st{last_output = last_line(<<(St#st.last_output)/binary, Data/binary>>)});
        {Port, {exit_status, Status}} when Port =:= St#st.port ->
            Why = case St#st.last_output of <<>> -> <<>>; Last -> <<": ", Last/binary>> end,
            note_all(St, iolist_to_binary(io_lib:format("albedo-otel exited with status ~b~s; restarting it", [Status, Why]))),
            loop(retry_later(St#st{port = undefined, os_pid = undefined, restarts = St#st.restarts + 1}));
        {'EXIT', _, _} ->
            loop(St);
        restart when St#st.port =:= undefined ->
            loop(open(St));
        restart ->
            loop(St);
        {stats, From, Ref} ->
            From ! {Ref, #{os_pid => St#st.os_pid, restarts => St#st.restarts, dropped => St#st.dropped,
                           sent => St#st.sent, buffered => St#st.buffered, sessions => St#st.order}},
            loop(St)
    end.

finish(St = #st{port = undefined}) ->
    St;
finish(St = #st{port = Port}) ->
    %% Closing stdin is the exporter's EOF: it flushes, within its deadline, and exits.
    catch port_close(Port),
    St.

last_line(Bin) ->
    Lines = [L || L <- binary:split(Bin, <<"\n">>, [global]), L =/= <<>>],
    case Lines of [] -> <<>>; _ -> binary:part(lists:last(Lines), 0, min(300, byte_size(lists:last(Lines)))) end.

note_all(St, Text) ->
    [catch ets:insert(?TABLE, {{note, S}, Text}) || S <- St#st.order],
    ok.

%% Writes a line, or keeps it for the next port, or drops it: never waits.
write(Line, St = #st{port = undefined}) ->
    buffer(Line, St);
write(Line, St = #st{port = Port}) ->
    try erlang:port_command(Port, Line, [nosuspend]) of
        true -> St#st{sent = St#st.sent + 1};
        false -> St#st{dropped = St#st.dropped + 1}
    catch
        error:badarg -> buffer(Line, St#st{port = undefined})
    end.

buffer(Line, St = #st{buffered = N}) when N >= ?BUFFER_MAX ->
    {_, Q} = queue:out(St#st.buffer),
    St#st{buffer = queue:in(Line, Q), dropped = St#st.dropped + 1};
buffer(Line, St) ->
    St#st{buffer = queue:in(Line, St#st.buffer), buffered = St#st.buffered + 1}.

flush_buffer(St = #st{buffer = Q}) ->
    Lines = queue:to_list(Q),
    lists:foldl(fun write/2, St#st{buffer = queue:new(), buffered = 0, backoff = ?BACKOFF_MIN}, Lines).

now_ms() -> erlang:system_time(millisecond).

session_line(Session, Meta) ->
    Base = #{<<"kind">> => <<"session">>, <<"at_ms">> => now_ms()},
    Line = case maps:get(parent, Meta, undefined) of
        undefined -> Base;
        {PS, PC} -> maps:put(<<"parent">>, #{<<"session">> => PS, <<"call">> => PC}, Base)
    end,
    event_line(Session, Line).

event_line(Session, Event) ->
    [encode(maps:merge(#{<<"v">> => 1, <<"session">> => Session}, Event)), $\n].

%% ------------------------------------------------------------------ JSON

%% Maps (binary or atom keys), lists, binaries (UTF-8 strings), integers, floats, true, false,
%% null (also Gleam's nil), and {raw, JsonText}.
encode(Map) when is_map(Map) ->
    Pairs = [[encode_string(key(K)), $:, encode(V)] || {K, V} <- lists:sort(maps:to_list(Map))],
    [${, join(Pairs), $}];
encode(List) when is_list(List) ->
    [$[, join([encode(V) || V <- List]), $]];
encode({raw, Json}) -> Json;
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(null) -> <<"null">>;
encode(nil) -> <<"null">>;
encode(undefined) -> <<"null">>;
encode(N) when is_integer(N) -> integer_to_binary(N);
encode(F) when is_float(F) -> float_to_binary(F, [short]);
encode(B) when is_binary(B) -> encode_string(B);
encode(A) when is_atom(A) -> encode_string(atom_to_binary(A, utf8)).

key(K) when is_binary(K) -> K;
key(K) when is_atom(K) -> atom_to_binary(K, utf8).

join([]) -> [];
join([H | T]) -> [H | [[$, | X] || X <- T]].

encode_string(B) ->
    [$", escape(B, <<>>), $"].

escape(<<>>, Acc) -> Acc;
escape(<<$", R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\\"">>);
escape(<<$\\, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\\\">>);
escape(<<$\n, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\n">>);
escape(<<$\r, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\r">>);
escape(<<$\t, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\t">>);
escape(<<C, R/binary>>, Acc) when C < 16#20 ->
    escape(R, <<Acc/binary, (list_to_binary(io_lib:format("\\u~4.16.0b", [C])))/binary>>);
escape(<<C, R/binary>>, Acc) -> escape(R, <<Acc/binary, C>>).

%% ------------------------------------------------------------------ is it JSON?

%% True when `Text` is exactly one JSON value (RFC 8259), whitespace around it allowed.
is_json(Text) when is_binary(Text) ->
    try ws(value(ws(Text))) =:= <<>>
    catch error:_ -> false
    end.

ws(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> ws(R);
ws(B) -> B.

value(<<${, R/binary>>) -> object(ws(R));
value(<<$[, R/binary>>) -> array(ws(R));
value(<<$", R/binary>>) -> string(R);
value(<<"true", R/binary>>) -> R;
value(<<"false", R/binary>>) -> R;
value(<<"null", R/binary>>) -> R;
value(<<$-, R/binary>>) -> int(R);
value(B) -> int(B).

object(<<$}, R/binary>>) -> R;
object(B) -> members(B).

members(<<$", R/binary>>) ->
    <<$:, R1/binary>> = ws(string(R)),
    case ws(value(ws(R1))) of
        <<$,, R2/binary>> -> members(ws(R2));
        <<$}, R2/binary>> -> R2
    end.

array(<<$], R/binary>>) -> R;
array(B) -> elements(B).

elements(B) ->
    case ws(value(B)) of
        <<$,, R/binary>> -> elements(ws(R));
        <<$], R/binary>> -> R
    end.

string(<<$", R/binary>>) -> R;
string(<<$\\, C, R/binary>>) when C =:= $"; C =:= $\\; C =:= $/; C =:= $b; C =:= $f;
                                  C =:= $n; C =:= $r; C =:= $t -> string(R);
string(<<$\\, $u, A, B, C, D, R/binary>>) ->
    true = lists:all(fun is_hex/1, [A, B, C, D]),
    string(R);
string(<<C, R/binary>>) when C >= 16#20, C =/= $\\ -> string(R).

is_hex(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f) orelse (C >= $A andalso C =< $F).

int(<<$0, R/binary>>) -> frac(R);
int(<<C, R/binary>>) when C >= $1, C =< $9 -> frac(digits(R)).

frac(<<$., C, R/binary>>) when C >= $0, C =< $9 -> exponent(digits(R));
frac(B) -> exponent(B).

exponent(<<E, S, R/binary>>) when (E =:= $e orelse E =:= $E), (S =:= $+ orelse S =:= $-) -> digits1(R);
exponent(<<E, R/binary>>) when E =:= $e; E =:= $E -> digits1(R);
exponent(B) -> B.

digits1(<<C, R/binary>>) when C >= $0, C =< $9 -> digits(R).

digits(<<C, R/binary>>) when C >= $0, C =< $9 -> digits(R);
digits(B) -> B.
