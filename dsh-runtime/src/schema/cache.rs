//! The per-type schema cache behind [`ToolSchema::schema`](super::ToolSchema::schema).
//!
//! Generic statics do not exist in Rust, so schemas of generic instantiations
//! (`Vec<Filter>`, `Option<u32>`) are cached in one global map keyed by `TypeId`. Lookups
//! happen when a tool is defined, not per call: a tool keeps its schemas in its own static.

use std::any::{TypeId, type_name};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use super::{Schema, ToolSchema};

type Cache = RwLock<HashMap<TypeId, Arc<Schema>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

thread_local! {
    /// Types whose schema is being built on this thread, to turn an undetected recursive
    /// type into a clear panic instead of a stack overflow.
    static BUILDING: RefCell<Vec<TypeId>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn get_or_build<T: ToolSchema + ?Sized + 'static>() -> Arc<Schema> {
    // The generic part is this one line; the lookup, the recursion guard and the insert
    // are compiled once, not once per schema type (compile time of crates with many tools).
    get_or_build_erased(TypeId::of::<T>(), type_name::<T>, T::build_schema)
}

#[inline(never)]
fn get_or_build_erased(
    id: TypeId,
    name: fn() -> &'static str,
    build: fn() -> Schema,
) -> Arc<Schema> {
    {
        // A poisoned lock only means another thread panicked while inserting; the map
        // itself is always consistent (single insert), so keep using it.
        let map = cache().read().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = map.get(&id) {
            return Arc::clone(s);
        }
    }
    let recursive = BUILDING.with(|b| {
        let mut b = b.borrow_mut();
        if b.contains(&id) {
            true
        } else {
            b.push(id);
            false
        }
    });
    if recursive {
        // The derive rejects directly recursive types at compile time; this catches
        // recursion through hand-written impls or other types.
        panic!(
            "`{}` is a recursive type: the schema vocabulary has no references, so a recursive type cannot have a tool schema",
            name()
        );
    }
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            BUILDING.with(|b| {
                b.borrow_mut().pop();
            });
        }
    }
    let built = {
        let _pop = Pop;
        Arc::new(build())
    };
    let mut map = cache().write().unwrap_or_else(|e| e.into_inner());
    Arc::clone(map.entry(id).or_insert(built))
}
