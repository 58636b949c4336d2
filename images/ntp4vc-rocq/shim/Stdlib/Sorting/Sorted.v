Require Export Coq.Sorting.Sorted.
