//! The figure of `oose demo` and `oose plot`: training embedding in grey, new points
//! coloured by a per-point value (a diagnostic), with a colour bar; SVG, PNG, JPEG or
//! BMP by the output's extension.

use crate::io::MatrixReader;
use crate::{check_width, load_model, say, CliError};
use clap::Args;
use oose::faer::MatRef;
use oose::methods::OutOfSample;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // DejaVu Sans (free licence, assets/DejaVuSans-LICENSE.txt), embedded so that the
        // plot needs no font on the machine.
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

/// What a figure shows: the first two columns of `train` (grey) and of `new` (coloured
/// by `value`, shown on a colour bar labelled `value_label`), under `title`.
pub struct Scatter<'a> {
    pub title: &'a str,
    pub train: MatRef<'a, f64>,
    pub new: MatRef<'a, f64>,
    pub value: &'a [f64],
    pub value_label: &'a str,
}

/// Writes the figure `s` to `path`: SVG when `path` ends in `.svg`, else the bitmap
/// format its extension names (PNG, JPEG, BMP).
pub fn scatter_png(path: &std::path::Path, s: &Scatter<'_>) -> Result<(), CliError> {
    register_font();
    let err = |e: String| CliError::data(format!("{}: cannot draw: {e}", path.display()));
    if check_format(path)? {
        draw(SVGBackend::new(path, (1000, 760)).into_drawing_area(), s).map_err(err)
    } else {
        draw(BitMapBackend::new(path, (1000, 760)).into_drawing_area(), s).map_err(err)
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, s: &Scatter<'_>) -> Result<(), String> {
    let &Scatter {
        title,
        train,
        new,
        value,
        value_label,
    } = s;
    let err = |e: String| e;
    let col = |m: MatRef<'_, f64>, j: usize| -> Vec<f64> {
        if j < m.ncols() {
            (0..m.nrows()).map(|i| m[(i, j)]).collect()
        } else {
            vec![0.0; m.nrows()]
        }
    };
    let (tx, ty, nx, ny) = (col(train, 0), col(train, 1), col(new, 0), col(new, 1));
    let range = |a: &[f64], b: &[f64]| {
        let lo = a.iter().chain(b).copied().fold(f64::INFINITY, f64::min);
        let hi = a.iter().chain(b).copied().fold(f64::NEG_INFINITY, f64::max);
        let pad = 0.05 * (hi - lo).max(1e-12);
        (lo - pad)..(hi + pad)
    };
    let (xr, yr) = (range(&tx, &nx), range(&ty, &ny));
    let vmin = value.iter().copied().fold(f64::INFINITY, f64::min);
    let vmax = value.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (vmin, vmax) = if vmax > vmin {
        (vmin, vmax)
    } else {
        (vmin - 0.5, vmin + 0.5)
    };

    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let (main, bar) = root.split_horizontally(860);
    let mut chart = ChartBuilder::on(&main)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(xr, yr)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("component 1")
        .y_desc("component 2")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let grey = RGBColor(185, 185, 185);
    chart
        .draw_series(
            tx.iter()
                .zip(&ty)
                .map(|(&x, &y)| Circle::new((x, y), 2, grey.filled())),
        )
        .map_err(|e| err(e.to_string()))?
        .label("training points")
        .legend(move |(x, y)| Circle::new((x, y), 4, grey.filled()));
    chart
        .draw_series(nx.iter().zip(&ny).zip(value).map(|((&x, &y), &v)| {
            let c = ViridisRGB::get_color_normalized(v, vmin, vmax);
            Circle::new((x, y), 4, c.filled())
        }))
        .map_err(|e| err(e.to_string()))?
        .label(format!("new points (colour = {value_label})"))
        .legend(|(x, y)| {
            Circle::new(
                (x, y),
                4,
                ViridisRGB::get_color_normalized(0.7, 0.0, 1.0).filled(),
            )
        });
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    let mut cb = ChartBuilder::on(&bar)
        .margin_top(48)
        .margin_bottom(52)
        .margin_right(8)
        .y_label_area_size(70)
        .caption(value_label, ("sans-serif", 14))
        .build_cartesian_2d(0.0..1.0, vmin..vmax)
        .map_err(|e| err(e.to_string()))?;
    cb.configure_mesh()
        .disable_x_mesh()
        .disable_x_axis()
        .disable_y_mesh()
        .label_style(("sans-serif", 13))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let steps = 200;
    cb.draw_series((0..steps).map(|s| {
        let a = vmin + (vmax - vmin) * s as f64 / steps as f64;
        let b = vmin + (vmax - vmin) * (s + 1) as f64 / steps as f64;
        let c = ViridisRGB::get_color_normalized(0.5 * (a + b), vmin, vmax);
        Rectangle::new([(0.0, a), (1.0, b)], c.filled())
    }))
    .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// `oose plot`: a model's training embedding and new points coloured by a diagnostic.
#[derive(Args)]
pub struct PlotArgs {
    /// Model file written by `oose fit`.
    model: String,
    /// New points (.npy or CSV; `-` = stdin), extended with their diagnostics.
    #[arg(long, default_value = "-")]
    input: String,
    /// The diagnostic column that colours the new points (`oose extend --diagnostics`
    /// names them): novelty_pvalue, novelty, residual, reconstruction_error, …
    #[arg(long, default_value = "novelty_pvalue")]
    color: String,
    /// Colour by log10 of the values (p-values, residuals spanning decades).
    #[arg(long)]
    log10: bool,
    /// Output file; its extension picks the format: .svg, .png, .jpg or .bmp.
    #[arg(long, default_value = "plot.png")]
    output: String,
}

/// The image formats `oose plot` writes, by the output's extension (any case).
const FORMATS: &[&str] = &["svg", "png", "jpg", "jpeg", "bmp"];

/// Whether `path` asks for SVG; an extension that names no format [`FORMATS`] has is
/// refused (`oose plot` checks before any work: the drawing backend would fail only at
/// the end, after creating an empty file).
fn check_format(path: &std::path::Path) -> Result<bool, CliError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext {
        Some(e) if FORMATS.contains(&e.as_str()) => Ok(e == "svg"),
        _ => Err(CliError::usage(format!(
            "--output: {}: the name must end in .svg, .png, .jpg or .bmp (the \
             extension picks the format)",
            path.display()
        ))),
    }
}

