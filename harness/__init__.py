"""verikit: a containerized reproducibility kit for benchmarks that evaluate LLMs on
formal verification (the Python harness; distribution ``verikit``)."""

__version__ = "0.1.0"
