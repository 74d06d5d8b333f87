//! [`Output<T>`]: a value that becomes known later, with the resources it depends on and
//! whether it is secret, and [`Input<T>`]: a plain value or an output.
//!
//! The rules are the type system's:
//! * **Dependencies** are URNs of resources; a derived output depends on everything its
//!   sources depend on (`apply`, `all` and `unwrap` take the union).
//! * **Unknown** (a preview, before the resource exists): deriving from an unknown output gives
//!   an unknown output and the callback is not run; `all` is unknown when any part is.
//! * **Secret**: deriving from a secret output gives a secret output; `all` is secret when any
//!   part is. [`Output::unsecret`] removes the mark explicitly.
//! * **Failed** (a registration failed, or a callback returned an error): everything derived
//!   fails with the same error, and the program fails once its outstanding requests finish.
//!
//! Outputs are single-threaded (`Rc`): a component runs on one thread, and callbacks run as
//! soon as what they wait for is known (on the host's completions, in the event loop).

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::value::{Archive, Asset, PropertyMap, Value};

/// What an output resolved to.
#[derive(Clone)]
pub(crate) enum Known<T> {
    Value(T),
    Unknown,
    Failed(Rc<str>),
}

/// A resolved output: its value and metadata.
#[derive(Clone)]
pub(crate) struct Resolved<T> {
    pub known: Known<T>,
    pub secret: bool,
    pub deps: BTreeSet<String>,
}

type Waiter<T> = Box<dyn FnOnce(&Resolved<T>)>;

enum State<T> {
    Pending(Vec<Waiter<T>>),
    Ready(Resolved<T>),
}

/// A value that becomes known later; cheap to clone (clones share the value).
pub struct Output<T> {
    cell: Rc<RefCell<State<T>>>,
}

impl<T> fmt::Debug for Output<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.cell.borrow() {
            State::Pending(_) => "pending",
            State::Ready(r) => match r.known {
                Known::Value(_) => "known",
                Known::Unknown => "unknown",
                Known::Failed(_) => "failed",
            },
        };
        write!(f, "Output({state})")
    }
}

impl<T> Clone for Output<T> {
    fn clone(&self) -> Self {
        Output {
            cell: self.cell.clone(),
        }
    }
}

/// Resolves the output it was created with (once).
pub(crate) struct Resolver<T> {
    cell: Rc<RefCell<State<T>>>,
}

impl<T: Clone + 'static> Resolver<T> {
    pub fn resolve(self, resolved: Resolved<T>) {
        let waiters = {
            let mut state = self.cell.borrow_mut();
            match std::mem::replace(&mut *state, State::Ready(resolved.clone())) {
                State::Pending(waiters) => waiters,
                // Resolving twice is a bug in the SDK; keep the first value.
                State::Ready(first) => {
                    *state = State::Ready(first);
                    return;
                }
            }
        };
        for waiter in waiters {
            waiter(&resolved);
        }
    }
}

