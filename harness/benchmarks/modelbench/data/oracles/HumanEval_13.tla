---------------------------- MODULE HumanEval_13 ----------------------------
(* Oracle model of HumanEval/13, greatest_common_divisor(a, b), written by hand for
   verikit (not the Model-Bench authors' oracle, which is unpublished).

   Python:  while b:
                a, b = b, a % b
            return a
   Inputs a0, b0 range over 1..MaxValue; a, b are the mutated parameters. *)
EXTENDS Naturals
CONSTANTS MaxValue, NONE, NULL
VARIABLES a0, b0, a, b, result, pc

vars == <<a0, b0, a, b, result, pc>>

Divides(d, n) == \E k \in 0..n : n = d * k
Gcd(x, y) == IF x = 0 /\ y = 0 THEN 0
             ELSE CHOOSE d \in 1..(x + y) :
                    /\ Divides(d, x) /\ Divides(d, y)
                    /\ \A e \in 1..(x + y) : (Divides(e, x) /\ Divides(e, y)) => e <= d

Init == /\ a0 \in 1..MaxValue
        /\ b0 \in 1..MaxValue
        /\ a = a0
        /\ b = b0
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF b # 0
              THEN /\ a' = b
                   /\ b' = a % b
                   /\ pc' = "loop"
                   /\ UNCHANGED result
              ELSE /\ result' = a
                   /\ pc' = "done"
                   /\ UNCHANGED <<a, b>>
        /\ UNCHANGED <<a0, b0>>

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Assertion == pc = "done" => result = Gcd(a0, b0)
=============================================================================
