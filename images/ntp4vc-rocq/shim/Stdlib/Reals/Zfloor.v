(* Compat for Coq 8.20: Rocq 9.0 Stdlib.Reals.Zfloor (same definitions). *)
From Coq Require Import Rbase Rfunctions.
Definition Zfloor (x : R) := (up x - 1)%Z.
Definition Zceil (x : R) := (- Zfloor (- x))%Z.