impl<T: Clone + 'static> Output<T> {
    /// An output and the resolver that settles it.
    pub(crate) fn pending() -> (Output<T>, Resolver<T>) {
        let cell = Rc::new(RefCell::new(State::Pending(Vec::new())));
        (Output { cell: cell.clone() }, Resolver { cell })
    }

    pub(crate) fn resolved(resolved: Resolved<T>) -> Output<T> {
        Output {
            cell: Rc::new(RefCell::new(State::Ready(resolved))),
        }
    }

    /// A known, plain output with no dependencies.
    pub fn new(value: T) -> Output<T> {
        Output::resolved(Resolved {
            known: Known::Value(value),
            secret: false,
            deps: BTreeSet::new(),
        })
    }

    /// A known secret output.
    pub fn secret(value: T) -> Output<T> {
        Output::resolved(Resolved {
            known: Known::Value(value),
            secret: true,
            deps: BTreeSet::new(),
        })
    }

    /// An output whose value is not known (as in a preview).
    pub fn unknown() -> Output<T> {
        Output::resolved(Resolved {
            known: Known::Unknown,
            secret: false,
            deps: BTreeSet::new(),
        })
    }

    /// An output that failed with `message`.
    pub fn failed(message: impl fmt::Display) -> Output<T> {
        Output::resolved(Resolved {
            known: Known::Failed(message.to_string().into()),
            secret: false,
            deps: BTreeSet::new(),
        })
    }

    /// Runs `f` once the output is resolved (at once when it already is).
    pub(crate) fn on_resolved(&self, f: impl FnOnce(&Resolved<T>) + 'static) {
        let ready = {
            let mut state = self.cell.borrow_mut();
            match &mut *state {
                State::Pending(waiters) => {
                    waiters.push(Box::new(f));
                    return;
                }
                State::Ready(r) => r.clone(),
            }
        };
        f(&ready);
    }

    /// The resolved value and metadata, if resolved yet.
    pub(crate) fn peek(&self) -> Option<Resolved<T>> {
        match &*self.cell.borrow() {
            State::Ready(r) => Some(r.clone()),
            State::Pending(_) => None,
        }
    }

    /// The value once known: `Some(Ok(v))` known, `Some(Err(..))` failed, `None` unknown or
    /// not resolved yet. For tests and for reading settled results.
    pub fn try_get(&self) -> Option<Result<T, String>> {
        match self.peek()?.known {
            Known::Value(v) => Some(Ok(v)),
            Known::Unknown => None,
            Known::Failed(e) => Some(Err(e.to_string())),
        }
    }

    /// True once resolved and unknown.
    pub fn is_unknown(&self) -> bool {
        matches!(self.peek().map(|r| r.known), Some(Known::Unknown))
    }

    /// True once resolved and secret.
    pub fn is_secret(&self) -> bool {
        self.peek().is_some_and(|r| r.secret)
    }

    /// The resources the output depends on (those known so far).
    pub fn dependencies(&self) -> BTreeSet<String> {
        self.peek().map(|r| r.deps).unwrap_or_default()
    }

    /// Derives an output: `f` runs on the value once it is known, never on an unknown.
    pub fn apply<U: Clone + 'static>(&self, f: impl FnOnce(T) -> U + 'static) -> Output<U> {
        self.try_apply(move |v| Ok::<U, std::convert::Infallible>(f(v)))
    }

    /// Like [`Output::apply`]; an error fails the derived output (and the program).
    pub fn try_apply<U: Clone + 'static, E: fmt::Display>(
        &self,
        f: impl FnOnce(T) -> Result<U, E> + 'static,
    ) -> Output<U> {
        let (out, resolver) = Output::pending();
        self.on_resolved(move |r| {
            let known = match &r.known {
                Known::Value(v) => match f(v.clone()) {
                    Ok(u) => Known::Value(u),
                    Err(e) => {
                        let message: Rc<str> = format!("apply failed: {e}").into();
                        crate::program::runtime::record_error(&message);
                        Known::Failed(message)
                    }
                },
                Known::Unknown => Known::Unknown,
                Known::Failed(e) => Known::Failed(e.clone()),
            };
            resolver.resolve(Resolved {
                known,
                secret: r.secret,
                deps: r.deps.clone(),
            });
        });
        out
    }

    /// Derives an output from a callback that itself returns an output (flattened).
    pub fn apply_output<U: Clone + 'static>(
        &self,
        f: impl FnOnce(T) -> Output<U> + 'static,
    ) -> Output<U> {
        self.apply(f).unwrap()
    }

    /// The same value, marked secret.
    pub fn as_secret(&self) -> Output<T> {
        self.map_meta(|r| r.secret = true)
    }

    /// The same value, no longer secret (explicitly revealing it).
    pub fn unsecret(&self) -> Output<T> {
        self.map_meta(|r| r.secret = false)
    }

    /// The same value, depending on `urns` as well.
    #[cfg(test)]
    pub(crate) fn with_dependencies(&self, urns: BTreeSet<String>) -> Output<T> {
        self.map_meta(move |r| r.deps.extend(urns))
    }

    fn map_meta(&self, f: impl FnOnce(&mut Resolved<T>) + 'static) -> Output<T> {
        let (out, resolver) = Output::pending();
        self.on_resolved(move |r| {
            let mut r = r.clone();
            f(&mut r);
            resolver.resolve(r);
        });
        out
    }

    /// Every output of `items`, as one output of their values (unknown if any is unknown,
    /// secret if any is secret, depending on all of their dependencies).
    pub fn all_vec(items: Vec<Output<T>>) -> Output<Vec<T>> {
        join(items, |values| values)
    }

    /// Every output of a map, as one output of a map (see [`Output::all_vec`]).
    pub fn all_map(items: IndexMap<String, Output<T>>) -> Output<IndexMap<String, T>> {
        let (keys, outputs): (Vec<String>, Vec<Output<T>>) = items.into_iter().unzip();
        join(outputs, move |values| {
            keys.into_iter().zip(values).collect()
        })
    }
}

