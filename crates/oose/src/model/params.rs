//! Parameters as data: what every interface (the command line, Python) needs to know
//! about a method's parameters without a line of per-method code.
//!
//! A method's parameter struct is the one place its defaults are written (its
//! `Default`). It describes its fields as [`ParamSpec`]s, lists its values
//! ([`Method::values`](super::Method::values)) and is rebuilt from a [`Values`] bag
//! ([`Method::from_values`](super::Method::from_values)). A bag holds typed values
//! (from Python) or text (from the command line); the getters below parse either and
//! name the parameter in every error.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fmt;

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Not set (an optional parameter left to its rule).
    None,
    /// A flag.
    Bool(bool),
    /// A non-negative integer.
    Int(u64),
    /// A real number.
    Float(f64),
    /// A name, or text from the command line still to be parsed.
    Str(String),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.into())
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Float(x)
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Self {
        Value::Int(i as u64)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl fmt::Display for Value {
    /// The value as the command line writes it (floats round-trip exactly).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("none"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_infinite() && *x > 0.0 => f.write_str("inf"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// Parameter values by name, in a method's order.
pub type ParamList = Vec<(&'static str, Value)>;

/// What kind of value a parameter takes (for help texts and the command line's parser).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A non-negative integer.
    Int,
    /// A real number.
    Float,
    /// `true` or `false`.
    Bool,
    /// One of the names listed.
    Choice(&'static [&'static str]),
    /// A number or one of the names listed (`auto`, …).
    FloatOrName(&'static [&'static str]),
    /// Non-negative integers separated by commas (`256,64`; empty: none).
    IntList,
}

/// The description of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The SPEC name, as Python spells it (`n_neighbors`).
    pub name: &'static str,
    /// The command line's flag without the dashes (`knn`).
    pub flag: &'static str,
    /// Older or shorter flags that mean the same (`t` for `time`).
    pub aliases: &'static [&'static str],
    /// What the value is.
    pub kind: Kind,
    /// Whether `None` is a valid value (the parameter is optional).
    pub optional: bool,
    /// One line for help texts.
    pub help: &'static str,
}

impl ParamSpec {
    /// A required parameter whose flag is its name in kebab case.
    pub const fn new(
        name: &'static str,
        flag: &'static str,
        kind: Kind,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            flag,
            aliases: &[],
            kind,
            optional: false,
            help,
        }
    }

    /// The same, optional.
    pub const fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    /// The same with alias flags.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
}

/// Declares parameter descriptions as constants, one row each:
/// `NAME: "name", "flag", kind, "help";`, the help optionally followed by `, optional`
/// or `, aliases(&[…])`; rows may carry doc comments and a visibility.
macro_rules! param_specs {
    ($($(#[$m:meta])* $vis:vis $id:ident: $name:literal, $flag:literal, $kind:expr,
       $help:literal $(, $modifier:ident $(($($arg:expr),*))?)*;)*) => {
        $($(#[$m])* $vis const $id: $crate::model::params::ParamSpec =
            $crate::model::params::ParamSpec::new($name, $flag, $kind, $help)
            $(.$modifier($($($arg),*)?))*;)*
    };
}
pub(crate) use param_specs;

/// An empty parameter list (the first part given to [`join`] fixes the parts' type).
pub const NO_PARAMS: &[ParamSpec] = &[];

/// The concatenation of parameter lists, at compile time (`N` = the total length).
pub const fn join<const N: usize>(parts: &[&[ParamSpec]]) -> [ParamSpec; N] {
    let mut out = [ParamSpec::new("", "", Kind::Int, ""); N];
    let (mut i, mut k) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "join: N is not the total length");
    out
}

/// Parameter values by SPEC name. Unknown names are an error when the bag is read by
/// a method (see [`Values::finish`]), so a misspelt parameter is never ignored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Values {
    map: BTreeMap<String, Value>,
}

