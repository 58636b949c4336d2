\* verikit bundled candidate: no Assertion defined (the config's INVARIANT Assertion
\* cannot be checked).
---- MODULE HumanEval_48 ----
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, Alphabet
VARIABLES text, result

Init == text \in UNION {[1..n -> Alphabet] : n \in 0..MaxLen} /\ result = NONE

Next == result = NONE /\ result' = (text = [k \in 1..Len(text) |-> text[Len(text) + 1 - k]]) /\ UNCHANGED text

Spec == Init /\ [][Next]_<<text, result>>

IsPalindrome == result # NONE
====