impl<T: Clone + 'static> Output<Output<T>> {
    /// Flattens an output of an output: the inner value, with both levels' dependencies and
    /// secretness.
    pub fn unwrap(&self) -> Output<T> {
        let (out, resolver) = Output::pending();
        self.on_resolved(move |outer| match &outer.known {
            Known::Value(inner) => {
                let (secret, deps) = (outer.secret, outer.deps.clone());
                inner.on_resolved(move |r| {
                    let mut r = r.clone();
                    r.secret |= secret;
                    r.deps.extend(deps);
                    resolver.resolve(r);
                });
            }
            Known::Unknown => resolver.resolve(Resolved {
                known: Known::Unknown,
                secret: outer.secret,
                deps: outer.deps.clone(),
            }),
            Known::Failed(e) => resolver.resolve(Resolved {
                known: Known::Failed(e.clone()),
                secret: outer.secret,
                deps: outer.deps.clone(),
            }),
        });
        out
    }
}

impl Output<Value> {
    /// Lifted property access: the value at `key` of an object output (null when absent).
    /// A secret or unknown property makes the result secret or unknown.
    pub fn get(&self, key: &str) -> Output<Value> {
        let key = key.to_owned();
        self.flatten_value()
            .apply(move |v| match v {
                Value::Object(mut map) => map.shift_remove(&key).unwrap_or(Value::Null),
                _ => Value::Null,
            })
            .flatten_value()
    }

    /// Lifted element access of an array output (null when out of range).
    pub fn index(&self, i: usize) -> Output<Value> {
        self.flatten_value()
            .apply(move |v| match v {
                Value::Array(mut items) if i < items.len() => items.swap_remove(i),
                _ => Value::Null,
            })
            .flatten_value()
    }

    /// Moves secret and unknown markers inside a value onto the output itself.
    pub(crate) fn flatten_value(&self) -> Output<Value> {
        let (out, resolver) = Output::pending();
        self.on_resolved(move |r| {
            let mut r = r.clone();
            if let Known::Value(v) = &r.known {
                let (value, secret, unknown) = lift_markers(v.clone());
                r.secret |= secret;
                r.known = if unknown {
                    Known::Unknown
                } else {
                    Known::Value(value)
                };
            }
            resolver.resolve(r);
        });
        out
    }

    /// Converts to a typed output; a value of the wrong type fails it.
    pub fn typed<U: FromValue + Clone + 'static>(&self) -> Output<U> {
        self.try_apply(|v| U::from_value(&v))
    }
}

impl<T: IntoValue + Clone + 'static> Output<T> {
    /// The output as a [`Value`] output (for untyped inputs).
    pub fn to_value(&self) -> Output<Value> {
        self.apply(IntoValue::into_value)
    }
}

/// Strips a value's top-level secret / output wrappers, reporting whether it was secret or
/// unknown at the top.
fn lift_markers(value: Value) -> (Value, bool, bool) {
    match value {
        Value::Secret(inner) => {
            let (v, _, unknown) = lift_markers(*inner);
            (v, true, unknown)
        }
        Value::Unknown => (Value::Null, false, true),
        Value::Output(o) => match o.value {
            Some(inner) => {
                let (v, secret, unknown) = lift_markers(*inner);
                (v, secret || o.secret, unknown)
            }
            None => (Value::Null, o.secret, true),
        },
        other => (other, false, false),
    }
}

/// Joins outputs: calls `finish` with every value once all are known.
fn join<T: Clone + 'static, U: Clone + 'static>(
    items: Vec<Output<T>>,
    finish: impl FnOnce(Vec<T>) -> U + 'static,
) -> Output<U> {
    let (out, resolver) = Output::pending();
    when_all(items, move |settled| {
        let mut secret = false;
        let mut deps = BTreeSet::new();
        let mut values = Vec::with_capacity(settled.len());
        let mut failed = None;
        let mut unknown = false;
        for r in settled {
            secret |= r.secret;
            deps.extend(r.deps);
            match r.known {
                Known::Value(v) => values.push(v),
                Known::Unknown => unknown = true,
                Known::Failed(e) => failed = failed.or(Some(e)),
            }
        }
        let known = match (failed, unknown) {
            (Some(e), _) => Known::Failed(e),
            (None, true) => Known::Unknown,
            (None, false) => Known::Value(finish(values)),
        };
        resolver.resolve(Resolved {
            known,
            secret,
            deps,
        });
    });
    out
}

