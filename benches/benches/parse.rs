//! `parse`: the lossless snapshot parse (`dsh_json::parse`) against
//! `serde_json::from_str::<serde_json::Value>` on the same text.
//!
//! Inputs (criterion group `parse/<input>`, throughput in bytes so criterion prints MB/s):
//!
//! | input | text |
//! | --- | --- |
//! | `B` | shape B's valid arguments (`common::B_VALID`, 303 bytes) |
//! | `write_100k` | a `write` call: `{"file_path", "content"}` whose ~100 KB `content` is source text with `\n`, `\t`, `\"`, `\\` escapes, `\u` escapes and raw multi-byte UTF-8 |
//! | `numbers_1m` | a ~1 MB array of numbers: integers, short decimals, exponents, negatives |
//!
//! Contenders: `ours` (`dsh_runtime::json::parse`, i.e. `dsh_json::parse`) and
//! `serde_json` (`serde_json::from_str::<serde_json::Value>`). Both results are dropped
//! inside the timed iteration, as a caller would.
//!
//! Run: `cargo bench -p dsh-benches --bench parse`.
//!
//! Profiling (callgrind instruction counts are deterministic): with the environment
//! variable `PARSE_PROFILE=<input>:<contender>:<iterations>` the binary runs only that loop
//! and exits, e.g.
//!
//! ```sh
//! cargo bench -p dsh-benches --bench parse --no-run        # prints the binary's path
//! PARSE_PROFILE=B:ours:20000 valgrind --tool=callgrind target/release/deps/parse-<hash>
//! ```

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput};

/// A deterministic xorshift generator (the inputs are the same in every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A `write` call whose `content` is about `target` bytes of JSON-escaped source text.
fn write_call(target: usize) -> String {
    const LINES: [&str; 8] = [
        "fn main() {",
        "    let greeting = \"héllo, wörld\"; // naïve café",
        "\tprintln!(\"{} \\u{1F600} {}\", greeting, path.display());",
        "    // 日本語のコメント: 値を返す",
        "    let re = Regex::new(r\"^\\d+\\s*$\").unwrap();",
        "    assert_eq!(x, 42, \"x was {x:?} 🚀\");",
        "}",
        "",
    ];
    let mut content = String::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    while content.len() < target {
        let line = LINES[(rng.next() % LINES.len() as u64) as usize];
        content.push_str(line);
        content.push('\n');
    }
    let mut text = String::from(r#"{"file_path":"/work/project/src/main.rs","content":"#);
    // serde_json writes `\n`, `\t`, `\"`, `\\`; sprinkle `\u` escapes in by hand.
    let escaped = serde_json::to_string(&content).expect("string");
    let escaped = escaped
        .replace("é", "\\u00e9")
        .replacen("日本", "\\u65e5\\u672c", 50);
    text.push_str(&escaped);
    text.push('}');
    text
}

/// A JSON array of about `target` bytes of numbers.
fn number_array(target: usize) -> String {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut text = String::from("[");
    while text.len() < target {
        if text.len() > 1 {
            text.push(',');
        }
        let r = rng.next();
        let n = match r % 5 {
            0 => format!("{}", (r >> 8) % 100_000),
            1 => format!("-{}", (r >> 8) % 1_000_000_000),
            2 => format!("{}.{:02}", (r >> 8) % 10_000, (r >> 40) % 100),
            3 => format!("{}e{}", (r >> 8) % 1000 + 1, (r >> 40) % 20),
            _ => format!("{}", ((r >> 11) as f64) / (1u64 << 53) as f64),
        };
        text.push_str(&n);
    }
    text.push(']');
    text
}

/// The input names, in report order.
const INPUTS: [&str; 3] = ["B", "write_100k", "numbers_1m"];

fn input(name: &str) -> String {
    match name {
        "B" => common::B_VALID.to_owned(),
        "write_100k" => write_call(100 * 1024),
        "numbers_1m" => number_array(1024 * 1024),
        _ => panic!("unknown input {name}"),
    }
}

fn ours(text: &str) -> dsh_runtime::json::Value {
    dsh_runtime::json::parse(text).expect("our parse")
}

fn serde(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("serde_json parse")
}

/// Whether two parses agree. Floats may differ in the last bit: serde_json's default
/// float parsing is not always correctly rounded (ours is, or rejects the literal).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= x.abs() * 4.0 * f64::EPSILON
        }
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}

fn bench(c: &mut Criterion) {
    for name in INPUTS {
        let text = input(name);
        // Both parsers accept the input and agree on it before timing.
        let a = ours(&text);
        let b = serde(&text);
        assert!(
            same(&dsh_runtime::json::to_serde(&a), &b),
            "{name}: parsers disagree"
        );
        let mut group = c.benchmark_group(format!("parse/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("ours", |bench| bench.iter(|| ours(black_box(&text))));
        group.bench_function("serde_json", |bench| bench.iter(|| serde(black_box(&text))));
        group.finish();
    }
}

fn profile(spec: &str) {
    let mut parts = spec.split(':');
    let (Some(name), Some(who), Some(n)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("PARSE_PROFILE=<input>:<contender>:<iterations>, got {spec:?}");
    };
    let n: usize = n.parse().expect("iterations");
    let text = input(name);
    for _ in 0..n {
        match who {
            "ours" => drop(black_box(ours(black_box(&text)))),
            "serde_json" => drop(black_box(serde(black_box(&text)))),
            _ => panic!("unknown contender {who}"),
        }
    }
}

fn main() {
    if let Ok(spec) = std::env::var("PARSE_PROFILE") {
        profile(&spec);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
