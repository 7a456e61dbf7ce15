"""A plugin module whose import fails, for the fault-isolation test."""

raise RuntimeError("example-broken plugin: import failed on purpose")
