"""Benchmarks on real clusters: nccl-tests-compatible collectives and readers of their logs."""
