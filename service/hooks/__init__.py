"""The plugin host: hook specifications, plugin loading, the core's own contributions and
the registries built from every plugin's contributions.

Plugin authors import only :mod:`service` (its ``hookimpl`` marker and models).
"""
