"""The HTML report's tests (a package, so that its conftest.py does not clash with tests/conftest.py)."""
