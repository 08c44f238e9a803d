//! Reading a tool call's arguments straight from the engine's values, without running
//! any of the program's code: the fast path of the argument snapshot.
//!
//! [`plain`] accepts only what is plainly lossless JSON: null, booleans, strings,
//! finite numbers other than `-0`, dense arrays whose prototype is `Array.prototype`,
//! and objects whose prototype is `Object.prototype` or `null` with only enumerable,
//! string-keyed data properties, nested at most [`MAX_DEPTH`] deep. For anything else
//! (a proxy, an accessor, a symbol key, a hole, a class instance, a cycle, `undefined`,
//! a lone surrogate…) it gives up, having read nothing that runs code (no getter, no
//! proxy trap), and the prelude's encoder checks the same arguments and names the
//! offending path. So the fast path changes what a call costs, never what it does.

use std::ffi::c_int;
use std::mem::MaybeUninit;

use dsh_runtime::json::{Array, Number, Object, Value};
use rquickjs::{Ctx, Type, qjs};

/// Deeper arguments take the encoder's path (which also finds cycles).
pub(crate) const MAX_DEPTH: usize = 32;

/// Objects with more keys take the encoder's path (members are inserted one by one,
/// each checked against the others).
const MAX_KEYS: usize = 256;

/// Where the prototypes of a plain object and a plain array are, as the run started.
/// Addresses, not references: a reference held by a host function would be an edge the
/// engine's cycle collector cannot see. The intrinsic prototypes live as long as their
/// context (which holds them), so the addresses stay theirs for the whole run.
pub(crate) struct Protos {
    object: usize,
    array: usize,
}

impl Protos {
    /// The prototypes of `ctx` (read before the program runs, which could replace the
    /// globals `Object` and `Array`).
    pub(crate) fn of(ctx: &Ctx<'_>) -> rquickjs::Result<Protos> {
        let proto = |name: &str| -> rquickjs::Result<usize> {
            let ctor: rquickjs::Object = ctx.globals().get(name)?;
            let proto: rquickjs::Object = ctor.get("prototype")?;
            Ok(address(proto.as_value()))
        };
        Ok(Protos {
            object: proto("Object")?,
            array: proto("Array")?,
        })
    }
}

/// The address of an object (what identity comparison compares).
#[allow(unsafe_code)]
fn address(value: &rquickjs::Value<'_>) -> usize {
    // SAFETY: reads the pointer out of a live value of the context; nothing is
    // dereferenced.
    unsafe { qjs::JS_VALUE_GET_PTR(value.as_raw()) as usize }
}

/// `value` as JSON when it is plainly lossless (see the module docs), else `None`.
pub(crate) fn plain<'js>(
    ctx: &Ctx<'js>,
    protos: &Protos,
    value: &rquickjs::Value<'js>,
) -> Option<Value> {
    read(ctx, protos, value, 0)
}

fn read<'js>(
    ctx: &Ctx<'js>,
    protos: &Protos,
    value: &rquickjs::Value<'js>,
    depth: usize,
) -> Option<Value> {
    if value.is_proxy() {
        return None;
    }
    match value.type_of() {
        Type::Null => Some(Value::Null),
        Type::Bool => value.as_bool().map(Value::Bool),
        Type::Int => value.as_int().map(|i| Value::from(i64::from(i))),
        Type::Float => value
            .as_float()
            .and_then(Number::from_f64)
            .map(Value::Number),
        Type::String => text(value.as_string()?.to_string().ok()?).map(Value::from),
        Type::Array if depth < MAX_DEPTH => {
            let object = value.as_object()?;
            if address(object.get_prototype()?.as_value()) != protos.array {
                return None;
            }
            array(ctx, protos, value, depth)
        }
        Type::Object if depth < MAX_DEPTH => {
            let object = value.as_object()?;
            match object.get_prototype() {
                None => {}
                Some(proto) if address(proto.as_value()) == protos.object => {}
                Some(_) => return None,
            }
            object_of(ctx, protos, value, depth)
        }
        // Undefined, symbols, BigInts, functions, proxies, promises, errors, and
        // anything too deep.
        _ => None,
    }
}

/// A string as the encoder would pass it: `None` when the engine's string is not valid
/// UTF-16 (a lone surrogate comes out as U+FFFD, which the encoder would not accept).
fn text(s: String) -> Option<String> {
    (!s.contains('\u{FFFD}')).then_some(s)
}