/// Calls `f` with every output's resolution, in order, once all are resolved (at once for
/// none).
pub(crate) fn when_all<T: Clone + 'static>(
    items: Vec<Output<T>>,
    f: impl FnOnce(Vec<Resolved<T>>) + 'static,
) {
    type Settled<T> = Box<dyn FnOnce(Vec<Resolved<T>>)>;
    struct Settling<T> {
        slots: Vec<Option<Resolved<T>>>,
        left: usize,
        f: Option<Settled<T>>,
    }
    let count = items.len();
    let state = Rc::new(RefCell::new(Settling {
        slots: vec![None; count],
        left: count,
        f: Some(Box::new(f)),
    }));
    let finish = |state: &Rc<RefCell<Settling<T>>>| {
        let (slots, f) = {
            let mut s = state.borrow_mut();
            (std::mem::take(&mut s.slots), s.f.take())
        };
        if let Some(f) = f {
            f(slots.into_iter().flatten().collect());
        }
    };
    if count == 0 {
        finish(&state);
        return;
    }
    for (i, item) in items.into_iter().enumerate() {
        let state = state.clone();
        item.on_resolved(move |r| {
            let done = {
                let mut s = state.borrow_mut();
                s.slots[i] = Some(r.clone());
                s.left -= 1;
                s.left == 0
            };
            if done {
                finish(&state);
            }
        });
    }
}

/// Tuples of outputs joined into one output of a tuple: `all((a, b))`.
pub trait All {
    type Output;
    fn all(self) -> Self::Output;
}

macro_rules! all_tuple {
    ($($t:ident $v:ident $i:tt),+) => {
        impl<$($t: Clone + 'static),+> All for ($(Output<$t>,)+) {
            type Output = Output<($($t,)+)>;
            fn all(self) -> Self::Output {
                // Erase the parts' types to join them, then restore them in order.
                let parts: Vec<Output<Rc<dyn Any>>> = vec![
                    $(self.$i.apply(|v| Rc::new(v) as Rc<dyn Any>)),+
                ];
                join(parts, |values| {
                    let mut it = values.into_iter();
                    ($({
                        let $v: $t = it
                            .next()
                            .and_then(|any| any.downcast_ref::<$t>().cloned())
                            .unwrap_or_else(|| unreachable!("one value of its own type per part"));
                        $v
                    },)+)
                })
            }
        }
    };
}

all_tuple!(A a 0, B b 1);
all_tuple!(A a 0, B b 1, C c 2);
all_tuple!(A a 0, B b 1, C c 2, D d 3);
all_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4);
all_tuple!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);

/// Joins a tuple of outputs: `all((name.clone(), port.clone())).apply(|(n, p)| ...)`.
pub fn all<A: All>(outputs: A) -> A::Output {
    outputs.all()
}

/// A plain value or an output, as resource arguments take them.
#[derive(Clone)]
pub enum Input<T> {
    Value(T),
    Output(Output<T>),
}

impl<T: Clone + 'static> Input<T> {
    /// The input as an output (a plain value is a known, plain output).
    pub fn into_output(self) -> Output<T> {
        match self {
            Input::Value(v) => Output::new(v),
            Input::Output(o) => o,
        }
    }
}

/// What an [`Input<T>`] can be made from: plain values (`&str` becomes `String`, `i32`
/// becomes `i64`) and outputs. The associated type keeps `args.set("x", "text")` unambiguous.
pub trait IntoInput {
    type Value: Clone + 'static;
    fn into_input(self) -> Input<Self::Value>;
}

impl<T: Clone + 'static> IntoInput for Input<T> {
    type Value = T;
    fn into_input(self) -> Input<T> {
        self
    }
}

impl<T: Clone + 'static> IntoInput for Output<T> {
    type Value = T;
    fn into_input(self) -> Input<T> {
        Input::Output(self)
    }
}

impl<T: Clone + 'static> IntoInput for &Output<T> {
    type Value = T;
    fn into_input(self) -> Input<T> {
        Input::Output(self.clone())
    }
}

impl IntoInput for &str {
    type Value = String;
    fn into_input(self) -> Input<String> {
        Input::Value(self.to_owned())
    }
}

impl IntoInput for i32 {
    type Value = i64;
    fn into_input(self) -> Input<i64> {
        Input::Value(self.into())
    }
}

macro_rules! plain_input {
    ($($t:ty),*) => {$(
        impl IntoInput for $t {
            type Value = $t;
            fn into_input(self) -> Input<$t> {
                Input::Value(self)
            }
        }
    )*};
}

plain_input!(String, i64, f64, bool, Value, Asset, Archive);

impl<T: Clone + 'static> IntoInput for Vec<T> {
    type Value = Vec<T>;
    fn into_input(self) -> Input<Vec<T>> {
        Input::Value(self)
    }
}

