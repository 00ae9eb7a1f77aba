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
//!
//! **Reading attributes fast, exactly.** `getattr(m, name, None)` of an attribute a message does
//! not have runs pydantic's `__getattr__`, which raises (about 4 µs; a `HumanMessage` has no
//! `tool_calls`, `status`, `role`, ...). [`Reads`] answers the same without calling it when, for
//! the message's type, checked once per call: attribute lookup is the generic one
//! (`__getattribute__` is `object`'s), no class of the MRO defines any of the names (so no
//! descriptor or class attribute answers them), and the `__getattr__` hook is absent, or is
//! pydantic v2's `BaseModel.__getattr__` (given by the package when pydantic is loaded) with
//! `hasattr(type, name)` false and none of the names a private attribute. Then
//! `getattr(m, name)` is `m.__dict__[name]` if present, else (pydantic's hook)
//! `m.__pydantic_extra__[name]` if that dict is non-empty and holds it, else missing: dict
//! lookups, no Python code. A type that fails a condition is read with `getattr`.

use std::cell::RefCell;

use pyo3::exceptions::PyAttributeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use rustc_hash::FxHashMap;

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
fn attribute<'py>(
    v: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    match v.getattr(name) {
        Ok(a) => Ok(a),
        Err(e) if e.is_instance_of::<PyAttributeError>(v.py()) => {
            Ok(v.py().None().into_bound(v.py()))
        }
        Err(e) => Err(e),
    }
}

/// How one call reads a message object's attributes (see the module docs).
pub struct Reads<'py> {
    /// The attributes the writer reads: `type`, then `_LANGCHAIN_FIELDS`.
    pub names: Vec<Bound<'py, PyString>>,
    object_getattribute: Bound<'py, PyAny>,
    pydantic_getattr: Option<Bound<'py, PyAny>>,
    /// Per type (address; the types outlive the call): whether it is read plainly.
    plain: RefCell<FxHashMap<usize, bool>>,
}

impl<'py> Reads<'py> {
    /// The reads of `names`; `pydantic_getattr` is pydantic v2's `BaseModel.__getattr__` when
    /// pydantic is loaded.
    pub fn new(
        py: Python<'py>,
        names: Vec<Bound<'py, PyString>>,
        pydantic_getattr: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Reads<'py>> {
        let object_getattribute = py
            .get_type::<pyo3::types::PyAny>()
            .getattr(intern!(py, "__getattribute__"))?;
        Ok(Reads {
            names,
            object_getattribute,
            pydantic_getattr,
            plain: RefCell::new(FxHashMap::default()),
        })
    }

    /// Whether instances of `ty` are read from their `__dict__` (see the module docs).
    fn plain(&self, ty: &Bound<'py, PyType>) -> bool {
        let key = ty.as_ptr() as usize;
        if let Some(&known) = self.plain.borrow().get(&key) {
            return known;
        }
        let plain = self.check(ty).unwrap_or(false);
        self.plain.borrow_mut().insert(key, plain);
        plain
    }

    fn check(&self, ty: &Bound<'py, PyType>) -> PyResult<bool> {
        let py = ty.py();
        if !ty
            .getattr(intern!(py, "__getattribute__"))?
            .is(&self.object_getattribute)
        {
            return Ok(false);
        }
        for class in ty.getattr(intern!(py, "__mro__"))?.try_iter()? {
            let namespace = class?.getattr(intern!(py, "__dict__"))?;
            for name in &self.names {
                if namespace.contains(name)? {
                    return Ok(false);
                }
            }
        }
        match ty.getattr(intern!(py, "__getattr__")) {
            Err(e) if e.is_instance_of::<PyAttributeError>(py) => Ok(true),
            Err(e) => Err(e),
            Ok(hook) => {
                let Some(pydantic) = &self.pydantic_getattr else {
                    return Ok(false);
                };
                if !hook.is(pydantic) {
                    return Ok(false);
                }
                let private = ty.getattr(intern!(py, "__private_attributes__"))?;
                for name in &self.names {
                    if ty.hasattr(name)? || private.contains(name)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    /// `getattr(v, name, None)` for every name, in order.
    pub fn read(&self, v: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if self.plain(&v.get_type()) {
            if let Some(values) = self.read_plain(v)? {
                return Ok(values);
            }
        }
        self.names.iter().map(|n| attribute(v, n)).collect()
    }

    /// [`Reads::read`] from `v.__dict__` (and pydantic's extras); `None` when they are not
    /// exact dicts.
    fn read_plain(&self, v: &Bound<'py, PyAny>) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        let py = v.py();
        let own = v.getattr(intern!(py, "__dict__"))?;
        let Ok(own) = own.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        let mut extra: Option<Option<Bound<'py, PyDict>>> = None;
        let mut out = Vec::with_capacity(self.names.len());
        for name in &self.names {
            if let Some(x) = own.get_item(name)? {
                out.push(x);
                continue;
            }
            if self.pydantic_getattr.is_some() && extra.is_none() {
                let e = match self
                    .object_getattribute
                    .call1((v, intern!(py, "__pydantic_extra__")))
                {
                    Ok(e) => e,
                    Err(e) if e.is_instance_of::<PyAttributeError>(py) => py.None().into_bound(py),
                    Err(e) => return Err(e),
                };
                if e.is_none() {
                    extra = Some(None);
                } else if let Ok(d) = e.cast_exact::<PyDict>() {
                    extra = Some(Some(d.clone()));
                } else {
                    return Ok(None);
                }
            }
            let found = match &extra {
                Some(Some(d)) => d.get_item(name)?,
                _ => None,
            };
            out.push(found.unwrap_or_else(|| py.None().into_bound(py)));
        }
        Ok(Some(out))
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

    /// The witness of a message object whose attributes `reads` the writer reads: `Ok(None)`
    /// when a value read cannot be proven, `Err` when reading raised.
    pub fn record_object<'py>(
        v: &Bound<'py, PyAny>,
        reads: &Reads<'py>,
    ) -> PyResult<Option<Witness>> {
        let mut read = Vec::with_capacity(reads.names.len());
        for value in reads.read(v)? {
            match Witness::record(&value) {
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
            Witness::Leaf(o)
            | Witness::Seq(o, _)
            | Witness::Dict(o, _)
            | Witness::Object(o, _, _) => o,
        }
    }

    /// Whether `v` is provably what this witness recorded (see the module docs): the same
    /// objects along the same paths. A read that raises is "not unchanged".
    pub fn matches<'py>(&self, v: &Bound<'py, PyAny>, reads: &Reads<'py>) -> bool {
        if !v.is(self.object()) {
            return false;
        }
        match self {
            Witness::Leaf(_) => true,
            Witness::Seq(_, items) => {
                let same = |w: &Witness, x: Bound<'py, PyAny>| w.matches(&x, reads);
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
                        .all(|((k, x), (key, w))| k.is(key) && w.matches(&x, reads))
            }
            Witness::Object(_, ty, read) => {
                v.get_type().is(ty)
                    && reads.read(v).is_ok_and(|values| {
                        values.len() == read.len()
                            && values.iter().zip(read).all(|(x, w)| w.matches(x, reads))
                    })
            }
        }
    }
}
