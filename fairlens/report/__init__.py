"""The report shared by :func:`fairlens.audit` and ``fairlens tour``: one document schema, one renderer.

Both build a *report document* (a JSON-safe dict, schema ``fairlens.report/2``, documented and checked in
:mod:`fairlens.report._schema`), write it with :func:`write_text_atomic`, and turn it into one
self-contained HTML page with :func:`render_html`.
"""
from __future__ import annotations

from ._output import REPORT_SUFFIXES, check_output_path, write_text_atomic
from ._render import format_number, render_html
from ._schema import SCHEMA_VERSION, environment_info, frame_sha256, sha256_file, utc_now, validate_document

__all__ = ["render_html", "format_number", "validate_document", "SCHEMA_VERSION", "environment_info",
           "sha256_file", "frame_sha256", "utc_now", "write_text_atomic", "check_output_path", "REPORT_SUFFIXES"]
