"""Hand-written hostile requests: each asserts the exact 4xx and a useful message."""
