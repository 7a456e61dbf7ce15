"""How the command line and the MCP tools ask for answers: one :class:`Backend` (in this
process or over HTTP) and the translation of flags and tool arguments into request bodies.
"""
