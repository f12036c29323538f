"""Plumbing: safe file io, cancellation, leases, progress, validated config, endpoints."""
