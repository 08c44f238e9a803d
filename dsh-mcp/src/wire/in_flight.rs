//! The requests in flight on a connection (stdio) or in a session (HTTP): a request whose
//! id is in flight is refused (see [`crate::wire::read`]).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use crate::util::lock;

/// The requests in flight, by key (a request id, or a session and a request id): a key
/// is free again once its handler ended and its answer was sent (or the client
/// cancelled it, after which no answer is sent).
pub(crate) struct InFlight<K>(Mutex<HashMap<K, Slot>>);

#[derive(Default)]
struct Slot {
    handler_done: bool,
    answered: bool,
}

impl<K: Eq + Hash + Clone + Send + Sync + 'static> InFlight<K> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(InFlight(Mutex::new(HashMap::new())))
    }

    /// Take `key`: `None` when a request with that key is in flight, else the token the
    /// handler holds (dropping its last clone marks the handler done).
    pub(crate) fn begin(self: &Arc<Self>, key: K) -> Option<HandlerToken> {
        let mut map = lock(&self.0);
        if map.contains_key(&key) {
            return None;
        }
        map.insert(key.clone(), Slot::default());
        let table = self.clone();
        Some(HandlerToken(Arc::new(TokenInner(Box::new(move || {
            table.update(&key, |s| s.handler_done = true);
        })))))
    }

    /// The request `key` was answered (or cancelled: no answer will be sent).
    pub(crate) fn answered(&self, key: &K) {
        self.update(key, |s| s.answered = true);
    }

    fn update(&self, key: &K, f: impl FnOnce(&mut Slot)) {
        let mut map = lock(&self.0);
        if let Some(slot) = map.get_mut(key) {
            f(slot);
            if slot.handler_done && slot.answered {
                map.remove(key);
            }
        }
    }
}

/// Carried in a request's extensions to its handler: the request's handler has ended
/// when the last clone is dropped.
#[derive(Clone)]
pub(crate) struct HandlerToken(#[allow(dead_code)] Arc<TokenInner>);

struct TokenInner(Box<dyn Fn() + Send + Sync>);

impl Drop for TokenInner {
    fn drop(&mut self) {
        (self.0)();
    }
}
