%% The extension's Erlang side on a real BEAM with the real binary (tests/sources/host/beam.rs runs this
%% and checks what the receiver got). It calls the typed functions albedo_otel.gleam calls,
%% with the terms Gleam passes: binaries for `String`, integers for `Int`, `none` | `{some, X}`
%% for `Option`, and it reads `take_note/1` as Gleam's `Result(String, Nil)`.
%% Prints "ALL OK" and halts 0, or names what failed.
-module(albedo_otel_ffi_tests).
-export([main/0]).

-define(CHECK(Cond, What), case Cond of true -> ok; _ -> fail(What) end).

main() ->
    try
        each_kind_is_one_protocol_line(),
        arguments_and_outputs_are_json_or_text(),
        nested_calls_and_a_child_session(),
        a_killed_exporter_is_a_note_and_is_restarted(),
        the_next_session_starts_a_new_port(),
        a_missing_binary_is_a_note_not_a_crash(),
        io:format("ALL OK~n"),
        halt(0)
    catch
        Class:Reason:Stack ->
            io:format("FAILED: ~p:~p~n~p~n", [Class, Reason, Stack]),
            halt(1)
    end.

fail(What) -> erlang:error({check_failed, What}).

t() -> erlang:system_time(millisecond).

-define(LS, <<"{\"command\":\"ls\"}">>).
-define(RUN_OUTPUT, <<"{\"exit_code\":0,\"timed_out\":false}">>).

calling(H, Id, Name, Within) ->
    albedo_otel_ffi:calling(H, Id, Name, ?LS, Within).

called(H, Id, Name, Within, Started) ->
    albedo_otel_ffi:called(H, Id, Name, ?LS, Within, ?RUN_OUTPUT, Started, t()).

prompted(H) ->
    albedo_otel_ffi:prompted(H, <<"go \"now\"\n">>).

%% ------------------------------------------------------------------ the lines, exactly

