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
  assert 5 in result || !(5 in result);
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
  assert 4 in result || !(4 in result);
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
  assert 14 in result || !(14 in result);
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
  assert 13 in result || !(13 in result);
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
  assert 91 in result || !(91 in result);
  assert !((forall x :: x in result ==> (InArray(a, x) && InArray(b, x))) && (forall i, j :: 0 <= i < j < |result| ==> result[i] != result[j]));  // verifies only if the output violates the postcondition
}

