"""The report's view layer: one function per rendered section computes, from results/, every row selection,
sentence choice, verdict and comparison as typed values; templates/NAME.md.j2 only substitutes them.

A new section is one function decorated with `@view("NAME")` (in `sections.py`, `readme.py`, or a module of its
own imported below) and one small template `templates/NAME.md.j2`."""

from finrag.report.views import judge_error, readme, sections  # noqa: F401 - importing registers the views
from finrag.report.views.base import VIEWS, MissingResults, Results, view

__all__ = ["VIEWS", "MissingResults", "Results", "view"]
