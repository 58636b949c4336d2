\* verikit bundled candidate: does not parse (Python's "while b:" and "!=" written into TLA+).
---- MODULE HumanEval_13 ----
EXTENDS Naturals
CONSTANTS MaxValue
VARIABLES a, b, pc

Init == a \in 1..MaxValue /\ b \in 1..MaxValue /\ pc = "loop"

Next == while b != 0:
          /\ a' = b
          /\ b' = a % b

Spec == Init /\ [][Next]_<<a, b, pc>>

Assertion == TRUE
====
