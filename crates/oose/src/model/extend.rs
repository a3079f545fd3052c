//! Extension through the model: options checked by name, the metric applied, one
//! neighbour search shared with the novelty score; the inverse transform.

use super::{
    check_alpha, first_nonfinite_row, novelty, params, ExtendOptions, InnerProduct, InputKinds,
    MethodInfo, Model, OnIsolated,
};
use crate::error::{Error, Result};
use crate::extend::local;
use crate::extend::restricted::Joint;
use crate::extend::{Extension, Strategy};
use crate::methods::OutOfSample;
use faer::MatRef;

impl Model {
    /// Extends with options (strategy, density, isolated-point policy, kernel diagonal):
    /// every option the model does not support is a typed error naming it.
    ///
    /// Every extension carries the novelty columns `novelty`, `novelty_pvalue` and
    /// `is_novel` (maths §18; NaN where the model has no novelty score), at the level
    /// `opts.alpha` or the model's, unless `opts.coordinates_only` (then only the
    /// coordinates are computed, bitwise the same).
    ///
    /// ```
    /// use oose::model::{ExtendOptions, Input, Model, params::Values};
    /// let x = oose::datasets::swiss_roll(300, 0.05, false, 1).points;
    /// let m = Model::fit("kpca", &Values::new(), Input::Points(x.as_ref())).unwrap();
    /// let z = x.as_ref().subrows(0, 7);
    /// let full = m.extend_options(z, &ExtendOptions::default()).unwrap();
    /// let only = ExtendOptions { coordinates_only: true, ..Default::default() };
    /// let fast = m.extend_options(z, &only).unwrap();
    /// assert!(fast.coordinates == full.coordinates);
    /// assert!(fast.residual.iter().all(|r| r.is_nan()) && fast.extra.is_empty());
    /// assert!(full.extra.iter().any(|c| c.name == "novelty"));
    /// ```
    pub fn extend_options(
        &self,
        new: MatRef<'_, f64>,
        opts: &ExtendOptions<'_>,
    ) -> Result<Extension> {
        self.check_options(opts)?;
        let prepared = self.prepared(new)?;
        let new = prepared.as_ref().map_or(new, |p| p.as_ref());
        let method_opts = ExtendOptions {
            alpha: None,
            ..*opts
        };
        let near = self.shared_search(new, &method_opts);
        let mut e = match &near {
            Some(near) => self.fitted().extend_near(new, &method_opts, near)?,
            None => self.fitted().extend_options(new, &method_opts)?,
        };
        if !self.nan_rows_requested(opts) {
            if let Some(row) = first_nonfinite_row(e.coordinates.as_ref()) {
                return Err(Error::Overflow {
                    what: "extension of the new points",
                    row,
                    detail: "the coordinates are not finite: the arithmetic overflowed \
                             (values far larger than the training data?)",
                });
            }
        }
        if opts.coordinates_only {
            // What the method computed beside the coordinates is left out too, so that
            // every model answers alike (its cheap columns as well as its costly ones).
            e.residual.fill(f64::NAN);
            e.reconstruction_error.fill(f64::NAN);
            e.extra.clear();
            return Ok(e);
        }
        // The method has checked the width of `new` against what its rows hold, which
        // is what the novelty score measures.
        let scores = match &self.novelty {
            Some(n) => Some(n.score_near(new, opts.alpha, near.as_ref())?),
            None => None,
        };
        e.extra.extend(novelty::columns(scores, e.len()));
        Ok(e)
    }

    /// One neighbour search for the method and the novelty score, where the method
    /// asks for one and the novelty score measures against the same training points
    /// (it is fitted on the points the model keeps, so equal shapes mean the same
    /// points): the k = max(both) nearest training points of every row of `new`.
    fn shared_search(
        &self,
        new: MatRef<'_, f64>,
        opts: &ExtendOptions<'_>,
    ) -> Option<crate::neighbors::Neighbours> {
        let wanted = self.fitted().neighbours_wanted(opts);
        let x = self.fitted().training_points()?;
        let nov = self.novelty.as_ref()?;
        let same = nov.reference() == novelty::Reference::Points
            && nov.width() == x.ncols()
            && nov.len() == x.nrows();
        // Rows the method will refuse (wrong width, not finite) are not searched: its
        // own checks name them.
        if wanted == 0
            || !same
            || new.ncols() != x.ncols()
            || new.nrows() == 0
            || crate::validate::finite("new points", new).is_err()
        {
            return None;
        }
        let k = if opts.coordinates_only {
            wanted.min(x.nrows())
        } else {
            wanted.max(nov.search_neighbours()).min(x.nrows())
        };
        self.fitted().search_training(new, k)
    }

