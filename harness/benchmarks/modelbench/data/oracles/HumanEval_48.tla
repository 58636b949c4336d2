---------------------------- MODULE HumanEval_48 ----------------------------
(* Oracle model of HumanEval/48, is_palindrome(text), written by hand for verikit.

   Python:  for i in range(len(text)):
                if text[i] != text[len(text) - 1 - i]:
                    return False
            return True
   Strings are lowered to sequences of code points (Model-Bench, Section 3.2): text
   ranges over the strings of length <= MaxLen over the code points in Alphabet
   (97 = "a", 98 = "b"); Python's text[i] is text[i + 1] here. *)
EXTENDS Naturals, Sequences
CONSTANTS MaxLen, Alphabet, NONE, NULL
VARIABLES text, i, result, pc

vars == <<text, i, result, pc>>

Strings == UNION {[1..n -> Alphabet] : n \in 0..MaxLen}

Init == /\ text \in Strings
        /\ i = 0
        /\ result = NONE
        /\ pc = "loop"

Loop == /\ pc = "loop"
        /\ IF i < Len(text)
              THEN IF text[i + 1] # text[Len(text) - i]
                      THEN /\ result' = FALSE
                           /\ pc' = "done"
                           /\ UNCHANGED i
                      ELSE /\ i' = i + 1
                           /\ UNCHANGED <<result, pc>>
              ELSE /\ result' = TRUE
                   /\ pc' = "done"
                   /\ UNCHANGED i
        /\ UNCHANGED text

Done == pc = "done" /\ UNCHANGED vars

Next == Loop \/ Done

Spec == Init /\ [][Next]_vars

Reverse(s) == [k \in 1..Len(s) |-> s[Len(s) + 1 - k]]

Assertion == pc = "done" => (result = (text = Reverse(text)))
=============================================================================
