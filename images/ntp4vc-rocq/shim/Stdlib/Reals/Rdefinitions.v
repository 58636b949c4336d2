Require Export Coq.Reals.Rdefinitions.
