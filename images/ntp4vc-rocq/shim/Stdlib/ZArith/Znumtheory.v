Require Export Coq.ZArith.Znumtheory.
