"""The Dafny grammar on method bodies whose statements start with a keyword after an
inner block: ``ghost var`` (and ``var``, ``assert``, ``label``, ``forall``,
``calc``, ``reveal``, ``print``, ``expect``, ``modify``) after ``if``/``while`` blocks.

Cause of the bug: one rule served for a declaration's body and for a block nested in it,
so the LALR state after any block's ``}`` also expected what follows a declaration
(``ghost``, ``method``, ``requires``...), and the contextual lexer read ``ghost`` there
as that keyword instead of a word of the body. No Dafny needed: these check the
extracted declarations (name, signature, clauses, body) and a whole test program.
"""

from __future__ import annotations

import pytest

from harness.benchmarks import dafny_intent as di


def _method(src: str, name: str):
    decls = di.declarations(src, "x.dfy")
    return next(d for d in decls if d.name == name), decls


def _sig(d) -> tuple:
    return ([(f.name, str(f.type)) for f in d.params], [(f.name, str(f.type)) for f in d.returns])


def test_the_issue_program():
    src = "method M() returns (r: int) ensures r == 1 { if true { r := 1; } ghost var k := 1; }"
    d, decls = _method(src, "M")
    assert len(decls) == 1 and (d.kind, d.ghost) == ("method", False)
    assert _sig(d) == ([], [("r", "int")])
    assert [(c.kind, c.expr) for c in d.clauses] == [("ensures", "r == 1")]
    assert d.body == "{ if true { r := 1; } ghost var k := 1; }"
    assert d.header == "method M() returns (r: int)"


WHILE = """\
method SumTo(n: nat) returns (s: nat)
  ensures s == n * (n + 1) / 2
{
  s := 0;
  var i := 0;
  while i < n
    invariant 0 <= i <= n
    invariant s == i * (i + 1) / 2
  {
    i := i + 1;
    s := s + i;
  }
  ghost var done := i == n;
}

method Main() { }
"""

IF_ELSE = """\
method Sign(x: int) returns (r: int)
  ensures x > 0 ==> r == 1
  ensures x < 0 ==> r == -1
  ensures x == 0 ==> r == 0
{
  if x > 0 {
    r := 1;
  } else {
    if x < 0 { r := -1; } else { r := 0; }
  }
  ghost var sq := r * r;
  assert sq <= 1;
}
"""

VAR_AFTER = """\
method Twice(a: array<int>) returns (t: seq<int>)
  requires a.Length > 0
  ensures |t| == 2 * a.Length
{
  if a.Length > 1 { t := []; }
  var s := a[..];
  t := s + s;
}
"""

ASSERT_AFTER = """\
function Sq(x: int): int { x * x }

method Square(x: int) returns (y: int)
  ensures y == Sq(x)
{
  { y := x * x; }
  assert y == Sq(x);
}
"""


@pytest.mark.parametrize("src, names, sig, clauses, body_end", [
    (WHILE, ["SumTo", "Main"], ([("n", "nat")], [("s", "nat")]), [("ensures", "s == n * (n + 1) / 2")],
     "  ghost var done := i == n;\n}"),
    (IF_ELSE, ["Sign"], ([("x", "int")], [("r", "int")]),
     [("ensures", "x > 0 ==> r == 1"), ("ensures", "x < 0 ==> r == -1"), ("ensures", "x == 0 ==> r == 0")],
     "  ghost var sq := r * r;\n  assert sq <= 1;\n}"),
    (VAR_AFTER, ["Twice"], ([("a", "array<int>")], [("t", "seq<int>")]),
     [("requires", "a.Length > 0"), ("ensures", "|t| == 2 * a.Length")], "  var s := a[..];\n  t := s + s;\n}"),
    (ASSERT_AFTER, ["Sq", "Square"], ([("x", "int")], [("y", "int")]), [("ensures", "y == Sq(x)")],
     "  { y := x * x; }\n  assert y == Sq(x);\n}"),
], ids=["ghost-var-after-while", "ghost-var-after-if-else", "var-after-block", "assert-after-block"])
def test_statements_after_an_inner_block(src, names, sig, clauses, body_end):
    method = next(n for n in names if n not in ("Sq", "Main"))
    d, decls = _method(src, method)
    assert d.kind == "method" and _sig(d) == sig
    assert [(c.kind, c.expr) for c in d.clauses] == clauses
    assert d.body.startswith("{\n") and d.body.endswith(body_end)
    assert d.text.endswith(d.body) and src.count(d.body) == 1
    assert d.end_line == d.line + d.text.count("\n")
    # the declarations around the method are all found (its body ended at its own brace)
    assert [x.name for x in decls] == names


