"""HTTP layer: one controller per resource; request/response structs beside them."""
