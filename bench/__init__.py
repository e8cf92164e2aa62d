"""Benchmarks. Run them as scripts (`make bench`), not as part of the test suite; see README.md."""
