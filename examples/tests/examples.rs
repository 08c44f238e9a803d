//! Runs every example program and checks the behaviour it prints: the examples are
//! documentation, and this keeps what they show true.

use std::process::Command;

/// Run an example binary; it must exit successfully. Returns its stdout.
fn run(bin: &str) -> String {
    let out = Command::new(bin)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{bin} failed with {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Assert that `line` is one of the output's lines, exactly.
#[track_caller]
fn has_line(output: &str, line: &str) {
    assert!(
        output.lines().any(|l| l == line),
        "missing line:\n{line}\nin output:\n{output}"
    );
}

#[test]
fn first_tool_shows_the_schema_and_runs_calls_end_to_end() {
    let out = run(env!("CARGO_BIN_EXE_first_tool"));
    has_line(&out, "name: greet");
    has_line(&out, "description: Greet someone by name.");
    has_line(
        &out,
        r#"parameters: {"type":"object","properties":{"name":{"type":"string","description":"Who to greet."},"excitement":{"type":"integer","description":"How many exclamation marks to add (default 1).","minimum":0,"maximum":255}},"required":["name"]}"#,
    );
    has_line(&out, "success: true");
    has_line(&out, "content: Hello, Ada!!! (call call-1)");
    has_line(
        &out,
        r#"envelope: {"isError":false,"value":"Hello, Ada!!! (call call-1)","content":[{"type":"text","text":"Hello, Ada!!! (call call-1)"}]}"#,
    );
    has_line(
        &out,
        r#"call-2: code=INVALID_ARGS message=invalid arguments: missing required property "name""#,
    );
    has_line(&out, "call-3: code=EMPTY_NAME message=the name is blank");
    has_line(&out, "call-3: content=Error: the name is blank");
    assert!(
        out.lines()
            .any(|l| l
                .starts_with("call-4: code=INVALID_ARGS message=arguments are not valid JSON: ")),
        "{out}"
    );
    has_line(
        &out,
        r#"call-5: code=UNKNOWN_TOOL message=unknown tool "wave"; available tools: "greet""#,
    );
    has_line(&out, "direct: Hello, Grace! (call direct)");
}

#[test]
fn argument_structs_follow_serde_and_report_every_violation_by_path() {
    let out = run(env!("CARGO_BIN_EXE_argument_structs"));
    // rename_all = "camelCase" on the struct, snake_case tag values, schema ranges, serde
    // defaults.
    for fragment in [
        // `#[serde(default)]` / `default = "default_limit"` publish the values serde fills in.
        r#""caseSensitive":{"type":"boolean","description":"Match case exactly (default false).","default":false}"#,
        r#""kind":{"type":"string","const":"file"}"#,
        r#""kind":{"type":"string","const":"glob"}"#,
        r#""maxMatches":{"type":"integer","description":"Stop after this many matches.","default":10,"minimum":1,"maximum":100}"#,
        r#""minLength":1,"maxLength":200"#,
        r#""required":["needle","source"]"#,
    ] {
        assert!(out.contains(fragment), "missing {fragment} in:\n{out}");
    }
    // serde defaults filled the omitted fields.
    has_line(
        &out,
        r#"value: {"query":"\"fn main\" in file src/main.rs, any case","limit":10}"#,
    );
    has_line(
        &out,
        r#"value: {"query":"\"TODO\" in glob **/*.rs (max 5 files), exact case","limit":3}"#,
    );
    has_line(
        &out,
        r#"code=INVALID_ARGS message=invalid arguments: "needle" must be at least 1 characters long; "source.max_files" must be at least 1; "maxMatches" must be at most 100"#,
    );
    has_line(
        &out,
        r#"code=INVALID_ARGS message=invalid arguments: "source.kind" must be one of ["file","glob"]"#,
    );
    has_line(
        &out,
        r#"code=INVALID_ARGS message=invalid arguments: missing required property "source.path""#,
    );
    has_line(
        &out,
        r#"code=INVALID_ARGS message=invalid arguments: "caseSensitive" must be a boolean"#,
    );
}

#[test]
fn toolbox_tools_share_the_hosts_state() {
    let out = run(env!("CARGO_BIN_EXE_toolbox"));
    has_line(&out, "registered: add, list_notes, clear");
    has_line(&out, "add -> 1");
    has_line(&out, "add -> 2");
    has_line(&out, "add -> error EMPTY_NOTE: a note needs some text");
    assert!(
        out.contains("list_notes -> Ada's notes (2 for 4):\n1. buy milk\n2. call Grace\n"),
        "{out}"
    );
    // The host's Arc sees the tools' writes, then the clear.
    let counts: Vec<&str> = out.lines().filter(|l| l.starts_with("host sees")).collect();
    assert_eq!(counts, ["host sees 2 notes", "host sees 0 notes"]);
    has_line(&out, "clear -> 2");
    has_line(&out, "after unregister: 0 tools");
    has_line(&out, "add -> UNKNOWN_TOOL");
}

#[test]
fn policy_guard_timeout_typed_calls_and_scopes() {
    let out = run(env!("CARGO_BIN_EXE_policy"));
    has_line(&out, "allowed: ok Welcome to the guide.");
    // Denials carry the policy's message and their code.
    has_line(
        &out,
        "policy: denied or failed, code=POLICY_DENIED message=policy: ops/deploy.key is a key file",
    );
    has_line(
        &out,
        "guard: denied or failed, code=GUARD_DENIED message=guard: read_doc may not use `..` in paths",
    );
    has_line(
        &out,
        r#"invalid: denied or failed, code=INVALID_ARGS message=invalid arguments: "path" must be a string"#,
    );
    // `ask` reaches the registry's approval handler, for a call from the global view too.
    has_line(
        &out,
        "asked: read_doc (drafts/guide.md is a draft), from the global view",
    );
    has_line(&out, "approved: ok A better guide, soon.");
    has_line(
        &out,
        r#"rejected: denied or failed, code=APPROVAL_REJECTED message=the user rejected tool "read_doc""#,
    );
    has_line(
        &out,
        "timeout: denied or failed, code=TOOL_TIMEOUT message=tool call timed out after 50ms",
    );
    has_line(&out, "typed: Install, then run.");
    has_line(
        &out,
        r#"typed error: tool "read_doc" failed: policy: ops/deploy.key is a key file"#,
    );
    has_line(&out, "global tools: read_doc, wait_for_build");
    has_line(&out, "agent tools: read_doc, wait_for_build, add");
    has_line(&out, "agent typed: 2 + 40 = 42");
    has_line(
        &out,
        r#"agent typed error: tool "add" failed: guard: this agent only adds small numbers"#,
    );
    has_line(&out, "scoped call: ok 3");
    has_line(
        &out,
        r#"global call: denied or failed, code=UNKNOWN_TOOL message=unknown tool "add"; available tools: "read_doc", "wait_for_build""#,
    );
}

#[test]
fn cards_live_and_replayed_with_generic_fallbacks() {
    let out = run(env!("CARGO_BIN_EXE_cards"));
    let own_call = r#"{"card":"generic","title":"Read greek.txt from line 2","kind":"read","locations":[{"path":"greek.txt","line":2}]}"#;
    let read_card = r#"{"card":"read","path":"greek.txt","offset":2,"lines":[{"number":2,"text":"beta"},{"number":3,"text":"gamma"},{"number":4,"text":"delta"}],"totalLines":5}"#;
    has_line(&out, &format!("call card: {own_call}"));
    has_line(
        &out,
        r#"meta: {"path":"greek.txt","offset":2,"lines":[{"number":2,"text":"beta"},{"number":3,"text":"gamma"},{"number":4,"text":"delta"}],"totalLines":5}"#,
    );
    has_line(&out, &format!("result card: {read_card}"));
    // Replay from the log gives the same cards as live.
    has_line(
        &out,
        &format!("replayed call card (tool's own): {own_call}"),
    );
    has_line(&out, &format!("replayed result card: {read_card}"));
    // A stale entry (arguments of an older version) and a vanished tool: generic cards.
    has_line(
        &out,
        r#"replayed call card (generic): {"card":"generic","title":"read_lines","rawInput":{"file":"greek.txt","from":4}}"#,
    );
    has_line(
        &out,
        r#"replayed result card: {"card":"generic","content":[{"type":"text","text":"delta\nepsilon"}]}"#,
    );
    has_line(
        &out,
        r#"replayed call card (generic): {"card":"generic","title":"grep","rawInput":{"pattern":"beta"}}"#,
    );
    has_line(
        &out,
        r#"replayed result card: {"card":"generic","content":[{"type":"text","text":"greek.txt:2:beta"}]}"#,
    );
}
