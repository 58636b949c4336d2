Require Export Coq.ZArith.ZArith.
