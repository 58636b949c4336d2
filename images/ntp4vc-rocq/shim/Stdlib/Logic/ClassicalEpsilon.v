Require Export Coq.Logic.ClassicalEpsilon.
