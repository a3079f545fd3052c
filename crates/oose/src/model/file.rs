//! The model file: header, checksum, and the readers of every format version.

use super::{check_annotations, finite, params, FittedMethod, MethodInfo, Model, Novelty, Values};
use crate::diagnostics::novelty;
use crate::error::{ModelError, Result};
use crate::metric::Metric;
use serde::{Deserialize, Serialize};

/// Magic bytes at the start of every model file.
pub const MAGIC: [u8; 8] = *b"OOSE\0MDL";
/// Newest format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 9;
const HEADER_LEN: usize = 8 + 4 + 8 + 4;

thread_local! {
    /// The format version of the payload this thread is decoding (the newest outside
    /// [`Model::from_bytes`]).
    static READING: std::cell::Cell<u32> = const { std::cell::Cell::new(FORMAT_VERSION) };
    /// Why a reader of this thread refused the payload (the decoder's own error keeps
    /// no message of ours).
    static REFUSAL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A reader's refusal of a payload: the decoder's error, with `why` kept for the
/// [`ModelError::Corrupted`] message that [`Model::from_bytes`] returns.
pub(crate) fn refuse<E: serde::de::Error>(why: String) -> E {
    let e = E::custom(&why);
    REFUSAL.with(|r| *r.borrow_mut() = Some(why));
    e
}

/// The CRC-32 a model file of format `version` stores for `payload`: of the payload,
/// and from format 5 of the version number (little endian) before it — a flipped
/// version bit would otherwise go unseen where two versions lay the payload out alike
/// (5 and 4 differ only in the autoencoders). For tools that write or alter files.
///
/// ```
/// use oose::model::{checksum, Model};
/// let x = oose::datasets::s_curve(30, 0.0, 1).points;
/// let bytes = Model::from(oose::methods::pca::Pca::default().fit(x.as_ref()).unwrap()).to_bytes();
/// let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
/// let stored = u32::from_le_bytes(bytes[20..24].try_into().unwrap());
/// assert_eq!(checksum(version, &bytes[24..]), stored);
/// ```
pub fn checksum(version: u32, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if version >= 5 {
        h.update(&version.to_le_bytes());
    }
    h.update(payload);
    h.finalize()
}

/// Sets [`READING`] while it lives, and restores it after (also on a panic).
struct Reading(u32);

impl Reading {
    fn version(version: u32) -> Self {
        REFUSAL.take();
        Reading(READING.with(|r| r.replace(version)))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.with(|r| r.set(self.0));
    }
}

/// The format version of the payload being decoded on this thread (the newest outside
/// [`Model::from_bytes`]), for a reader whose field changed its layout.
pub(crate) fn reading() -> u32 {
    READING.with(|r| r.get())
}

/// `deserialize_with` of a field added in format version `V` inside a method's
/// payload: read from files of version `V` and newer; older files do not hold it, so
/// it takes its default and nothing is read (the fields of a postcard struct are a plain
/// sequence: a field that reads nothing leaves the next one where it was).
pub(crate) fn added_in<'de, const V: u32, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    if reading() < V {
        Ok(T::default())
    } else {
        T::deserialize(d)
    }
}

/// A version-2 payload: a [`Model`] before the annotations.
#[derive(Deserialize)]
struct ModelV2 {
    method: FittedMethod,
    novelty: Option<Novelty>,
}

/// A version-3 payload: a [`Model`] before the metric (Euclidean).
#[derive(Deserialize)]
struct ModelV3 {
    method: FittedMethod,
    novelty: Option<Novelty>,
    annotations: Vec<(String, String)>,
}

/// A payload as written (from format 7): a [`Model`]'s fields in their order, the novelty
/// score without its copy of the training points where that copy is the method's own
/// (the reader gives it back: [`Model::from_bytes`]). The same bytes as the model's
/// own encoding otherwise (test).
#[derive(Serialize)]
struct Written<'a> {
    method: &'a FittedMethod,
    novelty: Option<novelty::Written<'a>>,
    annotations: &'a [(String, String)],
    metric: &'a Metric,
}

