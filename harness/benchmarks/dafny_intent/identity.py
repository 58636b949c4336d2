"""The benchmark's name and version: part of every job key and written at the top of every
generated check file (:func:`harness.benchmarks.dafny_intent.checks.build_files`), so a
change of version changes every key. Kept apart so that the check-file generator and the
benchmark interface read the same constants without importing each other."""

NAME = "dafny-intent"
VERSION = "1"