impl Values {
    /// An empty bag: every parameter takes its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to `value` (builder style).
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.set(name, value.into());
        self
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: Value) {
        self.map.insert(name.to_string(), value);
    }

    /// Whether `name` was given.
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Whether `name` was given a value other than `None` (the method's default rule).
    pub fn is_set(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|v| *v != Value::None)
    }

    /// The names given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// Removes `name`, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name)
    }

    fn take(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// Errors on a name that is not one of `specs` (called by `from_values`).
    pub fn finish(&self, method: &str, specs: &[ParamSpec]) -> Result<()> {
        for k in self.map.keys() {
            if !specs.iter().any(|s| s.name == k) {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(Error::Unsupported(format!(
                    "{method} has no parameter `{k}` (its parameters: {})",
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// An integer (≥ 0), or `default` when not given.
    pub fn usize(&self, name: &'static str, default: usize) -> Result<usize> {
        match self.take(name) {
            None => Ok(default),
            Some(Value::Int(i)) => usize::try_from(*i).map_err(|_| too_large(name)),
            Some(Value::Float(x)) if x.fract() == 0.0 && *x >= 0.0 && *x < 2f64.powi(63) => {
                Ok(*x as usize)
            }
            Some(Value::Str(s)) => s.trim().parse::<usize>().map_err(|_| {
                Error::param(name, format!("expected a non-negative integer, got {s:?}"))
            }),
            Some(v) => Err(Error::param(
                name,
                format!("expected a non-negative integer, got {v}"),
            )),
        }
    }

    /// A u64 (seeds), or `default`.
    pub fn u64(&self, name: &'static str, default: u64) -> Result<u64> {
        self.usize(name, default as usize).map(|v| v as u64)
    }

    /// A u32 (degrees), or `default`.
    pub fn u32(&self, name: &'static str, default: u32) -> Result<u32> {
        let v = self.usize(name, default as usize)?;
        u32::try_from(v).map_err(|_| too_large(name))
    }

    /// A real number, or `default`.
    pub fn f64(&self, name: &'static str, default: f64) -> Result<f64> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => number(name, v),
        }
    }

    /// An optional real number (`None`, `none` or absent mean unset).
    pub fn opt_f64(&self, name: &'static str, default: Option<f64>) -> Result<Option<f64>> {
        match self.take(name) {
            None => Ok(default),
            Some(Value::None) => Ok(None),
            // `auto` and `none`: the method's rule.
            Some(Value::Str(s)) if s == "none" || s == "auto" => Ok(None),
            Some(v) => number(name, v).map(Some),
        }
    }

    /// A flag, or `default`.
    pub fn bool(&self, name: &'static str, default: bool) -> Result<bool> {
        self.opt_bool(name, Some(default))
            .map(|b| b.unwrap_or(default))
    }

    /// An optional flag (`None`: the method's rule).
    pub fn opt_bool(&self, name: &'static str, default: Option<bool>) -> Result<Option<bool>> {
        match self.take(name) {
            None => Ok(default),
            Some(Value::None) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::Str(s)) => match s.as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                "none" | "auto" => Ok(None),
                _ => Err(Error::param(
                    name,
                    format!("expected true or false, got {s:?}"),
                )),
            },
            Some(v) => Err(Error::param(
                name,
                format!("expected true or false, got {v}"),
            )),
        }
    }

    /// A name, or `default`.
    pub fn name(&self, name: &'static str, default: &str) -> Result<String> {
        match self.take(name) {
            None => Ok(default.to_string()),
            Some(Value::Str(s)) => Ok(s.clone()),
            Some(v) => Err(Error::param(name, format!("expected a name, got {v}"))),
        }
    }

    /// The raw value, or `default` (for parameters that take a number or a name).
    pub fn raw(&self, name: &'static str, default: Value) -> Value {
        self.take(name).cloned().unwrap_or(default)
    }
}

fn too_large(name: &'static str) -> Error {
    Error::param(name, "too large")
}

/// A real number from `v`. NaN is refused here, for every parameter, whether or not the
/// configuration uses it (scikit-learn's rule: a value that cannot mean anything is an
/// error at fit, not something a later option might start to read).
fn number(name: &'static str, v: &Value) -> Result<f64> {
    let x = match v {
        Value::Float(x) => *x,
        Value::Int(i) => *i as f64,
        Value::Str(s) => match s.trim() {
            "inf" | "infinity" => f64::INFINITY,
            t => t
                .parse::<f64>()
                .map_err(|_| Error::param(name, format!("expected a number, got {s:?}")))?,
        },
        v => return Err(Error::param(name, format!("expected a number, got {v}"))),
    };
    if x.is_nan() {
        return Err(Error::param(name, "expected a number, got NaN"));
    }
    Ok(x)
}

/// A field of a parameter struct as parameter values: a scalar is one value under the
/// field's name; a group (a kernel) is several under their own names.
pub trait Param: Sized {
    /// Appends the value(s) of `self` (`default` is the field's default, for groups
    /// whose unused parts are listed at it).
    fn put(&self, name: &'static str, default: &Self, out: &mut ParamList);
    /// Reads the field from a bag, `default` where absent.
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self>;
}

/// `Param` for a scalar: its value as `$to(value)`, read back by `Values::$get`.
macro_rules! scalar_param {
    ($($t:ty => $to:expr, $get:ident;)*) => {$(
        impl Param for $t {
            fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
                out.push((name, $to(*self)));
            }
            fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
                v.$get(name, *default)
            }
        }
    )*};
}

scalar_param! {
    usize => |k: usize| Value::Int(k as u64), usize;
    u64 => Value::Int, u64;
    f64 => Value::Float, f64;
    bool => Value::Bool, bool;
    Option<f64> => |x: Option<f64>| x.map_or(Value::None, Value::Float), opt_f64;
}

impl Param for Option<usize> {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        out.push((name, self.map_or(Value::None, |k| Value::Int(k as u64))));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        match v.opt_f64(name, default.map(|k| k as f64))? {
            None => Ok(None),
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f < u32::MAX as f64 => Ok(Some(f as usize)),
            Some(f) => Err(Error::param(
                name,
                format!("expected a non-negative integer, got {f}"),
            )),
        }
    }
}

/// A list of widths: text `256,64` (empty text: no entries), or one integer.
impl Param for Vec<usize> {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        let text: Vec<String> = self.iter().map(|w| w.to_string()).collect();
        out.push((name, Value::Str(text.join(","))));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        match v.take(name) {
            None | Some(Value::None) => Ok(default.clone()),
            Some(Value::Int(i)) => Ok(vec![*i as usize]),
            Some(Value::Str(s)) if s.trim().is_empty() => Ok(Vec::new()),
            Some(Value::Str(s)) => s
                .split(',')
                .map(|p| {
                    p.trim().parse::<usize>().map_err(|_| {
                        Error::param(
                            name,
                            format!(
                                "expected non-negative integers separated by commas, got {s:?}"
                            ),
                        )
                    })
                })
                .collect(),
            Some(other) => Err(Error::param(
                name,
                format!("expected non-negative integers separated by commas, got {other}"),
            )),
        }
    }
}

