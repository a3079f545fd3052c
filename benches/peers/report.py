"""Shared by the summaries of benches/run_*.sh: criterion medians and OOSE_FACTS."""
import json
import pathlib


def median(group, name):
    """Criterion's median of benchmark `group/name`, in seconds."""
    path = pathlib.Path("target/criterion") / group / name / "new/estimates.json"
    return json.load(open(path))["median"]["point_estimate"] / 1e9


def facts(line):
    """The key=value pairs of an `OOSE_FACTS k=v …` line."""
    return dict(kv.split("=", 1) for kv in line.split()[1:])
