"""Helpers for tests and demos: synthetic media writers, no network, no models."""