impl Model {
    /// Encodes the model with header and checksum.
    ///
    /// ```
    /// use oose::methods::pca::Pca;
    /// use oose::model::Model;
    /// let x = oose::datasets::s_curve(50, 0.0, 1).points;
    /// let m: Model = Pca::default().fit(x.as_ref()).unwrap().into();
    /// let bytes = m.to_bytes();
    /// assert_eq!(Model::from_bytes(&bytes).unwrap(), m);
    /// assert!(Model::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        // The training points once: a method that keeps them holds the copy the
        // novelty score was fitted on (half of a t-SNE or UMAP model file).
        let points = self.fitted().training_stored();
        let written = Written {
            method: &self.method,
            novelty: self.novelty.as_ref().map(|n| n.written(points)),
            annotations: &self.annotations,
            metric: &self.metric,
        };
        let payload =
            postcard::to_allocvec(&written).expect("serialising a model to memory cannot fail");
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(FORMAT_VERSION, &payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Decodes bytes written by [`Model::to_bytes`], checking magic, version, length,
    /// checksum and the internal consistency of the payload.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        let found = bytes.len() as u64;
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) && !bytes.is_empty() {
                return Err(ModelError::Truncated {
                    expected: HEADER_LEN as u64,
                    found,
                }
                .into());
            }
            return Err(ModelError::NotAModel.into());
        }
        if bytes.len() < HEADER_LEN {
            return Err(ModelError::Truncated {
                expected: HEADER_LEN as u64,
                found,
            }
            .into());
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if version > FORMAT_VERSION {
            return Err(ModelError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            }
            .into());
        }
        if version == 0 {
            return Err(ModelError::Corrupted("format version 0 does not exist".into()).into());
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap());
        let stored = u32::from_le_bytes(bytes[20..24].try_into().unwrap());
        let expected = (HEADER_LEN as u64).saturating_add(len);
        if found < expected {
            return Err(ModelError::Truncated { expected, found }.into());
        }
        if found > expected {
            return Err(ModelError::Corrupted(format!(
                "{} bytes after the end of the payload",
                found - expected
            ))
            .into());
        }
        let payload = &bytes[HEADER_LEN..];
        let _reading = Reading::version(version);
        let computed = checksum(version, payload);
        if computed != stored {
            return Err(ModelError::Checksum { stored, computed }.into());
        }
        // The whole payload, or it was written by another version (a flipped version
        // number reads a newer payload as an older one, which leaves bytes over).
        fn whole<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> std::result::Result<T, ModelError> {
            match postcard::take_from_bytes::<T>(payload) {
                Ok((v, [])) => Ok(v),
                Ok((_, rest)) => Err(ModelError::Corrupted(format!(
                    "{} bytes left over after the payload",
                    rest.len()
                ))),
                Err(e) => Err(ModelError::Corrupted(match REFUSAL.take() {
                    Some(why) => format!("payload does not decode: {why}"),
                    None => format!("payload does not decode: {e}"),
                })),
            }
        }
        let model: Model = if version == 1 {
            // Version 1 held the fitted method only: the novelty score is fitted again
            // from the training data the method keeps (deterministic: as at fit).
            let method: FittedMethod = whole(payload)?;
            if !method.fitted().is_consistent() {
                return Err(
                    ModelError::Corrupted("matrix sizes in the payload disagree".into()).into(),
                );
            }
            Model::assemble(method, None)
        } else if version == 2 {
            let m: ModelV2 = whole(payload)?;
            Model {
                method: m.method,
                novelty: m.novelty,
                annotations: Vec::new(),
                metric: Metric::Euclidean,
                preimage_scale: Default::default(),
            }
        } else if version == 3 {
            let m: ModelV3 = whole(payload)?;
            Model {
                method: m.method,
                novelty: m.novelty,
                annotations: m.annotations,
                metric: Metric::Euclidean,
                preimage_scale: Default::default(),
            }
        } else {
            let mut m: Model = whole(payload)?;
            if version >= 7 {
                m.restore_novelty_points()?;
            }
            m
        };
        // One set of training points in memory, whatever the file held.
        let mut model = model;
        model.share_training_points();
        // Parameters first (their errors name them), then the sizes they imply.
        model.check_payload()?;
        let ok = model.fitted().is_consistent()
            && model.novelty.as_ref().is_none_or(|n| n.is_consistent());
        if !ok {
            return Err(
                ModelError::Corrupted("matrix sizes in the payload disagree".into()).into(),
            );
        }
        Ok(model)
    }

    /// Gives a novelty score written without its points (format 7) the method's
    /// training points, which it was fitted on.
    fn restore_novelty_points(&mut self) -> Result<()> {
        let Some(n) = self.novelty.as_mut().filter(|n| n.lacks_points()) else {
            return Ok(());
        };
        match self.method.fitted().training_stored() {
            Some(x) if x.nrows() == n.len() => {
                n.restore_points(x);
                Ok(())
            }
            kept => Err(ModelError::Corrupted(format!(
                "the novelty score's {} points are the method's, which keeps {}",
                n.len(),
                kept.map_or("none".to_string(), |x| x.nrows().to_string())
            ))
            .into()),
        }
    }

    /// What a decoded payload must satisfy beyond its sizes (a file written by someone
    /// else with a valid checksum): every stored number finite, and the parameters
    /// valid by the same checks as at fit (`n_neighbors ≥ 1`, scales > 0, …).
    fn check_payload(&self) -> Result<()> {
        finite::check(self).map_err(|e| ModelError::Corrupted(format!("{e}")))?;
        check_annotations(&self.annotations)
            .map_err(|e| ModelError::Corrupted(format!("annotations: {e}")))?;
        let info = MethodInfo::named(self.method())?;
        let mut v = Values::new();
        let n = self.fitted().training_rows() as u64;
        if self.metric != Metric::Euclidean && !info.metric {
            return Err(ModelError::Corrupted(format!(
                "a {} model with metric {}",
                info.name,
                self.metric.name()
            ))
            .into());
        }
        for (name, value) in self.fitted().param_values() {
            // Counts (n_components, n_neighbors, n_clusters, …) are at least 1 in a
            // fitted model; the fit checks them against N, which a payload can dodge.
            if name.starts_with("n_") && value == params::Value::Int(0) {
                return Err(ModelError::Corrupted(format!(
                    "invalid parameter `{name}`: 0 (a fitted model has at least 1)"
                ))
                .into());
            }
            // What the fit checked against the number of training points.
            let limit = match name {
                "n_neighbors" => Some((n.saturating_sub(1), "below the number of training points")),
                "n_components" | "n_clusters" => Some((n, "at most the number of training points")),
                _ => None,
            };
            if let (Some((max, rule)), params::Value::Int(v)) = (limit, &value) {
                if *v > max {
                    return Err(ModelError::Corrupted(format!(
                        "invalid parameter `{name}`: {v} (must be {rule}, {n})"
                    ))
                    .into());
                }
            }
            if value != params::Value::None {
                v.set(name, value);
            }
        }
        (info.resolve)(&v).map_err(|e| ModelError::Corrupted(format!("invalid parameter: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::stored::StoredMat;
    use crate::methods::isomap::Isomap;

    /// Whether the model's novelty score holds the method's training points themselves.
    fn shared(m: &Model) -> bool {
        let x = m.fitted().training_stored().unwrap();
        m.novelty().unwrap().points_share_values_with(x)
    }

    fn payload(m: &Model) -> Vec<u8> {
        m.to_bytes()[HEADER_LEN..].to_vec()
    }

    /// A file of `written` in the current format, with a valid header.
    fn file(written: &Written<'_>) -> Vec<u8> {
        let payload = postcard::to_allocvec(written).unwrap();
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(FORMAT_VERSION, &payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    #[test]
    fn the_training_points_are_written_once_and_read_back() {
        let x = crate::datasets::s_curve(60, 0.05, 3).points;
        let m: Model = Isomap::default().fit(x.as_ref()).unwrap().into();
        let nov = m.novelty().expect("a score on the training points");
        assert_eq!(nov.len(), 60);
        // The model's own encoding holds them twice; the file once: 60·3 values fewer,
        // and one byte of their count (180 takes two bytes as a varint, 0 one).
        let full = postcard::to_allocvec(&m).unwrap();
        assert_eq!(full.len() - payload(&m).len(), 60 * 3 * 8 + 1);
        let back = Model::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.to_bytes(), m.to_bytes());
        // One set of points in memory, fitted or read back: the score holds the
        // method's.
        assert!(shared(&m) && shared(&back));
        // Without a score, or with one on other points, the file is the model's own
        // encoding: the written fields are the model's, in its order.
        let mut plain = m.clone();
        plain.novelty = None;
        assert_eq!(payload(&plain), postcard::to_allocvec(&plain).unwrap());
        let mut other = m.clone();
        other.novelty = Novelty::fit(x.as_ref().subrows(0, 59));
        assert_eq!(payload(&other), postcard::to_allocvec(&other).unwrap());
        let other_back = Model::from_bytes(&other.to_bytes()).unwrap();
        assert_eq!(other_back, other);
        assert!(!shared(&other_back));
        // A -0.0 where the method keeps 0.0 is another point: written out.
        let mut signed = x.clone();
        signed[(0, 0)] = 0.0;
        let mut zero: Model = Isomap::default().fit(signed.as_ref()).unwrap().into();
        signed[(0, 0)] = -0.0;
        zero.novelty = Novelty::fit(signed.as_ref());
        assert_eq!(payload(&zero), postcard::to_allocvec(&zero).unwrap());
    }

    #[test]
    fn a_score_without_points_needs_the_methods_points_of_its_size() {
        let x = crate::datasets::s_curve(60, 0.05, 3).points;
        let m: Model = Isomap::default().fit(x.as_ref()).unwrap().into();
        // A score of 50 points written without them, into a method that keeps 60.
        let small = Novelty::fit(x.as_ref().subrows(0, 50)).unwrap();
        let bytes = file(&Written {
            method: &m.method,
            novelty: Some(small.written(Some(&StoredMat::from_mat(x.as_ref().subrows(0, 50))))),
            annotations: &[],
            metric: &Metric::Euclidean,
        });
        let e = Model::from_bytes(&bytes).unwrap_err().to_string();
        assert!(
            e.contains("the novelty score's 50 points are the method's, which keeps 60"),
            "{e}"
        );
        // With the sizes agreeing it reads, and scores as the score with its points.
        let whole = Novelty::fit(x.as_ref()).unwrap();
        let bytes = file(&Written {
            method: &m.method,
            novelty: Some(whole.written(Some(&StoredMat::from_mat(x.as_ref())))),
            annotations: &[],
            metric: &Metric::Euclidean,
        });
        assert_eq!(Model::from_bytes(&bytes).unwrap().novelty(), Some(&whole));
    }
}
