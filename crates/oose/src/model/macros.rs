//! The macros that write the parts of a registered method's impls that are the same
//! for every method, or for a family of methods (see [`super::method`]).

/// The parts of a [`Fitted`] impl that are the same for every method: the parameters
/// (from the fitted type's `params()`, a [`Method`]) and the consistency check (the
/// fitted type's own `is_consistent`); with `points: field, warnings: field` also
/// `training_points` and `fit_warnings` from those fields.
#[macro_export]
#[doc(hidden)]
macro_rules! fitted_basics {
    (points: $($p:ident).+, warnings: $($w:ident).+, novelty: $($n:ident).+) => {
        $crate::fitted_basics!(points: $($p).+, warnings: $($w).+);

        /// From the fit's kNN search when it found the score's neighbours.
        fn novelty(
            &self,
            _input: Option<$crate::model::Input<'_>>,
        ) -> Option<$crate::diagnostics::novelty::Novelty> {
            self.$($n).+.take_or_fit(self.$($p).+.view())
        }
    };
    (points: $($p:ident).+, warnings: $($w:ident).+) => {
        fn training_stored(&self) -> Option<&$crate::linalg::stored::StoredMat> {
            Some(&self.$($p).+)
        }

        $crate::fitted_basics!();

        fn fit_warnings(&self) -> &[String] {
            &self.$($w).+.0
        }
    };
    () => {
        fn param_values(&self) -> $crate::model::params::ParamList {
            $crate::model::Method::values(self.params())
        }

        fn is_consistent(&self) -> bool {
            Self::is_consistent(self)
        }
    };
}

/// `OutOfSample` for a fitted type that holds its training points `x` and its
/// `embedding` (both `StoredMat`): `extend` is the expression given, of `self` and
/// `new`, documented by the string given.
#[macro_export]
#[doc(hidden)]
macro_rules! stored_out_of_sample {
    ($fitted:ty, $doc:literal, |$this:ident, $new:ident| $extend:expr) => {
        impl $crate::methods::OutOfSample for $fitted {
            fn embedding(&self) -> faer::MatRef<'_, f64> {
                self.embedding.view()
            }

            #[doc = $doc]
            fn extend(
                &$this,
                $new: faer::MatRef<'_, f64>,
            ) -> $crate::Result<$crate::extend::Extension> {
                $extend
            }

            fn input_width(&self) -> usize {
                self.x.ncols()
            }
        }
    };
}

