Require Export Coq.Sorting.Permutation.
