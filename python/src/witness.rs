//! Proof that a message is unchanged since it was converted: the Python objects its conversion
//! read, kept alive.
//!
//! Converting a message (the package's writer, then [`crate::pyvalue`]) reads Python objects
//! only: the message, each container in it and each leaf, and for a LangChain message object
//! the attributes the writer reads (`type` and `_LANGCHAIN_FIELDS`). [`Witness::record`] keeps
//! a reference to every one of them, with each container's length and each dict's keys in
//! order, so none of their addresses can be reused while the witness lives; [`Witness::matches`]
//! walks the same paths in a message and compares what it meets by identity, reading no string.
//! That is exact: a leaf (`str`, `int`, `float`, `bool`, `None`, exact types only) is immutable,
//! so the same object is the same value; a list, tuple or dict (exact types only, so iteration
//! is the C-level one the writer uses) edited in place shows a different length, key or child;
//! an attribute assigned anew shows a different object; an object whose class was swapped shows
//! a different type. Anything else (a subclass, a mapping that is not a dict, an object the
//! writer would refuse) cannot be proven unchanged: [`Witness::record`] answers `None`, and the
//! message is converted again on every call. Whether `isinstance(m, Mapping)` still answers as it
//! did depends on the ABC registry too, which the session watches (`abc.get_cache_token()`).

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

/// JSON's nesting limit (`crate::pyvalue`): no witness is deeper.
const MAX_DEPTH: usize = 128;

/// What converting one value read (see the module docs).
pub enum Witness {
    /// An immutable leaf: its identity.
    Leaf(Py<PyAny>),
    /// An exact list or tuple: its identity and its items' witnesses (so its length).
    Seq(Py<PyAny>, Vec<Witness>),
    /// An exact dict: its identity and its members (exact `str` keys) in order.
    Dict(Py<PyAny>, Vec<(Py<PyAny>, Witness)>),
    /// A message object: its identity, its type and what each read attribute gave (`None` for
    /// a missing one, as `getattr(m, name, None)`).
    Object(Py<PyAny>, Py<PyType>, Vec<Witness>),
}

fn is_leaf(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyBool>()
}

/// `getattr(v, name, None)`; another exception than `AttributeError` is the caller's.
pub fn attribute<'py>(v: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    match v.getattr(name) {
        Ok(a) => Ok(a),
        Err(e) if e.is_instance_of::<PyAttributeError>(v.py()) => Ok(v.py().None().into_bound(v.py())),
        Err(e) => Err(e),
    }
}

impl Witness {
    /// The witness of a JSON-like value (see the module docs), `None` when it cannot be proven.
    pub fn record(v: &Bound<'_, PyAny>) -> Option<Witness> {
        Witness::record_at(v, 0)
    }

    /// [`Witness::record`] `depth` levels down: nothing deeper than JSON may nest (which also
    /// ends a container that holds itself) is proven.
    fn record_at(v: &Bound<'_, PyAny>, depth: usize) -> Option<Witness> {
        if depth > MAX_DEPTH {
            return None;
        }
        if is_leaf(v) {
            return Some(Witness::Leaf(v.clone().unbind()));
        }
        if let Ok(d) = v.cast_exact::<PyDict>() {
            let mut members = Vec::with_capacity(d.len());
            for (k, x) in d.iter() {
                if !k.is_exact_instance_of::<PyString>() {
                    return None;
                }
                members.push((k.unbind(), Witness::record_at(&x, depth + 1)?));
            }
            return Some(Witness::Dict(v.clone().unbind(), members));
        }
        let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = v.cast_exact::<PyList>() {
            l.iter().collect()
        } else if let Ok(t) = v.cast_exact::<PyTuple>() {
            t.iter().collect()
        } else {
            return None;
        };
        let items = items
            .iter()
            .map(|x| Witness::record_at(x, depth + 1))
            .collect::<Option<Vec<_>>>()?;
        Some(Witness::Seq(v.clone().unbind(), items))
    }

    /// The witness of a message object whose attributes `names` the writer reads: `Ok(None)`
    /// when a value read cannot be proven, `Err` when reading raised.
    pub fn record_object(
        v: &Bound<'_, PyAny>,
        names: &[Bound<'_, PyString>],
    ) -> PyResult<Option<Witness>> {
        let mut read = Vec::with_capacity(names.len());
        for name in names {
            match Witness::record(&attribute(v, name)?) {
                Some(w) => read.push(w),
                None => return Ok(None),
            }
        }
        Ok(Some(Witness::Object(
            v.clone().unbind(),
            v.get_type().unbind(),
            read,
        )))
    }

    /// The object this witness is of.
    pub fn object(&self) -> &Py<PyAny> {
        match self {
            Witness::Leaf(o) | Witness::Seq(o, _) | Witness::Dict(o, _) | Witness::Object(o, _, _) => o,
        }
    }

    /// Whether `v` is provably what this witness recorded (see the module docs): the same
    /// objects along the same paths. A read that raises is "not unchanged".
    pub fn matches(&self, v: &Bound<'_, PyAny>, names: &[Bound<'_, PyString>]) -> bool {
        if !v.is(self.object()) {
            return false;
        }
        match self {
            Witness::Leaf(_) => true,
            Witness::Seq(_, items) => {
                let same = |w: &Witness, x: Bound<'_, PyAny>| w.matches(&x, names);
                if let Ok(l) = v.cast_exact::<PyList>() {
                    l.len() == items.len() && items.iter().zip(l.iter()).all(|(w, x)| same(w, x))
                } else if let Ok(t) = v.cast_exact::<PyTuple>() {
                    t.len() == items.len() && items.iter().zip(t.iter()).all(|(w, x)| same(w, x))
                } else {
                    false
                }
            }
            Witness::Dict(_, members) => {
                let Ok(d) = v.cast_exact::<PyDict>() else {
                    return false;
                };
                d.len() == members.len()
                    && d.iter()
                        .zip(members)
                        .all(|((k, x), (key, w))| k.is(key) && w.matches(&x, names))
            }
            Witness::Object(_, ty, read) => {
                v.get_type().is(ty)
                    && read.len() == names.len()
                    && names.iter().zip(read).all(|(name, w)| {
                        attribute(v, name).is_ok_and(|x| w.matches(&x, names))
                    })
            }
        }
    }
}
