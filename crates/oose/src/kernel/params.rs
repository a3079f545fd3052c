//! The kernel's parameters as data (`kernel`, `epsilon`, `beta`, `gamma`, `coef0`,
//! `degree`), shared by every method with a kernel on points (see `model::params`).

use super::{Epsilon, Kernel, KERNEL_NAMES};
use crate::error::{Error, Result};
use crate::model::params::{Kind, Param, ParamList, ParamSpec, Value, Values};

/// γ, c and p of the polynomial kernel (γ xᵀy + c)^p when not given.
pub const POLYNOMIAL_DEFAULTS: (f64, f64, u32) = (1.0, 1.0, 3);

/// The kernel's parameters, in the order interfaces list them.
pub const KERNEL_SPECS: [ParamSpec; 6] = [
    ParamSpec::new(
        "kernel",
        "kernel",
        Kind::Choice(&KERNEL_NAMES),
        "Kernel (maths §1); `precomputed`: the input is the N×N kernel matrix.",
    ),
    ParamSpec::new(
        "epsilon",
        "epsilon",
        Kind::FloatOrName(&["auto"]),
        "Bandwidth ε > 0, or `auto` (median rule, maths §1).",
    ),
    ParamSpec::new(
        "beta",
        "beta",
        Kind::Float,
        "Exponent β of the (inverse) multiquadric (½, −½) and polyharmonic (3) kernels.",
    )
    .optional(),
    ParamSpec::new(
        "gamma",
        "gamma",
        Kind::Float,
        "γ of the polynomial kernel (default 1); for the gaussian and laplacian kernels \
         scikit-learn's spelling of ε = 1/γ (with epsilon left to `auto`).",
    )
    .optional(),
    ParamSpec::new("coef0", "coef0", Kind::Float, "c of the polynomial kernel."),
    ParamSpec::new(
        "degree",
        "degree",
        Kind::Int,
        "Degree p of the polynomial kernel.",
    ),
];

impl Kernel {
    /// The kernel's parameters by name (those it does not use at their defaults).
    pub fn param_values(&self) -> ParamList {
        let (_, mut coef0, mut degree) = POLYNOMIAL_DEFAULTS;
        let mut gamma = Value::None;
        let mut beta = Value::None;
        let mut epsilon = Value::Str("auto".into());
        match *self {
            Kernel::Gaussian { epsilon: e }
            | Kernel::Laplacian { epsilon: e }
            | Kernel::Wendland { epsilon: e } => epsilon = e.to_value(),
            Kernel::InverseMultiquadric {
                epsilon: e,
                beta: b,
            }
            | Kernel::Multiquadric {
                epsilon: e,
                beta: b,
            } => {
                epsilon = e.to_value();
                beta = Value::Float(b);
            }
            Kernel::Polynomial {
                gamma: g,
                coef0: c,
                degree: p,
            } => (gamma, coef0, degree) = (Value::Float(g), c, p),
            Kernel::Polyharmonic { beta: b } if b != 2 => beta = Value::Float(b as f64),
            _ => {}
        }
        vec![
            ("kernel", Value::Str(self.name().into())),
            ("epsilon", epsilon),
            ("beta", beta),
            ("gamma", gamma),
            ("coef0", Value::Float(coef0)),
            ("degree", Value::Int(degree as u64)),
        ]
    }

    /// The kernel from a bag of values; absent ones take `default`'s.
    pub fn from_values(v: &Values, default: Kernel) -> Result<Kernel> {
        let d = default.param_values();
        let get = |i: usize| d[i].1.clone();
        let name = v.name("kernel", default.name())?;
        let mut epsilon = Epsilon::from_value(v.raw("epsilon", get(1)))?;
        let beta = v.opt_f64("beta", None)?;
        let (g, c, p) = POLYNOMIAL_DEFAULTS;
        let gamma = v.opt_f64("gamma", None)?;
        let coef0 = v.f64("coef0", c)?;
        let degree = v.u32("degree", p)?;
        // Every interface passes coef0 whatever the kernel (Python's constructor has
        // it): checked here, not only by the polynomial kernel that reads it.
        if !coef0.is_finite() {
            return Err(Error::param(
                "coef0",
                format!("must be finite, got {coef0}"),
            ));
        }
        // scikit-learn's γ of the gaussian (and laplacian) kernel is 1/ε: honoured, never
        // silently ignored.
        match (name.as_str(), gamma) {
            (_, None) | ("polynomial", _) => {}
            ("gaussian" | "laplacian", Some(g)) => {
                if !(g.is_finite() && g > 0.0) {
                    return Err(Error::param(
                        "gamma",
                        format!("must be finite and > 0 (ε = 1/γ), got {g}"),
                    ));
                }
                if epsilon != Epsilon::Median {
                    return Err(Error::param(
                        "gamma",
                        "give epsilon or gamma (= 1/epsilon), not both",
                    ));
                }
                epsilon = Epsilon::Value(1.0 / g);
            }
            (other, Some(_)) => {
                return Err(Error::param(
                    "gamma",
                    format!(
                        "applies to the polynomial kernel, and to the gaussian and laplacian \
                         kernels as 1/epsilon; not to {other} (use epsilon)"
                    ),
                ))
            }
        }
        Kernel::from_name(&name, epsilon, beta, gamma.unwrap_or(g), coef0, degree)
    }
}

impl Param for Kernel {
    fn put(&self, _: &'static str, _: &Self, out: &mut ParamList) {
        out.extend(self.param_values());
    }
    fn get(v: &Values, _: &'static str, default: &Self) -> Result<Self> {
        Kernel::from_values(v, *default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_round_trips_through_its_values() {
        let kernels = [
            Kernel::gaussian(0.7),
            Kernel::default(),
            Kernel::Laplacian {
                epsilon: Epsilon::Value(2.0),
            },
            Kernel::InverseMultiquadric {
                epsilon: Epsilon::Median,
                beta: -1.5,
            },
            Kernel::Multiquadric {
                epsilon: Epsilon::Value(0.3),
                beta: 0.5,
            },
            Kernel::Wendland {
                epsilon: Epsilon::Value(3.0),
            },
            Kernel::Linear,
            Kernel::Polynomial {
                gamma: 0.5,
                coef0: 2.0,
                degree: 2,
            },
            Kernel::Precomputed,
            Kernel::Polyharmonic { beta: 2 },
            Kernel::Polyharmonic { beta: 5 },
        ];
        for k in kernels {
            let mut v = Values::new();
            for (name, value) in k.param_values() {
                v.set(name, value);
            }
            assert_eq!(Kernel::from_values(&v, Kernel::default()).unwrap(), k);
        }
    }
}