impl Param for Option<bool> {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        out.push((name, self.map_or(Value::None, Value::Bool)));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        v.opt_bool(name, *default)
    }
}

/// A parameter that is one of a few names (`solver`, `output`, …): its name and its
/// parser are all it needs to be a [`Param`].
pub trait Named: Sized + Copy {
    /// The name every interface uses.
    fn name(&self) -> &'static str;
    /// Parses a name (the error names the parameter).
    fn from_name(s: &str) -> Result<Self>;
}

/// Names the values of a fieldless enum from one table: each variant, the name every
/// interface shows and parses, and further names parsed as well (`|`-separated). Gives
/// the enum `name`, `from_name` (its error names `param` and lists every name) and
/// `NAMES` (the shown names, in table order), and implements [`Named`]. `name` is a
/// `match`: a variant left out of the table does not compile.
///
/// ```text
/// named!(Density, "density": Training => "training", Union => "union");
/// ```
macro_rules! named {
    ($t:ident, $param:literal: $($v:ident => $name:literal $(| $alias:literal)*),+ $(,)?) => {
        impl $t {
            /// Every name, in the order of the variants' table.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name every interface uses.
            pub fn name(&self) -> &'static str {
                match self {
                    $($t::$v => $name),+
                }
            }

            /// Parses a name in [`Self::NAMES`] (or an accepted spelling of one); the
            /// error names the parameter and lists the names.
            pub fn from_name(name: &str) -> $crate::error::Result<$t> {
                $crate::validate::named($param, name, &[$(($name, $t::$v) $(, ($alias, $t::$v))*),+])
            }
        }

        impl $crate::model::params::Named for $t {
            fn name(&self) -> &'static str {
                $t::name(self)
            }
            fn from_name(s: &str) -> $crate::error::Result<Self> {
                $t::from_name(s)
            }
        }
    };
}
pub(crate) use named;

impl<T: Named> Param for T {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        out.push((name, Value::Str(Named::name(self).into())));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        T::from_name(&v.name(name, Named::name(default))?).map_err(|e| e.about(name))
    }
}

