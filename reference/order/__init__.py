"""Deprecated: see `reference.deprecated`."""

from reference.deprecated import alias_package

alias_package(__name__)
