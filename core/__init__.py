"""MRP-VM engine: knowledge units, retrieval, reasoning and the plugin kernel (no UI imports)."""
