---------------------------- MODULE HumanEval_52 ----------------------------
(* Oracle model of HumanEval/52, below_threshold(l, t), written by hand for verikit.

   Python:  for e in l:
                if e >= t:
                    return False
            return True
   l ranges over the sequences of length <= MaxLen over 0..MaxValue, t over
   0..MaxValue. *)
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, MaxValue, NONE, NULL
VARIABLES l, t, i, result, pc

vars == <<l, t, i, result, pc>>

Lists == UNION {[1..n -> 0..MaxValue] : n \in 0..MaxLen}

Init == /\ l \in Lists
        /\ t \in 0..MaxValue
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF i <= Len(l)
              THEN IF l[i] >= t
                      THEN /\ result' = FALSE
                           /\ pc' = "done"
                           /\ UNCHANGED i
                      ELSE /\ i' = i + 1
                           /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = TRUE
                   /\ pc' = "done"
                   /\ UNCHANGED i
        /\ UNCHANGED <<l, t>>

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Assertion == pc = "done" => (result = \A k \in 1..Len(l) : l[k] < t)
=============================================================================
