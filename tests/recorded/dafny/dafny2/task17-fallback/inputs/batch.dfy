// verikit dafny-intent v1: task 17 (MBPP-DFY-153/test/task_id_17.dfy), method SquarePerimeter; Dafny CLI dialect 2
method VkT1Correct(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 40;
}

method VkT1Smoke(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 40;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT1Mutant1(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 30;
}

method VkT1Refute1(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 10;
  perimeter := 30;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT1Mutant2(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 34;
}

method VkT1Refute2(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 10;
  perimeter := 34;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT1Mutant3(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 33;
}

method VkT1Refute3(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 10;
  perimeter := 33;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT1Mutant4(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 31;
}

method VkT1Refute4(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 10;
  perimeter := 31;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT1Mutant5(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 32;
}

method VkT1Refute5(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 10;
  perimeter := 32;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT2Correct(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 20;
}

method VkT2Smoke(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 20;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT2Mutant1(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 25;
}

method VkT2Refute1(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 25;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT2Mutant2(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 28;
}

method VkT2Refute2(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 28;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT2Mutant3(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 12;
}

method VkT2Refute3(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 12;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT2Mutant4(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 19;
}

method VkT2Refute4(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 19;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT2Mutant5(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 5;
  perimeter := 23;
}

method VkT2Refute5(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 5;
  perimeter := 23;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT3Correct(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 16;
}

method VkT3Smoke(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 16;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}

method VkT3Mutant1(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 25;
}

method VkT3Refute1(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 25;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT3Mutant2(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 21;
}

method VkT3Refute2(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 21;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT3Mutant3(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 20;
}

method VkT3Refute3(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 20;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT3Mutant4(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 26;
}

method VkT3Refute4(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 26;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

method VkT3Mutant5(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 4;
  perimeter := 18;
}

method VkT3Refute5(side: int) returns (perimeter: int)
{
  assume {:axiom} side == 4;
  perimeter := 18;
  assert !((perimeter == 4 * sidee));  // verifies only if the output violates the postcondition
}

