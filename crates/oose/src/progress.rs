//! Progress of long fits: a process-wide hook that a front end sets (the CLI shows the
//! messages in its spinner). Methods report a line now and then, e.g. t-SNE its
//! iteration and divergence every 50 iterations; without a hook nothing happens.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let s = seen.clone();
//! oose::progress::set_hook(Some(Box::new(move |m: &str| s.lock().unwrap().push(m.to_string()))));
//! let x = oose::datasets::three_d_clusters(120, 3, 0).points;
//! oose::methods::tsne::Tsne { perplexity: 10.0, max_iter: 100, ..Default::default() }
//!     .fit(x.as_ref())
//!     .unwrap();
//! oose::progress::set_hook(None);
//! assert!(seen.lock().unwrap().iter().any(|m| m.starts_with("t-SNE iteration 100/100")));
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// What a hook is: called with each progress message.
pub type Hook = Box<dyn Fn(&str) + Send + Sync>;

static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

/// Sets the function called with each progress message (`None`: no more calls).
pub fn set_hook(hook: Option<Hook>) {
    *HOOK.write().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// Reports `msg()` to the hook, if one is set (the message is made only then).
pub(crate) fn report(msg: impl FnOnce() -> String) {
    let guard = HOOK.read().unwrap_or_else(|e| e.into_inner());
    if let Some(hook) = guard.as_ref() {
        hook(&msg());
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks every running fit to stop: the long loops (t-SNE's iterations, UMAP's epochs,
/// NN-descent's rounds) check between steps and the fit returns
/// [`Error::Interrupted`](crate::Error::Interrupted). Process-wide; an interface calls
/// it on Ctrl-C and [`clear_stop`] before the next fit.
///
/// ```
/// oose::progress::request_stop();
/// let x = oose::datasets::three_d_clusters(120, 3, 0).points;
/// let r = oose::methods::tsne::Tsne { perplexity: 10.0, ..Default::default() }.fit(x.as_ref());
/// assert!(matches!(r, Err(oose::Error::Interrupted)));
/// oose::progress::clear_stop();
/// ```
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// Withdraws [`request_stop`].
pub fn clear_stop() {
    STOP.store(false, Ordering::Relaxed);
}

/// True once [`request_stop`] was called (and not cleared).
pub(crate) fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// `Err(Interrupted)` once a stop was requested.
pub(crate) fn check() -> crate::error::Result<()> {
    if stop_requested() {
        Err(crate::error::Error::Interrupted)
    } else {
        Ok(())
    }
}
