"""The loaded knowledge base, a caller's permitted view, and what is built per view."""
