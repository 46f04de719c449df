"""Render results (terminal, JSON); compute nothing."""
