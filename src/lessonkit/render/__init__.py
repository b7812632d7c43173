"""Renderers: pure functions from the lesson model to the text or bytes of a file."""
