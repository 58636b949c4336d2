// verikit dafny-intent v1: task 17 (MBPP-DFY-153/test/task_id_17.dfy), method SquarePerimeter; Dafny CLI dialect 2
method VkT1Smoke(side: int) returns (perimeter: int)
  ensures perimeter == 4 * sidee
{
  assume {:axiom} side == 10;
  perimeter := 40;
  assert false;  // must fail: it verifies only if the assumptions are inconsistent
}