    /// Whether the caller asked for NaN rows (isolated new points of neighbour-graph
    /// models: `on_isolated = nan`, given now or at fit).
    fn nan_rows_requested(&self, opts: &ExtendOptions<'_>) -> bool {
        opts.on_isolated == Some(OnIsolated::Nan)
            || (opts.on_isolated.is_none()
                && self
                    .params()
                    .iter()
                    .any(|(n, v)| *n == "on_isolated" && *v == params::Value::Str("nan".into())))
    }

    /// Refuses, by name, every option of `opts` the model does not support and a level
    /// α outside (0, 1) (interfaces call it before reading any data).
    pub fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        if let Some(a) = opts.alpha {
            check_alpha(a)?;
        }
        self.fitted().check_options(opts)
    }

    /// Extends with an explicit strategy (maths §5): projection for every model;
    /// restricted reconstruction for the MDS family and centred kernel PCA.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        self.extend_options(
            new,
            &ExtendOptions {
                strategy: Some(strategy),
                ..Default::default()
            },
        )
    }

    /// The inverse transform: embedding coordinates (rows of `embedded`) back to the
    /// input space, with the power function per point as `residual` and the distance
    /// to the nearest training embedding point (in units of the embedding's neighbour
    /// scale) as `reconstruction_error`. UMAP has its own (maths §13); every other
    /// model that embeds the training points it keeps uses the same local kernel
    /// interpolation with a constant tail on the 10 nearest training embedding points
    /// (maths §8), so a training embedding point returns its training point exactly.
    /// Spectral clustering (its rows are cluster directions), the interpolator (its
    /// "embedding" is values) and models without training points refuse by name. With
    /// a `cosine` or `correlation` metric the input space is that of the mapped rows
    /// (unit directions, maths §19).
    ///
    /// ```
    /// use oose::model::{Input, Model, params::Values};
    /// use oose::methods::OutOfSample;
    /// let x = oose::datasets::swiss_roll(300, 0.0, false, 1).points;
    /// let m = Model::fit("isomap", &Values::new(), Input::Points(x.as_ref())).unwrap();
    /// let back = m.inverse_transform(m.embedding().subrows(0, 5)).unwrap();
    /// assert!(back.coordinates == x.as_ref().subrows(0, 5));
    /// assert!(back.residual.iter().all(|&p| p == 0.0));
    /// ```
    pub fn inverse_transform(&self, embedded: MatRef<'_, f64>) -> Result<Extension> {
        if let Some(r) = self.fitted().inverse(embedded) {
            return r;
        }
        let refuse = |why: &str| {
            Err(Error::Unsupported(format!(
                "an inverse transform needs a model that embeds the training points it \
                 keeps; {} {why}",
                self.method()
            )))
        };
        let Some(x) = self.fitted().training_points() else {
            return refuse("keeps none (a proximity or kernel matrix, or landmarks)");
        };
        let y = self.embedding();
        if self.fitted().labels().is_some() {
            return refuse("embeds cluster directions");
        }
        if MethodInfo::named(self.method())?.input == InputKinds::Values {
            return refuse("maps points to values (interpolate the other way instead)");
        }
        if y.nrows() != x.nrows() {
            return refuse("embeds only some of its training points (largest_component)");
        }
        // The scale needs a neighbour search of the whole training embedding: once per
        // model, not per call (the CLI inverts in chunks).
        let eps = *self
            .preimage_scale
            .0
            .get_or_init(|| local::preimage_scale(y));
        local::inverse(y, x, embedded, eps)
    }

    fn inner_product(&self, what: &str) -> Result<&dyn InnerProduct> {
        self.fitted().inner_product().ok_or_else(|| {
            Error::Unsupported(format!(
                "{what} is available for mds, landmark-mds, isomap and kpca models, not {}",
                self.method()
            ))
        })
    }

    /// Joint restricted reconstruction of several new objects (the MDS family and kernel
    /// PCA; `mutual` only for classical MDS of proximity data).
    pub fn extend_joint(
        &self,
        new: MatRef<'_, f64>,
        mutual: Option<MatRef<'_, f64>>,
    ) -> Result<Joint> {
        let inner = self.inner_product("joint restricted reconstruction")?;
        let prepared = self.prepared(new)?;
        inner.extend_joint(prepared.as_ref().map_or(new, |p| p.as_ref()), mutual)
    }

    /// `steps + 1` points on the arc from projection to restricted reconstruction of
    /// each new object, `(object, λ, y)` (the MDS family and kernel PCA).
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        let inner = self.inner_product("the arc")?;
        let prepared = self.prepared(new)?;
        inner.arc(prepared.as_ref().map_or(new, |p| p.as_ref()), steps)
    }
}