/// Runs `oose plot`.
pub fn run(a: PlotArgs) -> Result<(), CliError> {
    check_format(std::path::Path::new(&a.output))?;
    let model = load_model(&a.model)?;
    if model.n_components() < 2 {
        return Err(CliError::usage(format!(
            "{}: a {}-component embedding has no plane to draw (fit with 2 components or more)",
            a.model,
            model.n_components()
        )));
    }
    let z = MatrixReader::open(&a.input)?.read_all()?;
    check_width(&model, z.ncols(), &a.input)?;
    let e = model.extend(z.as_ref())?;
    let mut columns: Vec<(&str, &[f64])> = vec![
        ("residual", &e.residual),
        ("reconstruction_error", &e.reconstruction_error),
    ];
    columns.extend(e.extra.iter().map(|c| (c.name, c.values.as_slice())));
    let Some((_, values)) = columns.iter().find(|(n, _)| *n == a.color) else {
        let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
        return Err(CliError::usage(format!(
            "--color: this {} model has no column {:?}; it has {}",
            model.method(),
            a.color,
            names.join(", ")
        )));
    };
    let (values, label): (Vec<f64>, String) = if a.log10 {
        let v = values.iter().map(|v| v.max(1e-300).log10()).collect();
        (v, format!("log10 {}", a.color))
    } else {
        (values.to_vec(), a.color.clone())
    };
    let finite = values.iter().filter(|v| v.is_finite()).count();
    if finite == 0 {
        return Err(CliError::usage(format!(
            "--color {}: no finite value for these points (the {} model does not compute it)",
            a.color,
            model.method()
        )));
    }
    let title = format!(
        "{}: {} new points over the training embedding",
        model.method(),
        z.nrows()
    );
    let figure = Scatter {
        title: &title,
        train: model.embedding(),
        new: e.coordinates.as_ref(),
        value: &values,
        value_label: &label,
    };
    scatter_png(std::path::Path::new(&a.output), &figure)?;
    say!("wrote {}", a.output)?;
    Ok(())
}