/// `values` and `from_values` of a [`Method`](super::Method) from its fields, each a
/// [`Param`] named as its SPEC name (defaults: the struct's `Default`).
#[macro_export]
#[doc(hidden)]
macro_rules! params_as_data {
    ($t:ident { $($field:ident),* $(,)? }) => {
        fn values(&self) -> $crate::model::params::ParamList {
            use $crate::model::params::Param;
            let d = Self::default();
            let mut out = Vec::new();
            $(self.$field.put(stringify!($field), &d.$field, &mut out);)*
            out
        }

        fn from_values(v: &$crate::model::params::Values) -> $crate::Result<Self> {
            use $crate::model::params::Param;
            v.finish(<Self as $crate::model::Registered>::NAME, Self::SPECS)?;
            let d = Self::default();
            Ok($t {
                $($field: Param::get(v, stringify!($field), &d.$field)?,)*
            })
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getters_parse_text_and_typed_values_and_name_the_parameter() {
        let v = Values::new()
            .with("k", Value::Str("12".into()))
            .with("e", Value::Int(3))
            .with("b", Value::Str("false".into()))
            .with("o", Value::None);
        assert_eq!(v.usize("k", 1).unwrap(), 12);
        assert_eq!(v.f64("e", 0.0).unwrap(), 3.0);
        assert!(!v.bool("b", true).unwrap());
        assert_eq!(v.opt_f64("o", Some(1.0)).unwrap(), None);
        assert_eq!(v.usize("absent", 7).unwrap(), 7);
        let bad = Values::new().with("k", Value::Str("-1".into()));
        match bad.usize("k", 1) {
            Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, "k"),
            other => panic!("{other:?}"),
        }
        let unknown = Values::new().with("kk", Value::Int(1));
        let k = ParamSpec::new("k", "knn", Kind::Int, "");
        let e = unknown.finish("isomap", &[k]).unwrap_err().to_string();
        assert!(e.contains("`kk`"), "{e}");
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Shade {
        Light,
        Dark,
    }
    named!(Shade, "shade": Light => "light" | "pale", Dark => "dark");

    #[test]
    fn a_named_table_gives_names_aliases_and_an_error_naming_the_parameter() {
        assert_eq!(Shade::NAMES, ["light", "dark"]);
        assert_eq!((Shade::Light.name(), Shade::Dark.name()), ("light", "dark"));
        for (s, v) in [
            ("light", Shade::Light),
            ("pale", Shade::Light),
            ("dark", Shade::Dark),
        ] {
            assert_eq!(Shade::from_name(s).unwrap(), v);
            assert_eq!(<Shade as Named>::from_name(s).unwrap(), v);
        }
        let e = Shade::from_name("grey").unwrap_err().to_string();
        assert!(
            e.contains("shade") && e.contains("expected one of light, pale, dark, got \"grey\""),
            "{e}"
        );
        // As a parameter: written by its shown name, read back.
        let mut out = ParamList::new();
        Shade::Light.put("shade", &Shade::Dark, &mut out);
        assert_eq!(out, vec![("shade", Value::Str("light".into()))]);
        let v = Values::new().with("shade", Value::Str("pale".into()));
        assert_eq!(Shade::get(&v, "shade", &Shade::Dark).unwrap(), Shade::Light);
        // A second parameter with the same table: its error names it, not the table.
        let v = Values::new().with("border", Value::Str("grey".into()));
        match Shade::get(&v, "border", &Shade::Dark) {
            Err(Error::InvalidParameter { name, reason }) => {
                assert_eq!(name, "border");
                assert!(
                    reason.contains("expected one of light, pale, dark"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nan_is_refused_for_every_real_parameter_typed_or_written() {
        for v in [
            Value::Float(f64::NAN),
            Value::Str("nan".into()),
            Value::Str(" NaN".into()),
        ] {
            let bag = Values::new().with("coef0", v.clone());
            for e in [
                bag.f64("coef0", 1.0).unwrap_err(),
                bag.opt_f64("coef0", None).unwrap_err(),
            ] {
                match e {
                    Error::InvalidParameter { name, reason } => {
                        assert_eq!(
                            (name, reason.as_str()),
                            ("coef0", "expected a number, got NaN")
                        )
                    }
                    other => panic!("{v:?}: {other:?}"),
                }
            }
        }
        // Infinities stay numbers (a parameter's own range check judges them).
        let inf = Values::new().with("t", Value::Str("inf".into()));
        assert_eq!(inf.f64("t", 1.0).unwrap(), f64::INFINITY);
    }

    #[test]
    fn display_round_trips_floats() {
        for x in [0.1, 1e-12, 2.5e300, f64::INFINITY] {
            let s = Value::Float(x).to_string();
            assert_eq!(number("x", &Value::Str(s)).unwrap(), x);
        }
    }
}
