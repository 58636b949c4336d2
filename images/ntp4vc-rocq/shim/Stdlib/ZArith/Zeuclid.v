Require Export Coq.ZArith.Zeuclid.
