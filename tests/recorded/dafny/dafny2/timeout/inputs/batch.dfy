function Ack(m: nat, n: nat): nat
{
  if m == 0 then n + 1 else if n == 0 then Ack(m - 1, 1)
  else Ack(m - 1, Ack(m, n - 1))
}

method VkT1Correct()
{
  assert Ack(4, 2) == 1;
}
