//! W3C trace context (and baggage) in a request's `params._meta` (SEP-414), through the
//! global propagator (`opentelemetry::global::set_text_map_propagator`; dsh-otel's
//! `init` installs the W3C one).
//!
//! Below `server` and `approval`, which both use it.

use opentelemetry::propagation::{Extractor, Injector};
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// A request's `_meta` read as a carrier.
struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// A request's `_meta` written as a carrier.
struct MetaMut<'a>(&'a mut Map<String, Value>);

impl Injector for MetaMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// Parent `span` on the trace context of `meta`, if it carries one.
pub(crate) fn set_parent(span: &Span, meta: &Map<String, Value>) {
    if !meta.contains_key("traceparent") {
        return;
    }
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Meta(meta)));
    let _ = span.set_parent(cx);
}

/// Write the current span's trace context into a request's `meta`.
pub(crate) fn inject(meta: &mut Map<String, Value>) {
    let cx = Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&cx, &mut MetaMut(meta));
    });
}
