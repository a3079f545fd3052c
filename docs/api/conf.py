"""Sphinx configuration of the Python API reference (built from the docstrings).

scripts/test builds it with warnings as errors (``sphinx-build -W``), and numpydoc
validates every public docstring: a parameter missing from a Parameters section (PR01),
one documented that does not exist (PR02), a section out of order or unknown (GL06,
GL07) fail the build.
"""

import oose

project = "oose"
release = version = oose.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc"]
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_validation_checks = {"PR01", "PR02", "GL06", "GL07"}
# sklearn's own mixin methods (set_output, get_params, ...) are documented by
# scikit-learn; __init__ is documented by the class docstring.
numpydoc_validation_exclude = {r"\.__init__$", r"\.set_\w+$", r"\.get_params$", r"\.get_metadata_routing$"}
html_theme = "alabaster"


def _skip_routing(app, what, name, obj, skip, options):
    """scikit-learn's generated metadata-routing setters (``set_fit_request``, …) are
    scikit-learn's, documented there, and reference its glossary."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_routing)
exclude_patterns = ["_build"]
