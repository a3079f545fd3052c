//! Whether every floating-point number in a value is finite: a serde [`Serializer`]
//! that visits the value and records the first non-finite number. A decoded model is
//! checked with it, so a payload edited by hand (with its checksum recomputed) cannot
//! carry a NaN or infinite scale, eigenvalue or coordinate into `extend`.

use serde::ser::{self, Serialize, Serializer};
use std::fmt;

/// The first non-finite number found, or a reason the walk stopped.
#[derive(Debug)]
pub(crate) struct NonFinite(pub String);

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NonFinite {}

impl ser::Error for NonFinite {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NonFinite(msg.to_string())
    }
}

/// `Err` naming the first non-finite number of `value` (in serialisation order).
pub(crate) fn check<T: Serialize>(value: &T) -> Result<(), NonFinite> {
    value.serialize(Walk)
}

struct Walk;

/// Fields where an infinity is a meaningful value: a kernel's `epsilon` (an unweighted
/// neighbour graph, maths §6).
const INFINITE_ALLOWED: &[&str] = &["epsilon"];

fn float(v: f64) -> Result<(), NonFinite> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(NonFinite(format!("a stored number is {v}")))
    }
}

/// Values that cannot be non-finite: nothing to check.
macro_rules! ignore {
    ($($name:ident($($t:ty),*)),*) => {
        $(fn $name(self, $(_: $t),*) -> Result<(), NonFinite> { Ok(()) })*
    };
}

/// The compound values' openings: the walk goes on into their elements.
macro_rules! walk_into {
    ($($name:ident($($t:ty),*)),*) => {
        $(fn $name(self, $(_: $t),*) -> Result<Walk, NonFinite> { Ok(Walk) })*
    };
}

impl Serializer for Walk {
    type Ok = ();
    type Error = NonFinite;
    type SerializeSeq = Walk;
    type SerializeTuple = Walk;
    type SerializeTupleStruct = Walk;
    type SerializeTupleVariant = Walk;
    type SerializeMap = Walk;
    type SerializeStruct = Walk;
    type SerializeStructVariant = Walk;

    ignore!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
        serialize_none(),
        serialize_unit()
    );

    fn serialize_f32(self, v: f32) -> Result<(), NonFinite> {
        float(v as f64)
    }
    fn serialize_f64(self, v: f64) -> Result<(), NonFinite> {
        float(v)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), NonFinite> {
        v.serialize(Walk)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), NonFinite> {
        v.serialize(Walk)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Result<(), NonFinite> {
        v.serialize(Walk)
    }
    walk_into!(
        serialize_seq(Option<usize>),
        serialize_tuple(usize),
        serialize_tuple_struct(&'static str, usize),
        serialize_tuple_variant(&'static str, u32, &'static str, usize),
        serialize_map(Option<usize>),
        serialize_struct(&'static str, usize),
        serialize_struct_variant(&'static str, u32, &'static str, usize)
    );
}

macro_rules! elements {
    ($($tr:ident :: $m:ident),*) => {
        $(impl ser::$tr for Walk {
            type Ok = ();
            type Error = NonFinite;
            fn $m<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), NonFinite> {
                v.serialize(Walk)
            }
            fn end(self) -> Result<(), NonFinite> {
                Ok(())
            }
        })*
    };
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Walk {
    type Ok = ();
    type Error = NonFinite;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), NonFinite> {
        k.serialize(Walk)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), NonFinite> {
        v.serialize(Walk)
    }
    fn end(self) -> Result<(), NonFinite> {
        Ok(())
    }
}

macro_rules! fields {
    ($($tr:ident),*) => {
        $(impl ser::$tr for Walk {
            type Ok = ();
            type Error = NonFinite;
            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                name: &'static str,
                v: &T,
            ) -> Result<(), NonFinite> {
                if INFINITE_ALLOWED.contains(&name) {
                    // Infinity means something here; NaN never does.
                    return v
                        .serialize(Walk)
                        .or_else(|e| if e.0.ends_with("inf") { Ok(()) } else { Err(e) })
                        .map_err(|e| NonFinite(format!("{name}: {e}")));
                }
                v.serialize(Walk).map_err(|e| NonFinite(format!("{name}: {e}")))
            }
            fn end(self) -> Result<(), NonFinite> {
                Ok(())
            }
        })*
    };
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::check;

    #[derive(serde::Serialize)]
    struct S {
        a: Vec<f64>,
        b: Option<(u32, f32)>,
    }

    #[test]
    fn finds_the_first_non_finite_number_and_names_its_field() {
        assert!(check(&S {
            a: vec![1.0, -2.0],
            b: Some((3, 0.5))
        })
        .is_ok());
        let e = check(&S {
            a: vec![1.0, f64::NAN],
            b: None,
        })
        .unwrap_err();
        assert_eq!(e.0, "a: a stored number is NaN");
        let e = check(&S {
            a: vec![],
            b: Some((1, f32::INFINITY)),
        })
        .unwrap_err();
        assert_eq!(e.0, "b: a stored number is inf");
    }
}