STATEMENTS = ["ghost var k := 1;", "ghost var k: int;", "var k := 1;", "assert r == 1;", "label L: r := 1;",
              "forall i | 0 <= i < 1 { }", "calc { 1; 1; }", "reveal P();", "print r;", "expect r == 1;",
              "modify {};"]


@pytest.mark.parametrize("stmt", STATEMENTS)
@pytest.mark.parametrize("block", ["if true { r := 1; }", "while false { }", "if r < 0 { } else { r := 1; }", "{ }"])
def test_every_statement_keyword_after_every_block(block, stmt):
    src = f"method M() returns (r: int)\n  ensures r == 1\n{{\n  {block}\n  {stmt}\n}}\n\nmethod Main() {{ }}\n"
    d, decls = _method(src, "M")
    assert [x.name for x in decls] == ["M", "Main"]
    assert d.body == f"{{\n  {block}\n  {stmt}\n}}"
    assert [(c.kind, c.expr) for c in d.clauses] == [("ensures", "r == 1")] and _sig(d) == ([], [("r", "int")])


@pytest.mark.parametrize("word", ["ghost", "method", "lemma", "function", "predicate", "requires", "ensures",
                                  "reads", "modifies", "decreases"])
def test_declaration_keywords_inside_a_body_are_body_tokens(word):
    """Words that may follow a declaration's body are plain tokens inside one, also right
    after an inner block (they cannot end the body: only its closing brace does)."""
    src = f"method M() {{ if c {{ }} {word} }}\nmethod N() {{ }}\n"
    assert [(d.name, d.body) for d in di.declarations(src, "x.dfy")] == [("M", f"{{ if c {{ }} {word} }}"),
                                                                          ("N", "{ }")]


def test_a_test_program_with_ghost_state_after_blocks():
    """The whole extraction (method under test, specification, tests) on a program whose
    method body has ``ghost var`` after nested blocks."""
    src = IF_ELSE + """
method SignTest()
{
  var a := Sign(7);
  assert a == 1;
  var b := Sign(-3);
  print(b);
  //expected -1
}

method Main()
{
  SignTest();
}
"""
    t = di.read_task(src, "own/sign.dfy", "own/sign", source="gold")
    assert isinstance(t, di.Task), t
    assert t.method.name == "Sign" and t.test_method == "SignTest"
    assert [c.text for c in t.spec] == ["ensures x > 0 ==> r == 1", "ensures x < 0 ==> r == -1",
                                        "ensures x == 0 ==> r == 0"]
    assert [(x.inputs, x.outputs, x.forms) for x in t.tests] == [((7,), (1,), ("assert",)),
                                                                 ((-3,), (-1,), ("//expected",))]
    assert "ghost var sq" in t.method.body


def test_what_a_body_is_still_rejects():
    """The fix does not make the grammar accept anything: an unbalanced body is still a
    syntax error naming the file, line and column (of the last token read)."""
    with pytest.raises(di.TaskFileError, match=r"^x.dfy:2:26: unexpected end of input"):
        di.parse("method M() {\n  if c { ghost var k := 1;\n", "x.dfy")