impl<T: Clone + 'static> IntoInput for IndexMap<String, T> {
    type Value = IndexMap<String, T>;
    fn into_input(self) -> Input<IndexMap<String, T>> {
        Input::Value(self)
    }
}

impl<T: Clone + 'static> IntoInput for Option<T> {
    type Value = Option<T>;
    fn into_input(self) -> Input<Option<T>> {
        Input::Value(self)
    }
}

/// Types that become property values (resource inputs, stack outputs).
pub trait IntoValue {
    fn into_value(self) -> Value;
}

/// Types read from property values (resource outputs, config).
pub trait FromValue: Sized {
    fn from_value(value: &Value) -> Result<Self, String>;
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}

impl FromValue for Value {
    fn from_value(value: &Value) -> Result<Self, String> {
        Ok(value.clone())
    }
}

macro_rules! scalar {
    ($t:ty, $kind:literal, $read:expr) => {
        impl IntoValue for $t {
            fn into_value(self) -> Value {
                Value::from(self)
            }
        }
        impl FromValue for $t {
            fn from_value(value: &Value) -> Result<Self, String> {
                let read: fn(&Value) -> Option<$t> = $read;
                read(value).ok_or_else(|| format!("expected {}, found {}", $kind, value.kind()))
            }
        }
    };
}

scalar!(String, "a string", |v| v.as_str().map(str::to_owned));
scalar!(bool, "a bool", Value::as_bool);
scalar!(f64, "a number", Value::as_f64);
scalar!(i64, "a whole number", Value::as_i64);

/// Assets and archives (`pulumi.json#/Asset`, `#/Archive`) as typed SDKs take them.
macro_rules! blob {
    ($t:ident, $kind:literal) => {
        impl IntoValue for $t {
            fn into_value(self) -> Value {
                Value::$t(self)
            }
        }
        impl FromValue for $t {
            fn from_value(value: &Value) -> Result<Self, String> {
                match value {
                    Value::$t(v) => Ok(v.clone()),
                    other => Err(format!("expected {}, found {}", $kind, other.kind())),
                }
            }
        }
    };
}

blob!(Asset, "an asset");
blob!(Archive, "an archive");

impl IntoValue for &str {
    fn into_value(self) -> Value {
        Value::from(self)
    }
}

impl<T: IntoValue> IntoValue for Vec<T> {
    fn into_value(self) -> Value {
        Value::Array(self.into_iter().map(IntoValue::into_value).collect())
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: &Value) -> Result<Self, String> {
        let items = value
            .as_array()
            .ok_or_else(|| format!("expected an array, found {}", value.kind()))?;
        items.iter().map(T::from_value).collect()
    }
}

impl<T: IntoValue> IntoValue for IndexMap<String, T> {
    fn into_value(self) -> Value {
        Value::Object(self.into_iter().map(|(k, v)| (k, v.into_value())).collect())
    }
}

impl<T: FromValue> FromValue for IndexMap<String, T> {
    fn from_value(value: &Value) -> Result<Self, String> {
        let map = value
            .as_object()
            .ok_or_else(|| format!("expected an object, found {}", value.kind()))?;
        map.iter()
            .map(|(k, v)| {
                Ok((
                    k.clone(),
                    T::from_value(v).map_err(|e| format!("{k}: {e}"))?,
                ))
            })
            .collect()
    }
}

impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Value {
        self.map_or(Value::Null, IntoValue::into_value)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self, String> {
        if value.is_null() {
            Ok(None)
        } else {
            T::from_value(value).map(Some)
        }
    }
}

/// Resource arguments: property names and their (eventual) values.
#[derive(Clone, Default)]
pub struct Args {
    pub(crate) map: IndexMap<String, Output<Value>>,
}

impl Args {
    pub fn new() -> Args {
        Args::default()
    }

    /// Sets property `key` to a plain value or an output.
    pub fn set<I>(mut self, key: impl Into<String>, value: I) -> Args
    where
        I: IntoInput,
        I::Value: IntoValue,
    {
        self.map
            .insert(key.into(), value.into_input().into_output().to_value());
        self
    }

    /// Sets property `key` when `value` is given.
    pub fn set_some<I>(self, key: impl Into<String>, value: Option<I>) -> Args
    where
        I: IntoInput,
        I::Value: IntoValue,
    {
        match value {
            Some(v) => self.set(key, v),
            None => self,
        }
    }

    /// The arguments of a plain map.
    pub fn from_map(map: PropertyMap) -> Args {
        Args {
            map: map.into_iter().map(|(k, v)| (k, Output::new(v))).collect(),
        }
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.map.keys()).finish()
    }
}
