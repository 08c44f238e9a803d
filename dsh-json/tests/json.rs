//! Integration tests for `dsh_json`.

use std::collections::{BTreeMap, HashMap};

use dsh_json as json;
use dsh_json::{
    self, Array, DeError, LosslessErrorKind, Number, Object, ParseError, ParseErrorKind,
    ParseOptions, SharedValue, Value, from_serde, from_value, parse, parse_slice, parse_with,
    to_serde, to_value,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack<F: FnOnce() + Send + 'static>(f: F) {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn perr(text: &str) -> ParseError {
    match parse(text) {
        Ok(v) => panic!("{text:?} parsed as {v}"),
        Err(e) => e,
    }
}

fn pmsg(text: &str) -> String {
    perr(text).to_string()
}

fn obj(pairs: &[(&str, Value)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (*k, v.clone())).collect())
}

// ---------------------------------------------------------------------------
// Every ParseErrorKind: kind, message, line, column, offset, path

#[test]
fn error_syntax_missing_colon() {
    let e = perr(r#"{"a" 1}"#);
    assert_eq!(
        e.kind(),
        &ParseErrorKind::Syntax("expected `:` after object key".into())
    );
    assert_eq!(e.path(), "arguments.a");
    assert_eq!((e.line(), e.column(), e.offset()), (1, 6, 5));
    assert_eq!(
        e.to_string(),
        "expected `:` after object key at arguments.a (line 1, column 6)"
    );
}

#[test]
fn error_syntax_variants() {
    assert_eq!(
        pmsg("[1,2,]"),
        "expected a JSON value at arguments[2] (line 1, column 6)"
    );
    assert_eq!(
        pmsg(r#"{"a":1,}"#),
        "expected `\"` (start of an object key) at arguments (line 1, column 8)"
    );
    assert_eq!(
        pmsg(r#"{"a":[1 2]}"#),
        "expected `,` or `]` after array element at arguments.a (line 1, column 9)"
    );
    assert_eq!(
        pmsg(r#"{"a":1 "b":2}"#),
        "expected `,` or `}` after object member at arguments (line 1, column 8)"
    );
    assert_eq!(
        pmsg(r#"{"x":[{1}]}"#),
        "expected `\"` (start of an object key) or `}` at arguments.x[0] (line 1, column 8)"
    );
    assert_eq!(
        pmsg("[tru]"),
        "invalid literal (expected `true`) at arguments[0] (line 1, column 2)"
    );
    assert_eq!(
        pmsg("nul!"),
        "invalid literal (expected `null`) at arguments (line 1, column 1)"
    );
    assert_eq!(
        pmsg("[01]"),
        "leading zeros are not allowed in numbers at arguments[0] (line 1, column 2)"
    );
    assert_eq!(
        pmsg("-x"),
        "expected a digit after `-` at arguments (line 1, column 2)"
    );
    assert_eq!(
        pmsg("1.e3"),
        "expected a digit after the decimal point at arguments (line 1, column 3)"
    );
    assert_eq!(
        pmsg("1e+"),
        "unexpected end of input at arguments (line 1, column 4)"
    );
    assert_eq!(
        pmsg("1e+x"),
        "expected a digit in the exponent at arguments (line 1, column 4)"
    );
    for bad in [
        "+1",
        ".5",
        "NaN",
        "Infinity",
        "-Infinity",
        "'a'",
        "[1,,2]",
        "{,}",
        "/*c*/1",
        "//c\n1",
    ] {
        assert!(
            matches!(perr(bad).kind(), ParseErrorKind::Syntax(_)),
            "{bad}: {}",
            perr(bad)
        );
    }
}

#[test]
fn error_duplicate_key() {
    let text = r#"{"filters": [{}, {}, {"a": 1, "a": 2}]}"#;
    let e = perr(text);
    assert_eq!(e.kind(), &ParseErrorKind::DuplicateKey("a".into()));
    assert_eq!(
        e.to_string(),
        r#"duplicate key "a" at arguments.filters[2] (line 1, column 31)"#
    );
    assert_eq!(e.offset(), 30);
    // Keys are compared after unescaping.
    assert_eq!(
        pmsg(r#"{"a\u0062": 1, "ab": 2}"#),
        r#"duplicate key "ab" at arguments (line 1, column 16)"#
    );
    // Multi-line position.
    let e = perr("{\n  \"k\": 1,\n  \"k\": 2\n}");
    assert_eq!((e.line(), e.column()), (3, 3));
    // Same key in different objects is fine.
    assert!(parse(r#"{"a":{"a":1},"b":{"a":2}}"#).is_ok());
}

#[test]
fn error_negative_zero() {
    let e = perr(r#"{"x":-0}"#);
    assert_eq!(e.kind(), &ParseErrorKind::NegativeZero);
    assert_eq!(
        e.to_string(),
        "-0 is not allowed (JSON has no negative zero) at arguments.x (line 1, column 6)"
    );
    for lit in ["-0", "-0.0", "-0e5", "-0.000e-3", "-0E+0"] {
        assert_eq!(perr(lit).kind(), &ParseErrorKind::NegativeZero, "{lit}");
    }
}

#[test]
fn error_inexact_number() {
    let e = perr(r#"{"n":12345678901234567890123}"#);
    assert_eq!(
        e.kind(),
        &ParseErrorKind::InexactNumber("12345678901234567890123".into())
    );
    assert_eq!(
        e.to_string(),
        "number 12345678901234567890123 cannot be held exactly at arguments.n (line 1, column 6)"
    );
    for lit in [
        "3.141592653589793238",
        "12345678901234567890123.0",
        "18446744073709551617",
        "-9223372036854775809",
        "18446744073709551617.0e1",
        "18446744073709551616e-1",
        "0.1000000000000000000001",
        "1.00000000000000000000000000000000000001e300",
        // Beyond 64 bits, the nearest f64 is not this integer.
        "-9223372036854775809.0",
        "18446744073709551615.5",
        // Not integral, but the nearest f64 is.
        "9007199254740993.5",
    ] {
        assert_eq!(
            perr(lit).kind(),
            &ParseErrorKind::InexactNumber(lit.into()),
            "{lit}"
        );
    }
}

#[test]
fn error_number_out_of_range() {
    let e = perr("[1e400]");
    assert_eq!(e.kind(), &ParseErrorKind::NumberOutOfRange("1e400".into()));
    assert_eq!(
        e.to_string(),
        "number 1e400 is out of the range of a 64-bit float at arguments[0] (line 1, column 2)"
    );
    for lit in [
        "-1e400",
        "1e-400",
        "-1e-400",
        "1.8e308",
        "1e99999999999999999999999",
    ] {
        assert_eq!(
            perr(lit).kind(),
            &ParseErrorKind::NumberOutOfRange(lit.into()),
            "{lit}"
        );
    }
    let huge = format!("1{}", "0".repeat(400));
    assert_eq!(
        perr(&huge).kind(),
        &ParseErrorKind::NumberOutOfRange(format!("1{}…(401 bytes)", "0".repeat(63)))
    );
}

#[test]
fn error_too_deep() {
    let opts = ParseOptions::with_max_depth(2);
    let e = parse_with("[[[1]]]", &opts).unwrap_err();
    assert_eq!(e.kind(), &ParseErrorKind::TooDeep { limit: 2 });
    assert_eq!(
        e.to_string(),
        "nesting is deeper than the limit of 2 levels at arguments[0][0] (line 1, column 3)"
    );
    assert!(parse_with("[[1]]", &opts).is_ok());
    let e = parse_with(r#"{"a":{"b":{}}}"#, &opts).unwrap_err();
    assert_eq!(e.path(), "arguments.a.b");
    // Depth 0: only scalars.
    let zero = ParseOptions::with_max_depth(0);
    assert!(parse_with("1", &zero).is_ok());
    assert_eq!(
        parse_with("[]", &zero).unwrap_err().kind(),
        &ParseErrorKind::TooDeep { limit: 0 }
    );
    // Default limit is 128.
    assert_eq!(ParseOptions::default().max_depth, 128);
    let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(parse(&ok).is_ok());
    let bad = format!("{}{}", "[".repeat(129), "]".repeat(129));
    assert_eq!(perr(&bad).kind(), &ParseErrorKind::TooDeep { limit: 128 });
    assert_eq!(perr(&bad).column(), 129);
}

#[test]
fn error_invalid_escape() {
    let e = perr(r#"{"s":"a\x"}"#);
    assert_eq!(e.kind(), &ParseErrorKind::InvalidEscape);
    assert_eq!(
        e.to_string(),
        "invalid escape sequence in string at arguments.s (line 1, column 8)"
    );
    for bad in [
        r#""\u12G4""#,
        r#""\U0041""#,
        r#""\'""#,
        r#""\ud800\uZZZZ""#,
        r#""\ ""#,
    ] {
        assert_eq!(perr(bad).kind(), &ParseErrorKind::InvalidEscape, "{bad}");
    }
    // Escapes inside keys report the object path.
    assert_eq!(perr(r#"{"k\q":1}"#).path(), "arguments");
}

#[test]
fn error_lone_surrogate() {
    let e = perr(r#""\ud800""#);
    assert_eq!(e.kind(), &ParseErrorKind::LoneSurrogate);
    assert_eq!(
        e.to_string(),
        "unpaired surrogate in \\u escape (lone half of a UTF-16 pair) at arguments (line 1, column 2)"
    );
    for bad in [
        r#""\udc00""#,
        r#""\ud800\u0041""#,
        r#""\ud800x""#,
        r#""\udbff\udbff""#,
        r#""\ud800\n""#,
        r#"["ok", "a\udfff"]"#,
    ] {
        assert_eq!(perr(bad).kind(), &ParseErrorKind::LoneSurrogate, "{bad}");
    }
    assert_eq!(perr(r#"["ok", "ab\udfff"]"#).column(), 11);
    // A proper pair is fine.
    assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), Value::from("😀"));
    assert_eq!(parse(r#""\uD83D\uDE00""#).unwrap(), Value::from("😀"));
}

#[test]
fn error_invalid_utf8() {
    let opts = ParseOptions::default();
    let e = parse_slice(b"{\"k\":\"ab\xff\"}", &opts).unwrap_err();
    assert_eq!(e.kind(), &ParseErrorKind::InvalidUtf8);
    assert_eq!(
        e.to_string(),
        "invalid UTF-8 at arguments.k (line 1, column 9)"
    );
    assert_eq!(e.offset(), 8);
    let cases: &[(&[u8], &str, usize)] = &[
        (b"\x80", "arguments", 0),
        (b"[1, \"\xc3\"]", "arguments[1]", 5),
        (b"{\"\xc0\x80\":1}", "arguments", 2),
        (b"\"\xed\xa0\x80\"", "arguments", 1),
        (b"[1] \xff", "arguments", 4),
        (b"[1,\n \xe2\x82]", "arguments[1]", 5),
        (b"\"\xf4\x90\x80\x80\"", "arguments", 1),
    ];
    for (bytes, path, offset) in cases {
        let e = parse_slice(bytes, &opts).unwrap_err();
        assert_eq!(e.kind(), &ParseErrorKind::InvalidUtf8, "{bytes:?}");
        assert_eq!(e.path(), *path, "{bytes:?}");
        assert_eq!(e.offset(), *offset, "{bytes:?}");
    }
    assert_eq!(
        parse_slice(b"[1,\n \xe2\x82]", &opts).unwrap_err().line(),
        2
    );
    // An earlier error wins.
    assert_eq!(
        parse_slice(b"[01, \"\xff\"]", &opts).unwrap_err().kind(),
        &ParseErrorKind::Syntax("leading zeros are not allowed in numbers".into())
    );
    // Valid bytes parse.
    assert_eq!(
        parse_slice("[\"é\"]".as_bytes(), &opts).unwrap(),
        Value::from(vec![Value::from("é")])
    );
}

#[test]
fn error_control_character() {
    let e = perr("[\"a\tb\"]");
    assert_eq!(e.kind(), &ParseErrorKind::ControlCharacter);
    assert_eq!(
        e.to_string(),
        "unescaped control character in string at arguments[0] (line 1, column 4)"
    );
    for c in (0u8..0x20).map(char::from) {
        let text = format!("\"{c}\"");
        assert_eq!(
            perr(&text).kind(),
            &ParseErrorKind::ControlCharacter,
            "{c:?}"
        );
        let text = format!("\"\\n{c}\"");
        assert_eq!(
            perr(&text).kind(),
            &ParseErrorKind::ControlCharacter,
            "{c:?}"
        );
        let text = format!("\"0123456789abcdef{c}\"");
        assert_eq!(perr(&text).offset(), 17, "{c:?}");
    }
    // DEL is not a control character for JSON.
    assert_eq!(parse("\"\u{7f}\"").unwrap(), Value::from("\u{7f}"));
}

#[test]
fn error_trailing_characters() {
    let e = perr("{} x");
    assert_eq!(e.kind(), &ParseErrorKind::TrailingCharacters);
    assert_eq!(
        e.to_string(),
        "trailing characters after the JSON value at arguments (line 1, column 4)"
    );
    assert_eq!(perr("1 2").kind(), &ParseErrorKind::TrailingCharacters);
    assert_eq!(perr("[]]").kind(), &ParseErrorKind::TrailingCharacters);
    assert_eq!(perr("1x").kind(), &ParseErrorKind::TrailingCharacters);
    assert_eq!(perr("true false").column(), 6);
}

#[test]
fn error_eof() {
    let e = perr(r#"{"a": [1, 2"#);
    assert_eq!(e.kind(), &ParseErrorKind::Eof);
    assert_eq!(
        e.to_string(),
        "unexpected end of input at arguments.a (line 1, column 12)"
    );
    for (text, path) in [
        ("", "arguments"),
        ("   \n ", "arguments"),
        ("[", "arguments[0]"),
        ("[1,", "arguments[1]"),
        ("{", "arguments"),
        (r#"{"a""#, "arguments.a"),
        (r#"{"a":"#, "arguments.a"),
        (r#"{"a":1,"#, "arguments"),
        (r#"{"a":"x"#, "arguments.a"),
        (r#""\"#, "arguments"),
        (r#""\u12"#, "arguments"),
        (r#""\ud800"#, "arguments"),
        (r#""\ud800\"#, "arguments"),
        ("tr", "arguments"),
        ("-", "arguments"),
        ("1.", "arguments"),
        ("1e", "arguments"),
    ] {
        let e = perr(text);
        assert_eq!(e.kind(), &ParseErrorKind::Eof, "{text:?}");
        assert_eq!(e.path(), path, "{text:?}");
        assert_eq!(e.offset(), text.len(), "{text:?}");
    }
    assert_eq!(perr("   \n ").line(), 2);
    assert_eq!(perr("   \n ").column(), 2);
}

#[test]
fn error_paths_use_quoted_segments() {
    let e = perr(r#"{"a b": {"": [{"é": -0}]}}"#);
    assert_eq!(e.path(), r#"arguments["a b"][""][0]["é"]"#);
    // Columns count characters, offsets count bytes.
    assert_eq!((e.column(), e.offset()), (21, 21));
    let e = perr(r#"{"éé": -0}"#);
    assert_eq!((e.column(), e.offset()), (8, 9));
    assert_eq!(
        perr(r#"{"_ok$1": {"1x": 1e999}}"#).path(),
        r#"arguments._ok$1["1x"]"#
    );
    assert_eq!(perr(r#"{"q\"": -0}"#).path(), r#"arguments["q\""]"#);
}

#[test]
fn parse_error_is_std_error() {
    let e: Box<dyn std::error::Error + Send + Sync> = Box::new(perr("x"));
    assert_eq!(
        e.to_string(),
        "expected a JSON value at arguments (line 1, column 1)"
    );
    let dbg = format!("{:?}", perr("x"));
    assert!(
        dbg.contains("ParseError") && dbg.contains("Syntax"),
        "{dbg}"
    );
}

// ---------------------------------------------------------------------------
// Accepted input

#[test]
fn accepted_number_forms() {
    let int = |text: &str, expected: i128| {
        let v = parse(text).unwrap();
        let n = v.as_number().unwrap();
        assert!(!n.is_f64(), "{text} should be an integer");
        let got = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
        assert_eq!(got, Some(expected), "{text}");
    };
    int("0", 0);
    int("0.0", 0);
    int("0e5", 0);
    int("0.000E-7", 0);
    int("2.0", 2);
    int("1.0e2", 100);
    int("1E2", 100);
    int("1.5e3", 1500);
    int("-3.0", -3);
    int("-9223372036854775808", i128::from(i64::MIN));
    int("18446744073709551615", i128::from(u64::MAX));
    int("9223372036854775807", i128::from(i64::MAX));
    int("1e18", 1_000_000_000_000_000_000);
    int("18446744073709549568.0", 18_446_744_073_709_549_568);
    int("9007199254740992.0", 9_007_199_254_740_992);
    int("9007199254740993.0", 9_007_199_254_740_993);
    int("-9223372036854775808.0", i128::from(i64::MIN));
    int("1.2345678901234e18", 1_234_567_890_123_400_000);
    int("1.23456789012345e18", 1_234_567_890_123_450_000);
    int("2.6934100508506787e+17", 269_341_005_085_067_870);
    int("9223372036854775807.0", i128::from(i64::MAX));
    int("1844674407370955161.5e1", i128::from(u64::MAX));
    let float = |text: &str, expected: f64| {
        let v = parse(text).unwrap();
        let n = v.as_number().unwrap();
        assert!(n.is_f64(), "{text} should be a float");
        assert_eq!(n.as_f64(), Some(expected), "{text}");
    };
    float("0.1", 0.1);
    float("-3.25", -3.25);
    float("1e300", 1e300);
    float("1e-2", 0.01);
    float("-1.5e-7", -1.5e-7);
    float("5e-324", 5e-324);
    float("1.7976931348623157e308", f64::MAX);
    float("100000000000000000000000", 1e23);
    float("1.5e20", 1.5e20);
    float("-1.8446744073709552e+19", -1.8446744073709552e19);
    float("0.30000000000000004", 0.30000000000000004);
    assert!(parse("1e300").unwrap().as_number().unwrap().is_integer());
}

#[test]
fn integral_decimal_with_fraction_digits() {
    // 12e-1 is 1.2, a float.
    let v = parse("12e-1").unwrap();
    assert_eq!(v.as_f64(), Some(1.2));
}

#[test]
fn accepted_documents() {
    let v = parse(" \t\r\n{\"a\" : [ 1 , true , null , \"s\" ] , \"b\":{}} \n").unwrap();
    assert_eq!(
        v,
        obj(&[
            (
                "a",
                Value::from(vec![1u8.into(), true.into(), Value::Null, "s".into()])
            ),
            ("b", Value::Object(Object::new())),
        ])
    );
    assert_eq!(parse("[]").unwrap(), Value::Array(Array::new()));
    assert_eq!(parse("\"\"").unwrap(), Value::from(""));
    assert_eq!(
        parse(r#""\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC""#).unwrap(),
        Value::from("\"\\/\u{8}\u{c}\n\r\t\u{0}é€")
    );
    // Insertion order is kept.
    let v = parse(r#"{"z":1,"a":2,"m":3}"#).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["z", "a", "m"]);
    assert_eq!(v.to_string(), r#"{"z":1,"a":2,"m":3}"#);
    // Non-JSON whitespace is rejected.
    assert!(parse("\u{c}1").is_err());
    assert!(parse("\u{a0}1").is_err());
    assert!(parse("1\u{b}").is_err());
}

// ---------------------------------------------------------------------------
// Display

#[test]
fn display_is_compact_and_escapes_like_serde_json() {
    let s: String = (0u8..0x80).map(char::from).collect::<String>() + "é€😀\u{2028}";
    let v = obj(&[
        (
            "a",
            Value::from(vec![
                Value::Null,
                true.into(),
                false.into(),
                (-5i64).into(),
                u64::MAX.into(),
            ]),
        ),
        ("f", Value::Number(Number::from_f64(0.1).unwrap())),
        ("g", Value::Number(Number::from_f64(1e300).unwrap())),
        ("h", Value::Number(Number::from_f64(-2.5e-8).unwrap())),
        ("s", Value::from(s.as_str())),
        ("e", Value::Object(Object::new())),
    ]);
    let ours = v.to_string();
    let theirs = serde_json::to_string(&serde_json::json!({
        "a": [null, true, false, -5, u64::MAX],
        "f": 0.1,
        "g": 1e300,
        "h": -2.5e-8,
        "s": s,
        "e": {},
    }))
    .unwrap();
    // serde_json sorts keys; compare member by member through a reparse and
    // directly on a sorted copy.
    let sorted: Object = {
        let mut pairs: Vec<(&str, &Value)> = v.as_object().unwrap().iter().collect();
        pairs.sort_by_key(|(k, _)| *k);
        pairs.into_iter().map(|(k, v)| (k, v.clone())).collect()
    };
    assert_eq!(Value::Object(sorted).to_string(), theirs);
    assert_eq!(parse(&ours).unwrap(), v);
    assert!(ours.contains(r#""g":1e+300"#), "{ours}");
    assert!(ours.contains(r#"\u0000\u0001"#) && ours.contains(r#"\b\t\n\u000b\f\r"#));
    assert_eq!(format!("{v:?}"), ours);
}

// ---------------------------------------------------------------------------
// Hostile input

fn depth_of(v: &Value) -> usize {
    let mut depth = 0;
    let mut cur = v;
    loop {
        match cur {
            Value::Array(a) if !a.is_empty() => {
                depth += 1;
                cur = &a[0];
            }
            Value::Object(o) if !o.is_empty() => {
                depth += 1;
                cur = o.values().next().unwrap();
            }
            Value::Array(_) | Value::Object(_) => return depth + 1,
            _ => return depth,
        }
    }
}

#[test]
fn million_deep_arrays_fail_fast_at_the_limit() {
    on_small_stack(|| {
        let n = 1_000_000;
        let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let start = std::time::Instant::now();
        let e = parse(&text).unwrap_err();
        assert_eq!(e.kind(), &ParseErrorKind::TooDeep { limit: 128 });
        assert_eq!(e.offset(), 128);
        assert!(start.elapsed().as_secs() < 2);
        // Unclosed and allowed: runs to the end and reports EOF.
        let open = "[".repeat(n);
        let e = parse_with(&open, &ParseOptions::with_max_depth(usize::MAX)).unwrap_err();
        assert_eq!(e.kind(), &ParseErrorKind::Eof);
        assert_eq!(e.offset(), n);
    });
}

#[test]
fn hundred_thousand_deep_parses_on_small_stack() {
    on_small_stack(|| {
        let n = 100_000;
        let opts = ParseOptions::with_max_depth(n);
        let text = format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let v = parse_with(&text, &opts).unwrap();
        assert_eq!(depth_of(&v), n);
        assert_eq!(v.to_string(), text);
        let copy = v.clone();
        assert_eq!(copy, v);
        let text = format!("{}{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        let e = parse_with(&text, &opts).unwrap_err();
        assert_eq!(
            e.kind(),
            &ParseErrorKind::Syntax("expected a JSON value".into())
        );
        let text = format!("{}null{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        let v = parse_with(&text, &opts).unwrap();
        assert_eq!(depth_of(&v), n);
        assert_eq!(
            parse_with(&text, &ParseOptions::with_max_depth(n - 1))
                .unwrap_err()
                .kind(),
            &ParseErrorKind::TooDeep { limit: n - 1 }
        );
        // Errors deep inside render the path's beginning and end around its
        // length; a path up to the bound is rendered in full.
        let text = format!("{}-0{}", "[".repeat(1000), "]".repeat(1000));
        let e = parse_with(&text, &opts).unwrap_err();
        let full = format!("arguments{}", "[0]".repeat(1000));
        assert_eq!(
            e.path(),
            format!(
                "{}…(path of 3009 bytes)…{}",
                &full[..128],
                &full[full.len() - 128..]
            )
        );
        let text = format!("{}-0{}", "[".repeat(80), "]".repeat(80));
        let e = parse_with(&text, &opts).unwrap_err();
        assert_eq!(e.path(), format!("arguments{}", "[0]".repeat(80)));
    });
}

#[test]
fn million_deep_values_drop_clone_compare_on_small_stack() {
    on_small_stack(|| {
        let n = 1_000_000;
        let mut v = Value::from("leaf");
        for i in 0..n {
            v = if i % 2 == 0 {
                Value::from(vec![v, Value::from(i)])
            } else {
                let mut o = Object::new();
                o.insert("k", v);
                o.insert("n", i);
                Value::Object(o)
            };
        }
        let frozen: SharedValue = v.clone().freeze();
        let shared = SharedValue::clone(&frozen);
        assert!(*frozen == v);
        let text = frozen.to_string();
        assert!(text.starts_with(r#"{"k":[{"k":["#));
        drop(frozen);
        drop(shared);
        drop(v);
        // Also via Array directly.
        let mut a = Array::new();
        for _ in 0..n {
            let mut outer = Array::new();
            outer.push(Value::Array(a));
            a = outer;
        }
        drop(a);
    });
}

#[test]
fn hundred_thousand_keys() {
    let n = 100_000;
    let mut text = String::from("{");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("\"key{i}\":{i}"));
    }
    let unique = format!("{text}}}");
    let start = std::time::Instant::now();
    let v = parse(&unique).unwrap();
    assert_eq!(v.as_object().unwrap().len(), n);
    assert_eq!(v["key99999"], Value::from(99_999u32));
    let with_dup = format!("{text},\"key0\":0}}");
    let e = parse(&with_dup).unwrap_err();
    assert_eq!(e.kind(), &ParseErrorKind::DuplicateKey("key0".into()));
    assert_eq!(e.offset(), text.len() + 1);
    assert_eq!(e.path(), "arguments");
    // Linear, not quadratic: generous bound even for debug builds.
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}

#[test]
fn ten_megabyte_strings() {
    let big = "x".repeat(10 * 1024 * 1024);
    let v = parse(&format!("[\"{big}\"]")).unwrap();
    assert_eq!(v[0].as_str().map(str::len), Some(big.len()));
    let escaped = "\\n".repeat(5 * 1024 * 1024);
    let v = parse(&format!("\"{escaped}\"")).unwrap();
    assert_eq!(v.as_str().map(str::len), Some(5 * 1024 * 1024));
    let e = perr(&format!("\"{big}\u{1}\""));
    assert_eq!(e.kind(), &ParseErrorKind::ControlCharacter);
    assert_eq!(e.offset(), big.len() + 1);
    let e = perr(&format!("\"{big}"));
    assert_eq!(e.kind(), &ParseErrorKind::Eof);
}

// ---------------------------------------------------------------------------
// serde: Deserializer for &Value

#[derive(Debug, PartialEq, Deserialize, Serialize)]
struct Filter {
    field: String,
    op: Op,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    Eq,
    In(Vec<i64>),
    Range(i64, i64),
    Near { lat: f64, lon: f64 },
}

#[derive(Debug, PartialEq, Deserialize)]
struct Query<'a> {
    name: &'a str,
    filters: Vec<Filter>,
    tags: HashMap<String, u8>,
    by_id: BTreeMap<u32, String>,
    big: i128,
    ubig: u128,
    ratio: f64,
    extra: Value,
    nothing: Option<bool>,
    unit: (),
}

#[test]
fn deserialize_structs_enums_options_maps() {
    let v = parse(
        r#"{
        "name": "q",
        "filters": [
            {"field": "a", "op": "eq"},
            {"field": "b", "op": {"in": [1, -2]}, "limit": 3},
            {"field": "c", "op": {"range": [0, 10]}},
            {"field": "d", "op": {"near": {"lat": 1.5, "lon": -2}}}
        ],
        "tags": {"x": 1, "y": 2},
        "by_id": {"7": "seven", "10": "ten"},
        "big": -9223372036854775808,
        "ubig": 18446744073709551615,
        "ratio": 2,
        "extra": {"deep": [1, {"k": null}], "n": 1e300},
        "nothing": null,
        "unit": null
    }"#,
    )
    .unwrap();
    let q: Query<'_> = from_value(&v).unwrap();
    assert_eq!(q.name, "q");
    assert_eq!(
        q.filters,
        vec![
            Filter {
                field: "a".into(),
                op: Op::Eq,
                limit: None
            },
            Filter {
                field: "b".into(),
                op: Op::In(vec![1, -2]),
                limit: Some(3)
            },
            Filter {
                field: "c".into(),
                op: Op::Range(0, 10),
                limit: None
            },
            Filter {
                field: "d".into(),
                op: Op::Near {
                    lat: 1.5,
                    lon: -2.0
                },
                limit: None
            },
        ]
    );
    assert_eq!(q.tags, HashMap::from([("x".into(), 1), ("y".into(), 2)]));
    assert_eq!(
        q.by_id,
        BTreeMap::from([(7, "seven".into()), (10, "ten".into())])
    );
    assert_eq!(q.big, i128::from(i64::MIN));
    assert_eq!(q.ubig, u128::from(u64::MAX));
    assert_eq!(q.ratio, 2.0);
    assert_eq!(q.extra, v["extra"]);
    assert_eq!(q.extra.to_string(), r#"{"deep":[1,{"k":null}],"n":1e+300}"#);
    assert_eq!(q.nothing, None);
    // Borrowed: the name points into the value.
    assert!(std::ptr::eq(
        q.name.as_ptr(),
        v["name"].as_str().unwrap().as_ptr()
    ));
}

#[test]
fn deserialize_errors() {
    let e = from_value::<u8>(&Value::from(300u32)).unwrap_err();
    assert_eq!(e.to_string(), "invalid value: integer `300`, expected u8");
    let e = from_value::<u32>(&Value::from(-1i8)).unwrap_err();
    assert_eq!(e.to_string(), "invalid value: integer `-1`, expected u32");
    let e = from_value::<i64>(&parse("1e300").unwrap()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid type: floating point `1000"),
        "{e}"
    );
    assert!(e.to_string().ends_with("`, expected i64"), "{e}");
    let e = from_value::<i64>(&parse("0.5").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid type: floating point `0.5`, expected i64"
    );
    let e = from_value::<Filter>(&parse(r#"{"field":"a"}"#).unwrap()).unwrap_err();
    assert_eq!(e.to_string(), "missing field `op`");
    let e = from_value::<Op>(&parse(r#"{"eq":null,"in":[]}"#).unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid value: map, expected map with a single key"
    );
    let e = from_value::<Op>(&parse("3").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid type: integer `3`, expected string or map"
    );
    let e = from_value::<Op>(&parse(r#""in""#).unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid type: unit variant, expected newtype variant"
    );
    let e = from_value::<Op>(&parse(r#""bogus""#).unwrap()).unwrap_err();
    assert!(e.to_string().starts_with("unknown variant `bogus`"), "{e}");
    let e = from_value::<()>(&Value::from(1u8)).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: integer `1`, expected unit");
    let e = from_value::<(u8, u8)>(&parse("[1,2,3]").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid length 3, expected fewer elements in array"
    );
    let e = from_value::<String>(&parse("[]").unwrap()).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: sequence, expected a string");
    let _: &dyn std::error::Error = &e;
    let e: DeError = serde::de::Error::custom("boom");
    assert_eq!(e.message(), "boom");
}

#[test]
fn deserialize_misc_types() {
    #[derive(Debug, PartialEq, Deserialize)]
    struct Unit;
    #[derive(Debug, PartialEq, Deserialize)]
    struct Wrap(u16);
    #[derive(Debug, PartialEq, Deserialize)]
    struct Pair(i8, String);
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type")]
    enum Tagged {
        A { x: u8 },
        B,
    }
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Untagged {
        N(i64),
        S(String),
    }
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: u8,
    }
    let p = |s: &str| parse(s).unwrap();
    assert_eq!(from_value::<Unit>(&p("null")).unwrap(), Unit);
    assert_eq!(from_value::<Wrap>(&p("7")).unwrap(), Wrap(7));
    assert_eq!(
        from_value::<Pair>(&p(r#"[-1,"x"]"#)).unwrap(),
        Pair(-1, "x".into())
    );
    assert_eq!(
        from_value::<Tagged>(&p(r#"{"type":"A","x":3}"#)).unwrap(),
        Tagged::A { x: 3 }
    );
    assert_eq!(
        from_value::<Tagged>(&p(r#"{"type":"B"}"#)).unwrap(),
        Tagged::B
    );
    assert_eq!(from_value::<Untagged>(&p("-4")).unwrap(), Untagged::N(-4));
    assert_eq!(
        from_value::<Untagged>(&p(r#""s""#)).unwrap(),
        Untagged::S("s".into())
    );
    assert_eq!(
        from_value::<Strict>(&p(r#"{"a":1,"b":2}"#))
            .unwrap_err()
            .to_string(),
        "unknown field `b`, expected `a`"
    );
    assert_eq!(from_value::<char>(&p(r#""é""#)).unwrap(), 'é');
    assert_eq!(
        from_value::<Vec<u8>>(&p("[1,2,255]")).unwrap(),
        vec![1, 2, 255]
    );
    assert_eq!(from_value::<Option<u8>>(&p("5")).unwrap(), Some(5));
    assert_eq!(from_value::<Option<u8>>(&p("null")).unwrap(), None);
    assert_eq!(from_value::<f32>(&p("0.5")).unwrap(), 0.5);
    assert_eq!(from_value::<u64>(&p("2.0")).unwrap(), 2);
    assert_eq!(from_value::<i32>(&p("-1e2")).unwrap(), -100);
    assert_eq!(
        from_value::<serde::de::IgnoredAny>(&p("[1]")).unwrap(),
        serde::de::IgnoredAny
    );
    let map: HashMap<i64, bool> = from_value(&p(r#"{"-1": true, "2": false}"#)).unwrap();
    assert_eq!(map, HashMap::from([(-1, true), (2, false)]));
    let e = from_value::<HashMap<u8, u8>>(&p(r#"{"x": 1}"#)).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: string \"x\", expected u8");
    // IntoDeserializer.
    use serde::de::IntoDeserializer;
    let v = p("[true]");
    let d = (&v).into_deserializer();
    assert_eq!(<Vec<bool>>::deserialize(d).unwrap(), vec![true]);
}

#[test]
fn value_round_trips_through_its_own_deserializer() {
    let v = parse(r#"{"a":[1,-2,0.5,"s",null,true,{"b":{}}],"c":1e300,"z":[]}"#).unwrap();
    let back: Value = from_value(&v).unwrap();
    assert_eq!(back, v);
    assert_eq!(back.to_string(), v.to_string());
    let sj: serde_json::Value = from_value(&v).unwrap();
    assert_eq!(sj, to_serde(&v));
}

#[test]
fn value_deserialize_from_serde_json_rejects_lossy_input() {
    let v: Value = serde_json::from_str(r#"{"b":[1,2.5,"x"],"a":null}"#).unwrap();
    assert_eq!(v.to_string(), r#"{"b":[1,2.5,"x"],"a":null}"#);
    let e = serde_json::from_str::<Value>(r#"{"a":1,"a":2}"#).unwrap_err();
    assert!(e.to_string().starts_with(r#"duplicate key "a""#), "{e}");
    let e = serde_json::from_str::<Value>("[-0.0]").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("negative zero is not lossless JSON"),
        "{e}"
    );
    let e = serde_json::from_str::<Value>("-0").unwrap_err();
    assert!(e.to_string().starts_with("negative zero"), "{e}");
    // From a serde_json::Value deserializer: integral floats normalise.
    let v = Value::deserialize(serde_json::json!({"n": 2.0})).unwrap();
    assert_eq!(v["n"].as_u64(), Some(2));
    let e = Value::deserialize(serde_json::json!({"n": -0.0})).unwrap_err();
    assert!(e.to_string().contains("negative zero"), "{e}");
}

// ---------------------------------------------------------------------------
// to_value

#[derive(Serialize)]
struct Point {
    x: f64,
}

#[derive(Serialize)]
struct Doc {
    items: Vec<Point>,
}

struct DupMap;

impl Serialize for DupMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("a", &1)?;
        m.serialize_entry("b", &2)?;
        m.serialize_entry("a", &3)?;
        m.end()
    }
}

struct Failing;

impl Serialize for Failing {
    fn serialize<S: serde::Serializer>(&self, _s: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("boom"))
    }
}

struct Bytes(&'static [u8]);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[test]
fn to_value_errors_carry_paths() {
    let doc = Doc {
        items: vec![Point { x: 1.0 }, Point { x: 2.5 }, Point { x: f64::NAN }],
    };
    let e = to_value(&doc).unwrap_err();
    assert_eq!(e.kind(), &LosslessErrorKind::NonFinite);
    assert_eq!(e.path(), "value.items[2].x");
    assert_eq!(
        e.to_string(),
        "value is not lossless JSON: non-finite number at value.items[2].x"
    );
    let doc = Doc {
        items: vec![Point { x: -0.0 }],
    };
    assert_eq!(
        to_value(&doc).unwrap_err().to_string(),
        "value is not lossless JSON: negative zero at value.items[0].x"
    );
    assert_eq!(
        to_value(&f64::INFINITY).unwrap_err().to_string(),
        "value is not lossless JSON: non-finite number at value"
    );
    let m = BTreeMap::from([("a b".to_string(), vec![1.0, f64::NEG_INFINITY])]);
    assert_eq!(to_value(&m).unwrap_err().path(), r#"value["a b"][1]"#);
    let m = HashMap::from([("k", HashMap::from([(vec![1u8], 1u8)]))]);
    assert_eq!(
        to_value(&m).unwrap_err().to_string(),
        "value is not lossless JSON: object key must be a string, char or integer at value.k"
    );
    let m = HashMap::from([(true, 1u8)]);
    assert_eq!(
        to_value(&m).unwrap_err().kind(),
        &LosslessErrorKind::KeyMustBeString
    );
    #[derive(Serialize)]
    struct Big {
        big: u128,
        small: i128,
    }
    assert_eq!(
        to_value(&Big {
            big: u128::MAX,
            small: 0
        })
        .unwrap_err()
        .to_string(),
        "value is not lossless JSON: integer 340282366920938463463374607431768211455 does not fit in 64 bits at value.big"
    );
    assert_eq!(
        to_value(&Big {
            big: 1,
            small: i128::MIN
        })
        .unwrap_err()
        .path(),
        "value.small"
    );
    assert_eq!(
        to_value(&DupMap).unwrap_err().to_string(),
        r#"value is not lossless JSON: duplicate key "a" at value"#
    );
    assert_eq!(
        to_value(&vec![vec![DupMap]]).unwrap_err().path(),
        "value[0][0]"
    );
    let e = to_value(&(1, Failing)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "value is not lossless JSON: boom at value[1]"
    );
    assert_eq!(e.kind(), &LosslessErrorKind::Custom("boom".into()));
    assert_eq!(to_value(&Failing).unwrap_err().path(), "value");
    #[derive(Serialize)]
    enum E {
        V { inner: Vec<f32> },
        T(u8, f64),
    }
    assert_eq!(
        to_value(&E::V {
            inner: vec![f32::NAN]
        })
        .unwrap_err()
        .path(),
        "value.V.inner[0]"
    );
    assert_eq!(
        to_value(&E::T(1, f64::NAN)).unwrap_err().path(),
        "value.T[1]"
    );
    let _: &dyn std::error::Error = &e;
}

#[test]
fn to_value_mapping_follows_serde_json() {
    #[derive(Serialize)]
    struct Unit;
    #[derive(Serialize)]
    struct New(u8);
    #[derive(Serialize)]
    enum E {
        U,
        N(i8),
        T(u8, u8),
        S { a: u8 },
    }
    #[derive(Serialize)]
    struct All {
        z: Option<u8>,
        a: Option<u8>,
        unit: (),
        unit_struct: Unit,
        new: New,
        variants: (E, E, E, E),
        chars: BTreeMap<char, u8>,
        ints: BTreeMap<i32, u8>,
        bytes: Bytes,
        f: f32,
        big: i128,
        tuple: (bool, &'static str),
    }
    let all = All {
        z: None,
        a: Some(1),
        unit: (),
        unit_struct: Unit,
        new: New(2),
        variants: (E::U, E::N(-1), E::T(1, 2), E::S { a: 3 }),
        chars: BTreeMap::from([('x', 1)]),
        ints: BTreeMap::from([(-5, 1), (7, 2)]),
        bytes: Bytes(b"hi"),
        f: 0.1,
        big: -5,
        tuple: (true, "t"),
    };
    let v = to_value(&all).unwrap();
    let expected = r#"{"z":null,"a":1,"unit":null,"unit_struct":null,"new":2,"variants":["U",{"N":-1},{"T":[1,2]},{"S":{"a":3}}],"chars":{"x":1},"ints":{"-5":1,"7":2},"bytes":[104,105],"f":0.1,"big":-5,"tuple":[true,"t"]}"#;
    assert_eq!(v.to_string(), expected);
    assert_eq!(serde_json::to_string(&all).unwrap(), expected);
    // Integral floats normalise.
    assert_eq!(to_value(&2.0f64).unwrap(), Value::from(2u8));
    // to_value of a Value is the identity.
    let p = parse(r#"{"b":[1,{"c":0.5}],"a":"x"}"#).unwrap();
    assert_eq!(to_value(&p).unwrap().to_string(), p.to_string());
}

// ---------------------------------------------------------------------------
// serde_json bridge

#[test]
fn serde_json_bridge() {
    let sj = serde_json::json!({"a": [1, -2, 0.5, "s", null, true], "b": {"c": 1e300}});
    let v = from_serde(&sj).unwrap();
    assert_eq!(to_serde(&v), sj);
    assert_eq!(serde_json::Value::from(&v), sj);
    assert_eq!(v["b"]["c"].as_f64(), Some(1e300));
    let e = from_serde(&serde_json::json!({"a": [1, -0.0]})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "value is not lossless JSON: negative zero at value.a[1]"
    );
    let e = from_serde(&serde_json::from_str("[[0], -0]").unwrap()).unwrap_err();
    assert_eq!(e.path(), "value[1]");
    assert_eq!(
        from_serde(&serde_json::json!(2.0)).unwrap(),
        Value::from(2u8)
    );
    on_small_stack(|| {
        // Iterative in both directions (leaking the deep serde_json value,
        // whose own drop would recurse).
        let mut v = Value::Null;
        for _ in 0..100_000 {
            v = Value::from(vec![v]);
        }
        let sj = to_serde(&v);
        let back = from_serde(&sj).unwrap();
        assert_eq!(back, v);
        std::mem::forget(sj);
    });
}

#[test]
fn path_helpers() {
    let mut p = String::from("arguments");
    json::path::push_key(&mut p, "a");
    json::path::push_index(&mut p, 3);
    json::path::push_key(&mut p, "b c");
    assert_eq!(p, r#"arguments.a[3]["b c"]"#);
    assert!(json::path::is_identifier_key("_x9"));
    assert!(!json::path::is_identifier_key("9x"));
}

// ---------------------------------------------------------------------------
// Property tests

/// Normal form of a JSON number literal's exact value: sign, significant
/// digits without leading/trailing zeros, and the power of ten of the last
/// digit. Zero is `(false, "", 0)`.
fn decimal_value(lit: &str) -> (bool, String, i64) {
    let (negative, rest) = match lit.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap()),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let trimmed = all.trim_start_matches('0');
    let digits = trimmed.trim_end_matches('0');
    if digits.is_empty() {
        return (false, String::new(), 0);
    }
    let trailing = (trimmed.len() - digits.len()) as i64;
    (
        negative,
        digits.to_owned(),
        exp - frac.len() as i64 + trailing,
    )
}

/// Whether serde_json's text for `f` denotes exactly the number `f` becomes:
/// finite, not -0, and not an integral f64 beyond 2^53 within the 64-bit
/// range (serde_json prints those with rounded digits such as
/// `2.6934100508506787e+17`, which denote a different integer).
fn exactly_representable(f: f64) -> bool {
    let beyond_2_53 = f.abs() >= 9_007_199_254_740_992.0;
    let in_64_bit_range = (-9_223_372_036_854_775_808.0..18_446_744_073_709_551_616.0).contains(&f);
    f.is_finite()
        && !(f == 0.0 && f.is_sign_negative())
        && !(f.fract() == 0.0 && beyond_2_53 && in_64_bit_range)
}

/// serde_json values without -0 and with exactly representable numbers.
fn arb_serde_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("exactly representable", |f| exactly_representable(*f))
            .prop_map(serde_json::Value::from),
        (-1000i32..1000, -30i32..30).prop_map(|(m, e)| {
            let f = f64::from(m) * 10f64.powi(e);
            serde_json::Value::from(if f == 0.0 { 0.0 } else { f })
        }),
        any::<String>().prop_map(serde_json::Value::String),
        "[\\x00-\\x7f]{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z\\x00-\\x20\"\\\\é]{0,6}", inner, 0..8)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Our values, with keys in the order serde_json's map would keep them
/// (sorted), so `to_serde` + `serde_json::to_string` is comparable.
fn arb_value_sorted() -> impl Strategy<Value = Value> {
    arb_serde_json().prop_map(|sj| from_serde(&sj).unwrap())
}

/// Our values with keys in arbitrary insertion order.
fn arb_value_any_order() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("lossless", |f| Number::from_f64(f).map(Value::Number)),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
            prop::collection::vec(("\\PC{0,5}", inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_agrees_with_serde_json(sj in arb_serde_json()) {
        let text = serde_json::to_string(&sj).unwrap();
        let ours = parse(&text).unwrap();
        // Compared with the generated value itself: serde_json's own default
        // float parsing is not always correctly rounded (it can come back one
        // ulp off, e.g. for `7.480362603736264e87`), ours is.
        let theirs = from_serde(&sj).unwrap();
        prop_assert_eq!(&ours, &theirs);
        // Same output as serde_json for the same data (integral floats such
        // as `0.0` are integers here, so compare after conversion), and
        // Display round-trips.
        prop_assert_eq!(ours.to_string(), serde_json::to_string(&to_serde(&ours)).unwrap());
        prop_assert_eq!(parse(&ours.to_string()).unwrap(), ours.clone());
        // Pretty-printed input parses to the same value.
        let pretty = serde_json::to_string_pretty(&sj).unwrap();
        prop_assert_eq!(parse(&pretty).unwrap(), ours.clone());
        prop_assert_eq!(parse_slice(pretty.as_bytes(), &ParseOptions::default()).unwrap(), ours);
    }

    #[test]
    fn display_matches_serde_json(v in arb_value_sorted()) {
        prop_assert_eq!(v.to_string(), serde_json::to_string(&to_serde(&v)).unwrap());
        prop_assert_eq!(serde_json::to_string(&v).unwrap(), v.to_string());
    }

    #[test]
    fn display_round_trips_in_insertion_order(v in arb_value_any_order()) {
        let text = v.to_string();
        let back = parse(&text).unwrap();
        prop_assert_eq!(back.to_string(), text);
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(back.clone(), v.clone());
        prop_assert_eq!(to_value(&v).unwrap(), v.clone());
        prop_assert_eq!(from_value::<Value>(&v).unwrap(), v.clone());
        prop_assert_eq!(from_serde(&to_serde(&v)).unwrap(), v);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse_slice(&bytes, &ParseOptions::default());
    }

    #[test]
    fn mutated_json_never_panics(
        sj in arb_serde_json(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = serde_json::to_vec(&sj).unwrap();
        for (idx, b) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = idx.index(bytes.len());
            match b % 3 {
                0 => {
                    let table = b"{}[]\",:\\-0e.tfn \x01\xff";
                    bytes[i] = table[usize::from(b) % table.len()];
                }
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, b),
            }
        }
        if let Err(e) = parse_slice(&bytes, &ParseOptions::default()) {
            prop_assert!(e.offset() <= bytes.len());
            prop_assert!(e.line() >= 1 && e.column() >= 1);
            prop_assert!(e.path().starts_with("arguments"));
            let _ = e.to_string();
        }
    }

    #[test]
    fn number_literals_are_exact_or_rejected(
        int in "-?(0|[1-9][0-9]{0,24})",
        frac in "(\\.[0-9]{1,20})?",
        exp in "([eE][+-]?[0-9]{1,3})?",
    ) {
        let lit = format!("{int}{frac}{exp}");
        match parse(&lit) {
            Ok(v) => {
                let n = v.as_number().unwrap();
                let printed = n.to_string();
                // The printed number denotes exactly the literal's value, or (an integral
                // literal beyond the 64-bit integers, kept because the `f64` is exactly that
                // integer, e.g. 2^70 written out) it is the shortest form serde_json writes,
                // which reads back to that same `f64`, whose exact value is the literal's.
                let exact_integral = n.as_f64().is_some_and(|f| {
                    n.is_f64()
                        && f.fract() == 0.0
                        && decimal_value(&format!("{:.0}", f.abs())) == decimal_value(lit.trim_start_matches('-'))
                });
                prop_assert!(
                    exact_integral || decimal_value(&printed) == decimal_value(&lit),
                    "{} -> {}", lit, printed
                );
                prop_assert_eq!(parse(&printed).unwrap(), v.clone());
                if !n.is_f64() {
                    prop_assert!(n.as_u64().is_some() || n.as_i64().is_some());
                }
            }
            Err(e) => {
                prop_assert!(matches!(
                    e.kind(),
                    ParseErrorKind::InexactNumber(_)
                        | ParseErrorKind::NumberOutOfRange(_)
                        | ParseErrorKind::NegativeZero
                ), "{}: {}", lit, e);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Public API surface

#[test]
fn object_api() {
    let mut o = Object::new();
    assert!(o.is_empty());
    assert_eq!(o.insert("b", 1u8), None);
    assert_eq!(o.insert("a", "x"), None);
    assert_eq!(o.insert("b", true), Some(Value::from(1u8)));
    assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(o.get("b"), Some(&Value::Bool(true)));
    assert_eq!(o.get("zz"), None);
    assert!(o.contains_key("a"));
    assert_eq!(o.len(), 2);
    assert_eq!(o.to_string(), r#"{"b":true,"a":"x"}"#);
    assert_eq!(o.remove("b"), Some(Value::Bool(true)));
    assert_eq!(o.to_string(), r#"{"a":"x"}"#);
    let pairs: Vec<(&str, &Value)> = o.iter().collect();
    assert_eq!(pairs, [("a", &Value::from("x"))]);
    let collected: Object = vec![
        ("k", Value::Null),
        ("j", Value::from(2u8)),
        ("k", Value::from(3u8)),
    ]
    .into_iter()
    .collect();
    assert_eq!(collected.to_string(), r#"{"k":3,"j":2}"#);
    let v = Value::Object(collected);
    assert_eq!(v.get("j"), Some(&Value::from(2u8)));
    assert_eq!(v["k"], Value::from(3u8));
    assert_eq!(v.as_object().map(Object::len), Some(2));
}

#[test]
fn array_and_value_api() {
    let a: Array = (0..3u8).map(Value::from).collect();
    assert_eq!(a.len(), 3);
    assert_eq!(a.iter().filter_map(Value::as_u64).sum::<u64>(), 3);
    assert_eq!(a.to_string(), "[0,1,2]");
    assert_eq!(format!("{a:?}"), "[0,1,2]");
    let v = Value::Array(a.clone());
    assert_eq!(v.as_array(), Some(&a));
    assert_eq!(v[2], Value::from(2u8));
    assert_eq!(v.get_index(5), None);
    assert_eq!(a.into_vec().len(), 3);
    let from_vec = Array::from(vec![Value::Null]);
    assert_eq!(from_vec[0], Value::Null);
    assert_eq!(Value::from(String::from("s")).as_str(), Some("s"));
    assert_eq!(Value::from(Some(1i32)), Value::from(1u8));
    assert_eq!(Value::from(-1i64).as_i64(), Some(-1));
    assert_eq!(Value::from(true).as_bool(), Some(true));
    assert!(Value::Null.is_null() && !Value::from(0u8).is_null());
    assert_eq!(Value::from(1u8).as_number(), Some(&Number::from(1u64)));
    assert_eq!(Value::default(), Value::Null);
    let n = Number::from_f64(1.5).unwrap();
    assert!(n.is_f64() && !n.is_integer());
    assert_eq!(
        (n.as_u64(), n.as_i64(), n.as_f64()),
        (None, None, Some(1.5))
    );
    assert_eq!(Number::from_f64(-0.0), None);
    assert_eq!(Number::from_f64(f64::NAN), None);
    assert_eq!(Number::from(-7i8).to_string(), "-7");
    assert_eq!(Number::from_f64(1e-7).unwrap().to_string(), "1e-7");
    assert_eq!(Number::from_f64(1e300).unwrap().to_string(), "1e+300");
}

#[test]
fn deserialize_bytes_from_strings_and_arrays() {
    struct Raw(Vec<u8>);
    impl<'de> Deserialize<'de> for Raw {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Raw;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Raw, E> {
                    Ok(Raw(v.as_bytes().to_vec()))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut s: A,
                ) -> Result<Raw, A::Error> {
                    let mut out = Vec::new();
                    while let Some(b) = s.next_element::<u8>()? {
                        out.push(b);
                    }
                    Ok(Raw(out))
                }
            }
            d.deserialize_bytes(V)
        }
    }
    assert_eq!(from_value::<Raw>(&Value::from("hi")).unwrap().0, b"hi");
    assert_eq!(
        from_value::<Raw>(&parse("[1,2]").unwrap()).unwrap().0,
        [1, 2]
    );
    let e = from_value::<Raw>(&Value::from(1u8)).err().unwrap();
    assert_eq!(e.to_string(), "invalid type: integer `1`, expected bytes");
}

#[test]
fn values_are_send_sync_and_frozen_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Value>();
    assert_send_sync::<SharedValue>();
    assert_send_sync::<ParseError>();
    assert_send_sync::<json::LosslessError>();
    assert_send_sync::<DeError>();
    let frozen: SharedValue = parse(r#"{"a":[1,2]}"#).unwrap().freeze();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let f = SharedValue::clone(&frozen);
            std::thread::spawn(move || f["a"][1].as_u64())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Some(2));
    }
}

#[test]
fn exactly_representable_integral_floats_are_accepted() {
    // 2^64 is held exactly by an f64 even though its shortest form is 1.8446744073709552e19.
    for lit in [
        "18446744073709551616",
        "18446744073709551616.0",
        "1.8446744073709552e19",
        "-18446744073709551616",
    ] {
        let v = dsh_json::parse(lit).unwrap_or_else(|e| panic!("{lit}: {e}"));
        assert_eq!(
            v.as_f64(),
            Some(if lit.starts_with('-') {
                -18446744073709551616.0
            } else {
                18446744073709551616.0
            })
        );
    }
    // One more than 2^64 is not an f64.
    assert!(dsh_json::parse("18446744073709551617").is_err());
}

#[test]
fn long_integers_exactly_held_by_an_f64_are_accepted() {
    // 2^67 (21 digits), 10^20 and 2^70 (22 digits), in several spellings.
    let two_67 = 147_573_952_589_676_412_928.0_f64;
    let two_70 = 1_180_591_620_717_411_303_424.0_f64;
    for (lit, want) in [
        ("147573952589676412928", two_67),
        ("-147573952589676412928", -two_67),
        ("100000000000000000000", 1e20),
        ("1180591620717411303424", two_70),
        ("1180591620717411303424.000", two_70),
        ("11805916207174113034.24e2", two_70),
        ("0.1180591620717411303424e22", two_70),
    ] {
        let v = dsh_json::parse(lit).unwrap_or_else(|e| panic!("{lit}: {e}"));
        assert_eq!(v.as_f64(), Some(want), "{lit}");
    }
    // 2^1000 written out in full (302 digits) is an f64 too.
    let two_1000 = "10715086071862673209484250490600018105614048117055336074437503883703510511249361224931983788156958581275946729175531468251871452856923140435984577574698574803934567774824230985421074605062371141877954182153046474983581941267398767559165543946077062914571196477686542167660429831652624386837205668069376";
    let v = dsh_json::parse(two_1000).unwrap();
    assert_eq!(v.as_f64(), Some(2f64.powi(1000)));
    // One more than any of these is not an f64: rejected as inexact.
    for lit in [
        "147573952589676412929",
        "1180591620717411303425",
        "1180591620717411303424.5",
        "100000000000000000001",
        &format!("{}7", &two_1000[..two_1000.len() - 1]),
    ] {
        assert_eq!(
            perr(lit).kind(),
            &ParseErrorKind::InexactNumber(dsh_json::path::elide(lit).into_owned()),
            "{lit}"
        );
    }
}

/// Every parse error message stays under this many bytes, whatever the input.
const MESSAGE_BOUND: usize = 600;

fn bounded(text: &str) -> ParseError {
    let e = perr(text);
    let msg = e.to_string();
    assert!(
        msg.len() < MESSAGE_BOUND,
        "{} bytes: {}",
        msg.len(),
        &msg[..300]
    );
    e
}

#[test]
fn huge_inputs_give_short_parse_errors() {
    let ten_mb = 10 * 1024 * 1024;
    // A 10 MB number literal, inexact and out of range.
    let inexact = format!("{{\"n\":0.{}}}", "1".repeat(ten_mb));
    let e = bounded(&inexact);
    let ParseErrorKind::InexactNumber(lit) = e.kind() else {
        panic!("{e}")
    };
    assert_eq!(lit, &format!("0.{}…({} bytes)", "1".repeat(62), ten_mb + 2));
    let huge = format!("[{}]", "9".repeat(ten_mb));
    let e = bounded(&huge);
    assert!(
        matches!(e.kind(), ParseErrorKind::NumberOutOfRange(_)),
        "{e}"
    );
    assert!(e.to_string().starts_with(&format!(
        "number {}…({ten_mb} bytes) is out of",
        "9".repeat(64)
    )));
    // A 10 MB key, duplicated, and as a path segment.
    let key = "k".repeat(ten_mb);
    let e = bounded(&format!("{{\"{key}\":1,\"{key}\":2}}"));
    assert_eq!(
        e.kind(),
        &ParseErrorKind::DuplicateKey(format!("{}…({ten_mb} bytes)", "k".repeat(64)))
    );
    let e = bounded(&format!("{{\"{key}\":[1,-0]}}"));
    assert_eq!(
        e.path(),
        format!("arguments[\"{}…({ten_mb} bytes)\"][1]", "k".repeat(64))
    );
    // A path a million levels deep.
    let deep = format!("{}-0{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let e = dsh_json::parse_with(&deep, &ParseOptions::with_max_depth(2_000_000)).unwrap_err();
    assert_eq!(e.kind(), &ParseErrorKind::NegativeZero);
    assert!(
        e.to_string().len() < MESSAGE_BOUND,
        "{}",
        e.to_string().len()
    );
    assert!(
        e.path().contains("…(path of 3000009 bytes)…"),
        "{}",
        e.path()
    );
}
