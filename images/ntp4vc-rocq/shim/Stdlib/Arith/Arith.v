Require Export Coq.Arith.Arith.
