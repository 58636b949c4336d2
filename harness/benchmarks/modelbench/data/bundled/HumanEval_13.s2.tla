\* verikit bundled candidate: wrong behaviour (returns b, which is 0 at the end, instead of a).
---- MODULE HumanEval_13 ----
EXTENDS Naturals
CONSTANTS MaxValue, NONE, NULL
VARIABLES a, b, result, pc

Init == /\ a \in 1..MaxValue
        /\ b \in 1..MaxValue
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF b # 0
              THEN /\ a' = b
                   /\ b' = a % b
                   /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = b
                   /\ pc' = "done"
                   /\ UNCHANGED <<a, b>>

Next == Loop \/ (pc = "done" /\ UNCHANGED <<a, b, result, pc>>)

Spec == Init /\ [][Next]_<<a, b, result, pc>>

Assertion == pc = "done" => result >= 1
====
