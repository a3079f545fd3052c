//! The factor's encoding in model files: from format 8 the lower triangle, column by
//! column from the diagonal down (r(r+1)/2 values); before, the whole r×r square.

use crate::model::refuse;
use serde::de::Error as _;
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Format version from which the factor is written packed.
const PACKED: u32 = 8;

/// The order r of an r×r factor held as `len` values.
fn order(len: usize) -> usize {
    let mut r = (len as f64).sqrt() as usize;
    while r * r > len {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= len {
        r += 1;
    }
    r
}

struct Lower<'a>(&'a [f64], usize);

impl Serialize for Lower<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Lower(l, r) = *self;
        let mut seq = s.serialize_seq(Some(r * (r + 1) / 2))?;
        for c in 0..r {
            for v in &l[c * r + c..(c + 1) * r] {
                seq.serialize_element(v)?;
            }
        }
        seq.end()
    }
}

pub(super) fn write<S: Serializer>(l: &[f64], s: S) -> Result<S::Ok, S::Error> {
    Lower(l, order(l.len())).serialize(s)
}

pub(super) fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    if crate::model::reading() < PACKED {
        // The whole square: it must be one, and zero above the diagonal (where the
        // packed writer stores nothing), or a model read from it would not be the one
        // it writes back.
        let l = Vec::<f64>::deserialize(d)?;
        let r = order(l.len());
        if r * r != l.len() {
            return Err(refuse(format!(
                "a square Cholesky factor of {} values",
                l.len()
            )));
        }
        if (0..r).any(|c| l[c * r..c * r + c].iter().any(|&v| v != 0.0)) {
            return Err(refuse(
                "a Cholesky factor with values above its diagonal".into(),
            ));
        }
        Ok(l)
    } else {
        d.deserialize_seq(Square)
    }
}

/// Reads a packed lower triangle straight into the r×r square (no packed copy).
struct Square;

impl<'de> Visitor<'de> for Square {
    type Value = Vec<f64>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the lower triangle of a Cholesky factor")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<f64>, A::Error> {
        let len = seq
            .size_hint()
            .ok_or_else(|| refuse("a triangular factor of unknown length".into()))?;
        // r(r+1)/2 = len: r is the order of the square with 2·len + r values.
        let r = order(2 * len);
        if r * (r + 1) / 2 != len {
            return Err(refuse(format!(
                "a triangular factor holds r(r+1)/2 values, not {len}"
            )));
        }
        // Zeroed by the allocator (fresh pages from the system are zero and are not
        // touched until written): the upper triangle, which stays zero, mostly never
        // is, and a length the payload cannot hold fails at its end having touched
        // little more than what was read. A 10000 × 10000 factor read 0.68 → 0.5 s.
        // The size is first asked for fallibly (`vec!` would abort where it does not
        // fit); that reservation touches no page and is handed back at once.
        let mut l: Vec<f64> = Vec::new();
        l.try_reserve_exact(r * r).map_err(|_| {
            refuse(format!(
                "a {r}×{r} triangular factor does not fit in memory"
            ))
        })?;
        drop(l);
        let mut l = vec![0.0; r * r];
        let mut read = 0;
        for c in 0..r {
            for slot in &mut l[c * r + c..(c + 1) * r] {
                *slot = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(read, &self))?;
                read += 1;
            }
        }
        Ok(l)
    }
}
