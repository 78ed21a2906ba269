%% The extension's Erlang side on a real BEAM with the real binary (tests/beam.rs runs this
%% and checks what the receiver got). Prints "ALL OK" and halts 0, or names what failed.
-module(albedo_otel_ffi_tests).
-export([main/0]).

-define(CHECK(Cond, What), case Cond of true -> ok; _ -> fail(What) end).

main() ->
    try
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

call(Id, Name, Within) ->
    #{<<"id">> => Id, <<"name">> => Name,
      <<"arguments">> => albedo_otel_ffi:raw(<<"{\"command\":\"ls\"}">>),
      <<"within">> => case Within of undefined -> null; W -> W end}.

calling(O, S, Id, Name, Within) ->
    albedo_otel_ffi:send(O, S, #{<<"kind">> => <<"calling">>, <<"at_ms">> => t(), <<"call">> => call(Id, Name, Within)}).

called(O, S, Id, Name, Within, Started) ->
    albedo_otel_ffi:send(O, S, #{<<"kind">> => <<"called">>, <<"call">> => call(Id, Name, Within),
        <<"output">> => albedo_otel_ffi:raw(<<"{\"exit_code\":0,\"timed_out\":false}">>),
        <<"started_ms">> => Started, <<"finished_ms">> => t()}).

prompted(O, S) ->
    albedo_otel_ffi:send(O, S, #{<<"kind">> => <<"prompted">>, <<"at_ms">> => t(), <<"text">> => <<"go \"now\"\n">>}).

turn_ended(O, S) ->
    albedo_otel_ffi:send(O, S, #{<<"kind">> => <<"turn_ended">>, <<"at_ms">> => t(), <<"reason">> => <<"end_turn">>}).

wait_for(_What, Fun, Deadline) ->
    case Fun() of
        false ->
            case t() > Deadline of
                true -> fail(_What);
                false -> receive after 20 -> ok end, wait_for(_What, Fun, Deadline)
            end;
        Value -> Value
    end.

nested_calls_and_a_child_session() ->
    S = <<"beam-a">>,
    A = albedo_otel_ffi:start(S, #{<<"agent">> => <<"albedo">>, <<"model">> => <<"claude-x">>, <<"workspace">> => <<"/w">>}),
    prompted(A, S),
    T0 = t(),
    calling(A, S, <<"c1">>, <<"code">>, undefined),
    calling(A, S, <<"c1a">>, <<"run">>, <<"c1">>),
    called(A, S, <<"c1a">>, <<"run">>, <<"c1">>, T0),
    calling(A, S, <<"sp">>, <<"agents.spawn">>, <<"c1">>),
    Kid = <<"beam-a-child">>,
    Child = albedo_otel_ffi:start(Kid, #{<<"agent">> => <<"helper">>, <<"parent_session">> => S, <<"parent_call">> => <<"sp">>}),
    ?CHECK(Child =:= A, "a child session joins its parent's exporter"),
    prompted(Child, Kid),
    T1 = t(),
    called(Child, Kid, <<"k1">>, <<"files.write">>, undefined, T1),
    turn_ended(Child, Kid),
    albedo_otel_ffi:close(Child, Kid),
    called(A, S, <<"sp">>, <<"agents.spawn">>, <<"c1">>, T0),
    called(A, S, <<"c1">>, <<"code">>, undefined, T0),
    albedo_otel_ffi:send(A, S, #{<<"kind">> => <<"call_sent">>,
        <<"request">> => #{<<"model">> => <<"claude-x">>},
        <<"usage">> => #{<<"input_tokens">> => 10, <<"output_tokens">> => 5, <<"cache_read_tokens">> => 100},
        <<"started_ms">> => T0, <<"finished_ms">> => t()}),
    albedo_otel_ffi:send(A, S, #{<<"kind">> => <<"stopping">>, <<"at_ms">> => t(), <<"reply">> => <<"done">>, <<"held">> => 0}),
    turn_ended(A, S),
    Stats = albedo_otel_ffi:stats(A),
    ?CHECK(maps:get(dropped, Stats) =:= 0, "nothing dropped"),
    albedo_otel_ffi:close(A, S),
    io:format("ok nested calls and a child session~n").

a_killed_exporter_is_a_note_and_is_restarted() ->
    S = <<"beam-b">>,
    B = albedo_otel_ffi:start(S, #{}),
    prompted(B, S),
    T0 = t(),
    called(B, S, <<"b1">>, <<"run">>, undefined, T0),
    turn_ended(B, S),
    OsPid = wait_for("the exporter to start", fun() -> albedo_otel_ffi:os_pid(B) end, t() + 10000),
    os:cmd("kill -9 " ++ integer_to_list(OsPid)),
    Note = wait_for("a note about the exit", fun() ->
        case albedo_otel_ffi:take_note(S) of {ok, N} -> N; none -> false end
    end, t() + 10000),
    ?CHECK(binary:match(Note, <<"exited with status">>) =/= nomatch, Note),
    ?CHECK(albedo_otel_ffi:take_note(S) =:= none, "a note is given once"),
    ?CHECK(is_process_alive(B), "the owner survives its exporter"),
    NewPid = wait_for("a restarted exporter", fun() ->
        case albedo_otel_ffi:os_pid(B) of undefined -> false; OsPid -> false; P -> P end
    end, t() + 10000),
    ?CHECK(NewPid =/= OsPid, "a new process"),
    %% The session goes on with the new exporter.
    prompted(B, S),
    T1 = t(),
    called(B, S, <<"b2">>, <<"run">>, undefined, T1),
    turn_ended(B, S),
    ?CHECK(maps:get(restarts, albedo_otel_ffi:stats(B)) =:= 1, "restarted once"),
    albedo_otel_ffi:close(B, S),
    put(last_os_pid, NewPid),
    io:format("ok a killed exporter is a note and is restarted~n").

the_next_session_starts_a_new_port() ->
    S = <<"beam-c">>,
    C = albedo_otel_ffi:start(S, #{}),
    prompted(C, S),
    T0 = t(),
    called(C, S, <<"c1">>, <<"run">>, undefined, T0),
    turn_ended(C, S),
    OsPid = wait_for("the exporter to start", fun() -> albedo_otel_ffi:os_pid(C) end, t() + 10000),
    ?CHECK(OsPid =/= get(last_os_pid), "a new exporter for a new session"),
    albedo_otel_ffi:close(C, S),
    io:format("ok the next session starts a new port~n").

a_missing_binary_is_a_note_not_a_crash() ->
    S = <<"beam-d">>,
    D = albedo_otel_ffi:start(S, #{<<"executable">> => <<"/nonexistent/albedo-otel">>}),
    prompted(D, S),
    Note = wait_for("a note", fun() ->
        case albedo_otel_ffi:take_note(S) of {ok, N} -> N; none -> false end
    end, t() + 10000),
    ?CHECK(binary:match(Note, <<"cannot start">>) =/= nomatch, Note),
    [prompted(D, S) || _ <- lists:seq(1, 100)],
    ?CHECK(is_process_alive(D), "the owner lives"),
    albedo_otel_ffi:close(D, S),
    io:format("ok a missing binary is a note, not a crash~n").
