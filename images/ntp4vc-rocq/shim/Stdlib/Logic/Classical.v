Require Export Coq.Logic.Classical.
