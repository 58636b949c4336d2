Require Export Coq.Reals.Reals.
Require Export Stdlib.Reals.Zfloor.
