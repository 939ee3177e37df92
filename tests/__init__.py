"""The test suite (pytest); helpers in tests.helpers."""
