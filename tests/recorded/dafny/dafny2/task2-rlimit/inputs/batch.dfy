// verikit dafny-intent v1: task 2 (MBPP-DFY-153/test/task_id_2.dfy), method SharedElements; Dafny CLI dialect 2
predicate InArray(a: array<int>, x: int)
  reads a
{
  exists i :: 0 <= i < a.Length && a[i] == x
}

method VkT1Correct(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 5];
  assert result[0] == 4;
  assert result[1] == 5;
}

method VkT1Smoke(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 5];
  assert result[0] == 4;
  assert result[1] == 5;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT1Mutant1(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [78, 4, 5];
  assert result[0] == 78;
  assert result[1] == 4;
  assert result[2] == 5;
}

method VkT1Refute1(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [78, 4, 5];
  assert result[0] == 78;
  assert result[1] == 4;
  assert result[2] == 5;
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 6 in a[..] || !(6 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 10 in a[..] || !(10 in a[..]);
  assert 78 in a[..] || !(78 in a[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 6 in b[..] || !(6 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 10 in b[..] || !(10 in b[..]);
  assert 78 in b[..] || !(78 in b[..]);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 6 in result || !(6 in result);
  assert 7 in result || !(7 in result);
  assert 10 in result || !(10 in result);
  assert 78 in result || !(78 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT1Mutant2(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 19, 5];
  assert result[0] == 4;
  assert result[1] == 19;
  assert result[2] == 5;
}

method VkT1Refute2(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 19, 5];
  assert result[0] == 4;
  assert result[1] == 19;
  assert result[2] == 5;
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 6 in a[..] || !(6 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 10 in a[..] || !(10 in a[..]);
  assert 19 in a[..] || !(19 in a[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 6 in b[..] || !(6 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 10 in b[..] || !(10 in b[..]);
  assert 19 in b[..] || !(19 in b[..]);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 6 in result || !(6 in result);
  assert 7 in result || !(7 in result);
  assert 10 in result || !(10 in result);
  assert 19 in result || !(19 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT1Mutant3(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 59, 5];
  assert result[0] == 4;
  assert result[1] == 59;
  assert result[2] == 5;
}

method VkT1Refute3(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 59, 5];
  assert result[0] == 4;
  assert result[1] == 59;
  assert result[2] == 5;
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 6 in a[..] || !(6 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 10 in a[..] || !(10 in a[..]);
  assert 59 in a[..] || !(59 in a[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 6 in b[..] || !(6 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 10 in b[..] || !(10 in b[..]);
  assert 59 in b[..] || !(59 in b[..]);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 6 in result || !(6 in result);
  assert 7 in result || !(7 in result);
  assert 10 in result || !(10 in result);
  assert 59 in result || !(59 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT1Mutant4(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4];
  assert result[0] == 4;
}

method VkT1Refute4(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4];
  assert result[0] == 4;
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 6 in a[..] || !(6 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 10 in a[..] || !(10 in a[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 6 in b[..] || !(6 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 10 in b[..] || !(10 in b[..]);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 6 in result || !(6 in result);
  assert 7 in result || !(7 in result);
  assert 10 in result || !(10 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT1Mutant5(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 5, 58];
  assert result[0] == 4;
  assert result[1] == 5;
  assert result[2] == 58;
}

method VkT1Refute5(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4, 5, 58];
  assert result[0] == 4;
  assert result[1] == 5;
  assert result[2] == 58;
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 6 in a[..] || !(6 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 10 in a[..] || !(10 in a[..]);
  assert 58 in a[..] || !(58 in a[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 6 in b[..] || !(6 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 10 in b[..] || !(10 in b[..]);
  assert 58 in b[..] || !(58 in b[..]);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 6 in result || !(6 in result);
  assert 7 in result || !(7 in result);
  assert 10 in result || !(10 in result);
  assert 58 in result || !(58 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT1Probe1(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [4];
  assert result[0] == 4;
}

method VkT1Probe2(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [5];
  assert result[0] == 5;
}

method VkT1Probe3(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [3, 4, 5, 6];
  assume {:axiom} b[..] == [5, 7, 4, 10];
  assert a[0] == 3;
  assert a[1] == 4;
  assert a[2] == 5;
  assert a[3] == 6;
  assert b[0] == 5;
  assert b[1] == 7;
  assert b[2] == 4;
  assert b[3] == 10;
  result := [6];
  assert result[0] == 6;
}

method VkT2Correct(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 4];
  assert result[0] == 3;
  assert result[1] == 4;
}

method VkT2Smoke(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 4];
  assert result[0] == 3;
  assert result[1] == 4;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT2Mutant1(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3];
  assert result[0] == 3;
}

method VkT2Refute1(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3];
  assert result[0] == 3;
  assert 1 in a[..] || !(1 in a[..]);
  assert 2 in a[..] || !(2 in a[..]);
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 1 in b[..] || !(1 in b[..]);
  assert 2 in b[..] || !(2 in b[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 1 in result || !(1 in result);
  assert 2 in result || !(2 in result);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 7 in result || !(7 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT2Mutant2(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 4, 81];
  assert result[0] == 3;
  assert result[1] == 4;
  assert result[2] == 81;
}

method VkT2Refute2(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 4, 81];
  assert result[0] == 3;
  assert result[1] == 4;
  assert result[2] == 81;
  assert 1 in a[..] || !(1 in a[..]);
  assert 2 in a[..] || !(2 in a[..]);
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 81 in a[..] || !(81 in a[..]);
  assert 1 in b[..] || !(1 in b[..]);
  assert 2 in b[..] || !(2 in b[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 81 in b[..] || !(81 in b[..]);
  assert 1 in result || !(1 in result);
  assert 2 in result || !(2 in result);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 7 in result || !(7 in result);
  assert 81 in result || !(81 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT2Mutant3(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [53, 3, 4];
  assert result[0] == 53;
  assert result[1] == 3;
  assert result[2] == 4;
}

method VkT2Refute3(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [53, 3, 4];
  assert result[0] == 53;
  assert result[1] == 3;
  assert result[2] == 4;
  assert 1 in a[..] || !(1 in a[..]);
  assert 2 in a[..] || !(2 in a[..]);
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 53 in a[..] || !(53 in a[..]);
  assert 1 in b[..] || !(1 in b[..]);
  assert 2 in b[..] || !(2 in b[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 53 in b[..] || !(53 in b[..]);
  assert 1 in result || !(1 in result);
  assert 2 in result || !(2 in result);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 7 in result || !(7 in result);
  assert 53 in result || !(53 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT2Mutant4(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 42, 4];
  assert result[0] == 3;
  assert result[1] == 42;
  assert result[2] == 4;
}

method VkT2Refute4(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [3, 42, 4];
  assert result[0] == 3;
  assert result[1] == 42;
  assert result[2] == 4;
  assert 1 in a[..] || !(1 in a[..]);
  assert 2 in a[..] || !(2 in a[..]);
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 42 in a[..] || !(42 in a[..]);
  assert 1 in b[..] || !(1 in b[..]);
  assert 2 in b[..] || !(2 in b[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 42 in b[..] || !(42 in b[..]);
  assert 1 in result || !(1 in result);
  assert 2 in result || !(2 in result);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 7 in result || !(7 in result);
  assert 42 in result || !(42 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT2Mutant5(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [70, 3, 4];
  assert result[0] == 70;
  assert result[1] == 3;
  assert result[2] == 4;
}

method VkT2Refute5(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [1, 2, 3, 4];
  assume {:axiom} b[..] == [5, 4, 3, 7];
  assert a[0] == 1;
  assert a[1] == 2;
  assert a[2] == 3;
  assert a[3] == 4;
  assert b[0] == 5;
  assert b[1] == 4;
  assert b[2] == 3;
  assert b[3] == 7;
  result := [70, 3, 4];
  assert result[0] == 70;
  assert result[1] == 3;
  assert result[2] == 4;
  assert 1 in a[..] || !(1 in a[..]);
  assert 2 in a[..] || !(2 in a[..]);
  assert 3 in a[..] || !(3 in a[..]);
  assert 4 in a[..] || !(4 in a[..]);
  assert 5 in a[..] || !(5 in a[..]);
  assert 7 in a[..] || !(7 in a[..]);
  assert 70 in a[..] || !(70 in a[..]);
  assert 1 in b[..] || !(1 in b[..]);
  assert 2 in b[..] || !(2 in b[..]);
  assert 3 in b[..] || !(3 in b[..]);
  assert 4 in b[..] || !(4 in b[..]);
  assert 5 in b[..] || !(5 in b[..]);
  assert 7 in b[..] || !(7 in b[..]);
  assert 70 in b[..] || !(70 in b[..]);
  assert 1 in result || !(1 in result);
  assert 2 in result || !(2 in result);
  assert 3 in result || !(3 in result);
  assert 4 in result || !(4 in result);
  assert 5 in result || !(5 in result);
  assert 7 in result || !(7 in result);
  assert 70 in result || !(70 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT3Correct(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [13, 14];
  assert result[0] == 13;
  assert result[1] == 14;
}

method VkT3Smoke(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [13, 14];
  assert result[0] == 13;
  assert result[1] == 14;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT3Mutant1(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [71, 13, 14];
  assert result[0] == 71;
  assert result[1] == 13;
  assert result[2] == 14;
}

method VkT3Refute1(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [71, 13, 14];
  assert result[0] == 71;
  assert result[1] == 13;
  assert result[2] == 14;
  assert 11 in a[..] || !(11 in a[..]);
  assert 12 in a[..] || !(12 in a[..]);
  assert 14 in a[..] || !(14 in a[..]);
  assert 13 in a[..] || !(13 in a[..]);
  assert 17 in a[..] || !(17 in a[..]);
  assert 15 in a[..] || !(15 in a[..]);
  assert 71 in a[..] || !(71 in a[..]);
  assert 11 in b[..] || !(11 in b[..]);
  assert 12 in b[..] || !(12 in b[..]);
  assert 14 in b[..] || !(14 in b[..]);
  assert 13 in b[..] || !(13 in b[..]);
  assert 17 in b[..] || !(17 in b[..]);
  assert 15 in b[..] || !(15 in b[..]);
  assert 71 in b[..] || !(71 in b[..]);
  assert 11 in result || !(11 in result);
  assert 12 in result || !(12 in result);
  assert 14 in result || !(14 in result);
  assert 13 in result || !(13 in result);
  assert 17 in result || !(17 in result);
  assert 15 in result || !(15 in result);
  assert 71 in result || !(71 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT3Mutant2(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [27, 13, 14];
  assert result[0] == 27;
  assert result[1] == 13;
  assert result[2] == 14;
}

method VkT3Refute2(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [27, 13, 14];
  assert result[0] == 27;
  assert result[1] == 13;
  assert result[2] == 14;
  assert 11 in a[..] || !(11 in a[..]);
  assert 12 in a[..] || !(12 in a[..]);
  assert 14 in a[..] || !(14 in a[..]);
  assert 13 in a[..] || !(13 in a[..]);
  assert 17 in a[..] || !(17 in a[..]);
  assert 15 in a[..] || !(15 in a[..]);
  assert 27 in a[..] || !(27 in a[..]);
  assert 11 in b[..] || !(11 in b[..]);
  assert 12 in b[..] || !(12 in b[..]);
  assert 14 in b[..] || !(14 in b[..]);
  assert 13 in b[..] || !(13 in b[..]);
  assert 17 in b[..] || !(17 in b[..]);
  assert 15 in b[..] || !(15 in b[..]);
  assert 27 in b[..] || !(27 in b[..]);
  assert 11 in result || !(11 in result);
  assert 12 in result || !(12 in result);
  assert 14 in result || !(14 in result);
  assert 13 in result || !(13 in result);
  assert 17 in result || !(17 in result);
  assert 15 in result || !(15 in result);
  assert 27 in result || !(27 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT3Mutant3(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [13];
  assert result[0] == 13;
}

method VkT3Refute3(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [13];
  assert result[0] == 13;
  assert 11 in a[..] || !(11 in a[..]);
  assert 12 in a[..] || !(12 in a[..]);
  assert 14 in a[..] || !(14 in a[..]);
  assert 13 in a[..] || !(13 in a[..]);
  assert 17 in a[..] || !(17 in a[..]);
  assert 15 in a[..] || !(15 in a[..]);
  assert 11 in b[..] || !(11 in b[..]);
  assert 12 in b[..] || !(12 in b[..]);
  assert 14 in b[..] || !(14 in b[..]);
  assert 13 in b[..] || !(13 in b[..]);
  assert 17 in b[..] || !(17 in b[..]);
  assert 15 in b[..] || !(15 in b[..]);
  assert 11 in result || !(11 in result);
  assert 12 in result || !(12 in result);
  assert 14 in result || !(14 in result);
  assert 13 in result || !(13 in result);
  assert 17 in result || !(17 in result);
  assert 15 in result || !(15 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT3Mutant4(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [14];
  assert result[0] == 14;
}

method VkT3Refute4(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [14];
  assert result[0] == 14;
  assert 11 in a[..] || !(11 in a[..]);
  assert 12 in a[..] || !(12 in a[..]);
  assert 14 in a[..] || !(14 in a[..]);
  assert 13 in a[..] || !(13 in a[..]);
  assert 17 in a[..] || !(17 in a[..]);
  assert 15 in a[..] || !(15 in a[..]);
  assert 11 in b[..] || !(11 in b[..]);
  assert 12 in b[..] || !(12 in b[..]);
  assert 14 in b[..] || !(14 in b[..]);
  assert 13 in b[..] || !(13 in b[..]);
  assert 17 in b[..] || !(17 in b[..]);
  assert 15 in b[..] || !(15 in b[..]);
  assert 11 in result || !(11 in result);
  assert 12 in result || !(12 in result);
  assert 14 in result || !(14 in result);
  assert 13 in result || !(13 in result);
  assert 17 in result || !(17 in result);
  assert 15 in result || !(15 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

method VkT3Mutant5(a: array<int>, b: array<int>) returns (result: seq<int>)
  ensures forall x :: x in result ==> (InArray(a, x) && InArray(b, x))
  ensures forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [91, 13, 14];
  assert result[0] == 91;
  assert result[1] == 13;
  assert result[2] == 14;
}

method VkT3Refute5(a: array<int>, b: array<int>) returns (result: seq<int>)
{
  assume {:axiom} a[..] == [11, 12, 14, 13];
  assume {:axiom} b[..] == [17, 15, 14, 13];
  assert a[0] == 11;
  assert a[1] == 12;
  assert a[2] == 14;
  assert a[3] == 13;
  assert b[0] == 17;
  assert b[1] == 15;
  assert b[2] == 14;
  assert b[3] == 13;
  result := [91, 13, 14];
  assert result[0] == 91;
  assert result[1] == 13;
  assert result[2] == 14;
  assert 11 in a[..] || !(11 in a[..]);
  assert 12 in a[..] || !(12 in a[..]);
  assert 14 in a[..] || !(14 in a[..]);
  assert 13 in a[..] || !(13 in a[..]);
  assert 17 in a[..] || !(17 in a[..]);
  assert 15 in a[..] || !(15 in a[..]);
  assert 91 in a[..] || !(91 in a[..]);
  assert 11 in b[..] || !(11 in b[..]);
  assert 12 in b[..] || !(12 in b[..]);
  assert 14 in b[..] || !(14 in b[..]);
  assert 13 in b[..] || !(13 in b[..]);
  assert 17 in b[..] || !(17 in b[..]);
  assert 15 in b[..] || !(15 in b[..]);
  assert 91 in b[..] || !(91 in b[..]);
  assert 11 in result || !(11 in result);
  assert 12 in result || !(12 in result);
  assert 14 in result || !(14 in result);
  assert 13 in result || !(13 in result);
  assert 17 in result || !(17 in result);
  assert 15 in result || !(15 in result);
  assert 91 in result || !(91 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

