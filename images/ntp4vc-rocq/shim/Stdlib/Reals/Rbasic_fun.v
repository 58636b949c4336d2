Require Export Coq.Reals.Rbasic_fun.
