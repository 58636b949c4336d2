---------------------------- MODULE HumanEval_35 ----------------------------
(* Oracle model of HumanEval/35, max_element(l), written by hand for verikit.

   Python:  m = l[0]
            for e in l:
                if e > m:
                    m = e
            return m
   l ranges over the non-empty sequences of length <= MaxLen with elements in
   -MaxValue..MaxValue (Python's l[0] is l[1] here: TLA+ sequences start at 1). *)
EXTENDS Integers, Sequences
CONSTANTS MaxLen, MaxValue, NONE, NULL
VARIABLES l, m, i, result, pc

vars == <<l, m, i, result, pc>>

Lists == UNION {[1..n -> -MaxValue..MaxValue] : n \in 1..MaxLen}

Init == /\ l \in Lists
        /\ m = l[1]
        /\ i = 1
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF i <= Len(l)
              THEN /\ m' = IF l[i] > m THEN l[i] ELSE m
                   /\ i' = i + 1
                   /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = m
                   /\ pc' = "done"
                   /\ UNCHANGED <<m, i>>
        /\ UNCHANGED l

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Assertion == pc = "done" => /\ \E k \in 1..Len(l) : result = l[k]
                            /\ \A k \in 1..Len(l) : l[k] <= result
=============================================================================
