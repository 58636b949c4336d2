// verikit dafny-intent v1: task 2 (MBPP-DFY-153/test/task_id_2.dfy), method SharedElements; Dafny CLI dialect 2
predicate InArray(a: array<int>, x: int)
  reads a
{
  exists i :: 0 <= i < a.Length && a[i] == x
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
