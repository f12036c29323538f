"""Helpers the tests share: small KBs, fuzz settings, interrupts, the scripted LLM server."""