/// The `Fitted` items shared by the neighbour embeddings (t-SNE, UMAP): training points
/// `self.x`; the strategies `interpolation` (default) and `optimize`, placed by the
/// inherent `place(new, strategy, near)` after a search of `self.index` (a
/// [`KnnIndex`](crate::extend::local::KnnIndex)) for `neighbours_for(strategy)` neighbours; the novelty score from the fit's kNN graph
/// (`self.fit_novelty`), else fitted on `self.x`. `(out_of_sample Fitted)` gives their
/// `OutOfSample` (embedding `self.embedding`, `interpolation`), the inherent
/// `interpolated(new, strategy, near)` that `place` starts from, and
/// `place_as_asked(new, opts, near)`, which checks the options and calls `place`.
#[macro_export]
#[doc(hidden)]
macro_rules! neighbour_embedding_fitted {
    (out_of_sample $fitted:ty) => {
        $crate::stored_out_of_sample!(
            $fitted,
            "`interpolation`: the weighted geometric median of the nearest training points' \
             positions (the method's module documentation); `residual` is the local power \
             function P²(z) ∈ [0, 1] at the training data's scale (0 on training points, near \
             1 away from the data), `reconstruction_error` the distance to the nearest \
             training point in units of the training data's typical neighbour distance √ε₀.",
            |self, new| self.place(new, $crate::extend::Strategy::Interpolation, None, true)
        );

        impl $fitted {
            /// The rows of `new` placed by interpolation from their
            /// `neighbours_for(strategy)` nearest training points (`near`'s where it
            /// holds them), with those neighbours: where `place` starts. The
            /// reliability columns only with `diagnostics` (else NaN).
            fn interpolated(
                &self,
                new: faer::MatRef<'_, f64>,
                strategy: $crate::extend::Strategy,
                near: Option<&$crate::neighbors::Neighbours>,
                diagnostics: bool,
            ) -> $crate::Result<($crate::neighbors::Neighbours, $crate::extend::Extension)>
            {
                $crate::extend::local::place(
                    (self.x.view(), &self.index.search, self.params.seed),
                    self.embedding.view(),
                    new,
                    self.neighbours_for(strategy),
                    self.params.transform_neighbors,
                    diagnostics.then_some(self.reliability_epsilon),
                    near,
                )
            }

            /// The options checked, then the rows of `new` placed by the strategy they
            /// name (`near` as in `interpolated`), the reliability columns unless only
            /// the coordinates are asked for.
            fn place_as_asked(
                &self,
                new: faer::MatRef<'_, f64>,
                opts: &$crate::model::ExtendOptions<'_>,
                near: Option<&$crate::neighbors::Neighbours>,
            ) -> $crate::Result<$crate::extend::Extension> {
                $crate::model::Fitted::check_options(self, opts)?;
                self.place(new, opts.placement(), near, !opts.coordinates_only)
            }
        }
    };
    ($method:ty) => {
        fn training_stored(&self) -> Option<&$crate::linalg::stored::StoredMat> {
            Some(&self.x)
        }

        $crate::fitted_basics!();

        fn fit_warnings(&self) -> &[String] {
            &self.warnings.0
        }

        fn check_options(&self, opts: &$crate::model::ExtendOptions<'_>) -> $crate::Result<()> {
            opts.refuse_all_but(&["interpolation", "optimize"], |o| {
                $crate::model::method::no_such_option(
                    <$method as $crate::model::Registered>::NAME,
                    o,
                )
            })
        }

        /// `interpolation` (the default; also `projection`) or `optimize`.
        fn extend_options(
            &self,
            new: faer::MatRef<'_, f64>,
            opts: &$crate::model::ExtendOptions<'_>,
        ) -> $crate::Result<$crate::extend::Extension> {
            self.place_as_asked(new, opts, None)
        }

        /// From the fit's kNN graph (no second search) when it has the score's neighbours.
        fn novelty(
            &self,
            _input: Option<$crate::model::Input<'_>>,
        ) -> Option<$crate::diagnostics::novelty::Novelty> {
            self.fit_novelty.take_or_fit(self.x.view())
        }

        fn search_training(
            &self,
            new: faer::MatRef<'_, f64>,
            k: usize,
        ) -> Option<$crate::neighbors::Neighbours> {
            // Exact, or by inverted lists (`transform_search`).
            let x = self.x.view();
            Some(self.index.search.search(x, new, k, self.params.seed))
        }

        fn neighbours_wanted(&self, opts: &$crate::model::ExtendOptions<'_>) -> usize {
            self.neighbours_for(opts.placement())
        }

        fn extend_near(
            &self,
            new: faer::MatRef<'_, f64>,
            opts: &$crate::model::ExtendOptions<'_>,
            near: &$crate::neighbors::Neighbours,
        ) -> $crate::Result<$crate::extend::Extension> {
            self.place_as_asked(new, opts, Some(near))
        }
    };
}

/// [`InnerProduct`] for a model that computes the new points' mutual proximities itself
/// (inherent `extend_joint(new)` and `arc(new, steps)`); given ones are refused.
#[macro_export]
#[doc(hidden)]
macro_rules! inner_product_computing_mutual {
    ($fitted:ty, $method:ty) => {
        impl $crate::model::InnerProduct for $fitted {
            fn extend_joint(
                &self,
                new: faer::MatRef<'_, f64>,
                mutual: Option<faer::MatRef<'_, f64>>,
            ) -> $crate::Result<$crate::extend::restricted::Joint> {
                if mutual.is_some() {
                    return Err($crate::model::method::mutual_refused(
                        <$method as $crate::model::Registered>::NAME,
                    ));
                }
                <$fitted>::extend_joint(self, new)
            }

            fn arc(
                &self,
                new: faer::MatRef<'_, f64>,
                steps: usize,
            ) -> $crate::Result<Vec<(usize, f64, Vec<f64>)>> {
                <$fitted>::arc(self, new, steps)
            }
        }
    };
}

/// The extension options, eigenvalues and inner-product access of the classical-MDS
/// family (a `core: Cmds` and an inherent `extend_with(new, strategy)`): the strategy is
/// their only option.
#[macro_export]
#[doc(hidden)]
macro_rules! cmds_family_extension {
    ($method:ty) => {
        fn check_options(&self, opts: &$crate::model::ExtendOptions<'_>) -> $crate::Result<()> {
            $crate::methods::mds::strategy_only(<$method as $crate::model::Registered>::NAME, opts)
        }

        fn extend_options(
            &self,
            new: faer::MatRef<'_, f64>,
            opts: &$crate::model::ExtendOptions<'_>,
        ) -> $crate::Result<$crate::extend::Extension> {
            self.check_options(opts)?;
            self.extend_with(new, opts.strategy.unwrap_or_default())
        }

        fn eigenvalues(&self) -> Option<&[f64]> {
            Some(self.core.eigenvalues())
        }

        fn inner_product(&self) -> Option<&dyn $crate::model::InnerProduct> {
            Some(self)
        }
    };
}
