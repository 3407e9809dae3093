"""Renderers: they read a report or a trace and never compute."""
