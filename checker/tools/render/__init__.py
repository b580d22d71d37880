"""Rendering reports: HTML pages and graph drawings."""
