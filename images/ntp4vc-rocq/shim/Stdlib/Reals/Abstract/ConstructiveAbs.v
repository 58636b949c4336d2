Require Export Coq.Reals.Abstract.ConstructiveAbs.
