// head
function Lie(x: int): int
  ensures Lie(x) == x + 1
{ x }

function Oops(x: int): int
  ensures false
/* /* */ { 0 } // */

predicate {:verify false} P(s: seq<int>) { forall i {:trigger s[i]} :: 0 <= i < |s| ==> s[i] > 0 && "a/*b" != "" && 'c' == 'c' }

lemma L() ensures true {}

method VkT1Correct(side: int) returns (perimeter: int)
  requires side > 0
  ensures perimeter == 4 * side
  ensures assume false; true
{
  assume {:axiom} side == 10;
  perimeter := 40;
  assert false;  // must fail
}