%% A handle whose owner is this process: the events come here instead of to a port.
captured(Fun) ->
    S = <<"unit">>,
    nil = Fun({albedo_otel, self(), S}),
    receive
        {event, S, Event} ->
            Fixed = case maps:is_key(<<"at_ms">>, Event) of
                true -> maps:put(<<"at_ms">>, 7, Event);
                false -> Event
            end,
            iolist_to_binary(albedo_otel_ffi:encode(maps:merge(#{<<"v">> => 1, <<"session">> => S}, Fixed)))
    after 1000 -> fail("no event")
    end.

expect(Fun, Line) ->
    Got = captured(Fun),
    ?CHECK(Got =:= Line, {expected, Line, got, Got}).

each_kind_is_one_protocol_line() ->
    expect(fun(H) -> albedo_otel_ffi:prompted(H, <<"go \"now\"\n">>) end,
        <<"{\"at_ms\":7,\"kind\":\"prompted\",\"session\":\"unit\",\"text\":\"go \\\"now\\\"\\n\",\"v\":1}">>),
    expect(fun(H) -> albedo_otel_ffi:calling(H, <<"c1">>, <<"run">>, ?LS, none) end,
        <<"{\"at_ms\":7,\"call\":{\"arguments\":{\"command\":\"ls\"},\"id\":\"c1\",\"name\":\"run\",\"within\":null},"
          "\"kind\":\"calling\",\"session\":\"unit\",\"v\":1}">>),
    expect(fun(H) -> albedo_otel_ffi:called(H, <<"c1a">>, <<"run">>, ?LS, {some, <<"c1">>}, ?RUN_OUTPUT, 10, 20) end,
        <<"{\"call\":{\"arguments\":{\"command\":\"ls\"},\"id\":\"c1a\",\"name\":\"run\",\"within\":\"c1\"},"
          "\"finished_ms\":20,\"kind\":\"called\",\"output\":{\"exit_code\":0,\"timed_out\":false},"
          "\"session\":\"unit\",\"started_ms\":10,\"v\":1}">>),
    expect(fun(H) -> albedo_otel_ffi:stopping(H, <<"done">>, 2) end,
        <<"{\"at_ms\":7,\"held\":2,\"kind\":\"stopping\",\"reply\":\"done\",\"session\":\"unit\",\"v\":1}">>),
    expect(fun(H) -> albedo_otel_ffi:call_sent(H, <<"claude-x">>, 10, 5, 100, 200) end,
        <<"{\"finished_ms\":200,\"kind\":\"call_sent\",\"request\":{\"model\":\"claude-x\"},\"session\":\"unit\","
          "\"started_ms\":100,\"usage\":{\"input_tokens\":10,\"output_tokens\":5},\"v\":1}">>),
    expect(fun(H) -> albedo_otel_ffi:turn_ended(H) end,
        <<"{\"at_ms\":7,\"kind\":\"turn_ended\",\"session\":\"unit\",\"v\":1}">>),
    %% Gleam reads take_note/1 as Result(String, Nil): {ok, Text} or {error, nil}, nothing else.
    ?CHECK(albedo_otel_ffi:take_note({albedo_otel, self(), <<"nobody">>}) =:= {error, nil}, "no note is {error, nil}"),
    io:format("ok each kind is one protocol line~n").

arguments_and_outputs_are_json_or_text() ->
    Output = fun(Text) ->
        Line = captured(fun(H) -> albedo_otel_ffi:called(H, <<"c">>, <<"code">>, <<"{}">>, none, Text, 1, 2) end),
        [_, After] = binary:split(Line, <<"\"output\":">>),
        [Value, _] = binary:split(After, <<",\"session\":">>),
        ?CHECK(binary:match(Line, <<"\n">>) =:= nomatch, {"one line", Line}),
        Value
    end,
    ?CHECK(Output(<<"test parser::trims ... FAILED\n1 replacement">>)
           =:= <<"\"test parser::trims ... FAILED\\n1 replacement\"">>, "plain text is a string"),
    ?CHECK(Output(<<"{\"exit_code\":101,\"timed_out\":false}">>)
           =:= <<"{\"exit_code\":101,\"timed_out\":false}">>, "JSON text is JSON"),
    ?CHECK(Output(<<"{\n  \"a\": [1, -2.5e+3, true, null, \"\\u00e9\"]\n}\n">>)
           =:= <<"{   \"a\": [1, -2.5e+3, true, null, \"\\u00e9\"] } ">>, "pretty JSON stays one line"),
    [?CHECK(Output(Bad) =:= iolist_to_binary(albedo_otel_ffi:encode(Bad)), {"not JSON is a string", Bad})
     || Bad <- [<<>>, <<"{\"a\":}">>, <<"{\"a\":1,}">>, <<"01">>, <<"1.">>, <<"-">>, <<"\"x">>,
                <<"[1] [2]">>, <<"\"tab\there\"">>, <<"truex">>, <<"\"\\q\"">>]],
    ?CHECK(Output(<<"42">>) =:= <<"42">>, "a number is JSON"),
    io:format("ok arguments and outputs are JSON or text~n").

%% ------------------------------------------------------------------ through the real binary

wait_for(What, Fun, Deadline) ->
    case Fun() of
        false ->
            case t() > Deadline of
                true -> fail(What);
                false -> receive after 20 -> ok end, wait_for(What, Fun, Deadline)
            end;
        Value -> Value
    end.

note(H) ->
    case albedo_otel_ffi:take_note(H) of {ok, N} -> N; {error, nil} -> false end.

nested_calls_and_a_child_session() ->
    A = albedo_otel_ffi:start(<<"beam-a">>, none),
    prompted(A),
    T0 = t(),
    calling(A, <<"c1">>, <<"code">>, none),
    calling(A, <<"c1a">>, <<"run">>, {some, <<"c1">>}),
    called(A, <<"c1a">>, <<"run">>, {some, <<"c1">>}, T0),
    calling(A, <<"sp">>, <<"agents.spawn">>, {some, <<"c1">>}),
    Kid = albedo_otel_ffi:start(<<"beam-a-child">>, {some, {<<"beam-a">>, <<"sp">>}}),
    {albedo_otel, OwnerA, _} = A,
    {albedo_otel, OwnerKid, _} = Kid,
    ?CHECK(OwnerKid =:= OwnerA, "a child session joins its parent's exporter"),
    prompted(Kid),
    T1 = t(),
    called(Kid, <<"k1">>, <<"files.write">>, none, T1),
    albedo_otel_ffi:turn_ended(Kid),
    albedo_otel_ffi:close(Kid),
    called(A, <<"sp">>, <<"agents.spawn">>, {some, <<"c1">>}, T0),
    albedo_otel_ffi:called(A, <<"c1">>, <<"code">>, <<"{\"code\":\"run('ls')\"}">>, none,
                           <<"listing done">>, T0, t()),
    albedo_otel_ffi:call_sent(A, <<"claude-x">>, 10, 5, T0, t()),
    albedo_otel_ffi:stopping(A, <<"done">>, 0),
    albedo_otel_ffi:turn_ended(A),
    Stats = albedo_otel_ffi:stats(A),
    ?CHECK(maps:get(dropped, Stats) =:= 0, "nothing dropped"),
    albedo_otel_ffi:close(A),
    io:format("ok nested calls and a child session~n").

a_killed_exporter_is_a_note_and_is_restarted() ->
    B = albedo_otel_ffi:start(<<"beam-b">>, none),
    prompted(B),
    T0 = t(),
    called(B, <<"b1">>, <<"run">>, none, T0),
    albedo_otel_ffi:turn_ended(B),
    OsPid = wait_for("the exporter to start", fun() -> albedo_otel_ffi:os_pid(B) end, t() + 10000),
    os:cmd("kill -9 " ++ integer_to_list(OsPid)),
    Note = wait_for("a note about the exit", fun() -> note(B) end, t() + 10000),
    ?CHECK(binary:match(Note, <<"exited with status">>) =/= nomatch, Note),
    ?CHECK(albedo_otel_ffi:take_note(B) =:= {error, nil}, "a note is given once"),
    {albedo_otel, Owner, _} = B,
    ?CHECK(is_process_alive(Owner), "the owner survives its exporter"),
    NewPid = wait_for("a restarted exporter", fun() ->
        case albedo_otel_ffi:os_pid(B) of undefined -> false; OsPid -> false; P -> P end
    end, t() + 10000),
    ?CHECK(NewPid =/= OsPid, "a new process"),
    %% The session goes on with the new exporter.
    prompted(B),
    T1 = t(),
    called(B, <<"b2">>, <<"run">>, none, T1),
    albedo_otel_ffi:turn_ended(B),
    ?CHECK(maps:get(restarts, albedo_otel_ffi:stats(B)) =:= 1, "restarted once"),
    albedo_otel_ffi:close(B),
    put(last_os_pid, NewPid),
    io:format("ok a killed exporter is a note and is restarted~n").

the_next_session_starts_a_new_port() ->
    C = albedo_otel_ffi:start(<<"beam-c">>, none),
    prompted(C),
    T0 = t(),
    called(C, <<"c1">>, <<"run">>, none, T0),
    albedo_otel_ffi:turn_ended(C),
    OsPid = wait_for("the exporter to start", fun() -> albedo_otel_ffi:os_pid(C) end, t() + 10000),
    ?CHECK(OsPid =/= get(last_os_pid), "a new exporter for a new session"),
    albedo_otel_ffi:close(C),
    io:format("ok the next session starts a new port~n").

a_missing_binary_is_a_note_not_a_crash() ->
    %% start/2 reads ALBEDO_OTEL_BIN when it is called.
    Saved = os:getenv("ALBEDO_OTEL_BIN"),
    true = os:putenv("ALBEDO_OTEL_BIN", "/nonexistent/albedo-otel"),
    D = albedo_otel_ffi:start(<<"beam-d">>, none),
    case Saved of false -> os:unsetenv("ALBEDO_OTEL_BIN"); _ -> os:putenv("ALBEDO_OTEL_BIN", Saved) end,
    prompted(D),
    Note = wait_for("a note", fun() -> note(D) end, t() + 10000),
    ?CHECK(binary:match(Note, <<"cannot start">>) =/= nomatch, Note),
    [prompted(D) || _ <- lists:seq(1, 100)],
    {albedo_otel, Owner, _} = D,
    ?CHECK(is_process_alive(Owner), "the owner lives"),
    albedo_otel_ffi:close(D),
    io:format("ok a missing binary is a note, not a crash~n").