/// An own property of an ordinary object, read without running code: its value when
/// it is an enumerable data property.
#[allow(unsafe_code)]
fn data_property<'js>(
    ctx: &Ctx<'js>,
    object: &rquickjs::Value<'js>,
    atom: qjs::JSAtom,
) -> Option<rquickjs::Value<'js>> {
    let raw = ctx.as_raw().as_ptr();
    let mut desc = MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
    // SAFETY: `raw` is this context, `object` a live value of it that is not a proxy
    // (checked by the callers through `type_of`), so no JavaScript runs; `atom` is
    // owned by the caller for the duration of the call. On `1` the descriptor's three
    // values are new references, each taken over by a `Value` below and freed with it.
    unsafe {
        match qjs::JS_GetOwnProperty(raw, desc.as_mut_ptr(), object.as_raw(), atom) {
            1 => {}
            0 => return None,
            _ => {
                drop(ctx.catch());
                return None;
            }
        }
        let desc = desc.assume_init();
        let value = rquickjs::Value::from_raw(ctx.clone(), desc.value);
        let getter = rquickjs::Value::from_raw(ctx.clone(), desc.getter);
        let setter = rquickjs::Value::from_raw(ctx.clone(), desc.setter);
        drop((getter, setter));
        let flags = desc.flags as u32;
        if flags & qjs::JS_PROP_GETSET != 0 || flags & qjs::JS_PROP_ENUMERABLE == 0 {
            return None;
        }
        Some(value)
    }
}

/// The own property keys of `object` (strings and symbols), freed when dropped.
struct Keys<'a, 'js> {
    ctx: &'a Ctx<'js>,
    tab: *mut qjs::JSPropertyEnum,
    len: u32,
}

impl<'a, 'js> Keys<'a, 'js> {
    #[allow(unsafe_code)]
    fn of(ctx: &'a Ctx<'js>, object: &rquickjs::Value<'js>) -> Option<Keys<'a, 'js>> {
        let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
        let mut len: u32 = 0;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SYMBOL_MASK) as c_int;
        // SAFETY: as in `data_property`: a live, non-proxy value of this context, so no
        // JavaScript runs. On success the table and its atoms are ours, freed in `drop`.
        let status = unsafe {
            qjs::JS_GetOwnPropertyNames(
                ctx.as_raw().as_ptr(),
                &mut tab,
                &mut len,
                object.as_raw(),
                flags,
            )
        };
        if status < 0 {
            drop(ctx.catch());
            return None;
        }
        Some(Keys { ctx, tab, len })
    }

    #[allow(unsafe_code)]
    fn entries(&self) -> &[qjs::JSPropertyEnum] {
        if self.tab.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: the engine returned `len` initialized entries at `tab`, alive until
        // `drop`, which needs `&mut self`.
        unsafe { std::slice::from_raw_parts(self.tab, self.len as usize) }
    }
}

impl Drop for Keys<'_, '_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if !self.tab.is_null() {
            // SAFETY: the table and atoms `JS_GetOwnPropertyNames` gave us, freed once.
            unsafe { qjs::JS_FreePropertyEnum(self.ctx.as_raw().as_ptr(), self.tab, self.len) };
        }
    }
}

/// A key as a string; `None` for a symbol.
#[allow(unsafe_code)]
fn key_text<'js>(ctx: &Ctx<'js>, atom: qjs::JSAtom) -> Option<String> {
    // SAFETY: `atom` is alive (owned by the caller's `Keys`); the returned value is a
    // new reference, taken over by the `Value`.
    let key = unsafe {
        rquickjs::Value::from_raw(
            ctx.clone(),
            qjs::JS_AtomToValue(ctx.as_raw().as_ptr(), atom),
        )
    };
    text(key.as_string()?.to_string().ok()?)
}

fn object_of<'js>(
    ctx: &Ctx<'js>,
    protos: &Protos,
    object: &rquickjs::Value<'js>,
    depth: usize,
) -> Option<Value> {
    let keys = Keys::of(ctx, object)?;
    if keys.entries().len() > MAX_KEYS {
        return None;
    }
    let mut out = Object::with_capacity(keys.entries().len());
    for entry in keys.entries() {
        if !entry.is_enumerable {
            return None;
        }
        let key = key_text(ctx, entry.atom)?;
        let value = data_property(ctx, object, entry.atom)?;
        out.insert(key, read(ctx, protos, &value, depth + 1)?);
    }
    Some(Value::Object(out))
}

#[allow(unsafe_code)]
fn array<'js>(
    ctx: &Ctx<'js>,
    protos: &Protos,
    array: &rquickjs::Value<'js>,
    depth: usize,
) -> Option<Value> {
    let len = u32::try_from(array.as_array()?.len()).ok()?;
    // Only the items and `length`: any other key (or a hole) takes the encoder's path.
    let keys = Keys::of(ctx, array)?;
    if keys.entries().len() != len as usize + 1 {
        return None;
    }
    let mut out = Array::with_capacity(len as usize);
    for i in 0..len {
        // SAFETY: a new atom for the index, freed right after its use.
        let atom = unsafe { qjs::JS_NewAtomUInt32(ctx.as_raw().as_ptr(), i) };
        let item = data_property(ctx, array, atom);
        // SAFETY: freed once; `item` holds its own reference to the value.
        unsafe { qjs::JS_FreeAtom(ctx.as_raw().as_ptr(), atom) };
        out.push(read(ctx, protos, &item?, depth + 1)?);
    }
    Some(Value::Array(out))
}
