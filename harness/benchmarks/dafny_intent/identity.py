"""The benchmark's name, version and modes: the name and version are part of every job key
and written at the top of every generated check file
(:func:`harness.benchmarks.dafny_intent.checks.build_files`), so a change of version changes
every key. Kept apart so that the check-file generator, the generation protocol and the
benchmark interface read the same constants without importing each other."""

NAME = "dafny-intent"
VERSION = "1"
MODES = ("spec",)


def check_mode(mode: str) -> None:
    """Raises ValueError: ``mode`` is not one of :data:`MODES` (names them)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
