"""verikit-smtlib: an example verikit benchmark plugin that lives outside the kit.

It registers, by entry point only (its pyproject.toml):

- the benchmark ``smtlib`` (:mod:`.benchmark`: loop invariants checked by Z3);
- the verifier ``z3`` (:mod:`.z3`) and its toolchain pins ``smtlib-z3``;
- the dataset ``smtlib-loops`` (:data:`DATASETS_DIR`: its dataset entry and files).
"""

from pathlib import Path

from .benchmark import Smtlib

#: The plugin's dataset registry entries (entry point ``verikit.datasets``).
DATASETS_DIR = Path(__file__).resolve().parent / "registry"

#: The benchmark (entry point ``verikit.benchmarks``).
BENCHMARK = Smtlib()
