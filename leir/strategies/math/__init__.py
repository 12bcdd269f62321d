"""math-level strategies: one module per strategy; importing this package registers them."""
