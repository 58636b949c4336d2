"""Tests of harness/benchmarks/cfront.py: the small C/ACSL lexer the CASP benchmark uses
to find a function, its contract and its C tokens before Frama-C runs."""

from __future__ import annotations

import pytest

from harness.benchmarks.casp.cfront import (
    CSyntaxError,
    acsl_blocks,
    code_tokens,
    find_function,
    function_name,
    normalize_acsl,
    tokens,
)

# --- tokens -----------------------------------------------------------------------------


def test_tokens_kinds_and_offsets():
    src = '#include <x.h>\n/*@ requires x > 0; */\nint f(int x) { return x + 0x1F; } // done\n'
    toks = tokens(src)
    assert [t.kind for t in toks][:3] == ["pp", "acsl", "ident"]
    assert toks[0].text == "#include <x.h>"
    assert toks[1].text == "/*@ requires x > 0; */"
    assert toks[-1].kind == "comment" and toks[-1].text == "// done"
    assert any(t.kind == "number" and t.text == "0x1F" for t in toks)
    for t in toks:  # offsets slice the source back to the token text
        assert src[t.start:t.end] == t.text
    assert "ws" not in {t.kind for t in toks}


def test_braces_and_comment_ends_inside_literals_and_comments_are_not_code():
    src = ('/* a comment with { and } and "quote */\n'
           'const char *s = "*/ } { /* not a comment";\n'
           "char c = '}';\n"
           "// line comment { \n"
           "int f(void) { return '{'; }\n")
    toks = tokens(src)
    kinds = {t.text: t.kind for t in toks}
    assert kinds['"*/ } { /* not a comment"'] == "string"
    assert kinds["'}'"] == "string"
    assert kinds["// line comment { "] == "comment"
    braces = [t.text for t in toks if t.kind == "punct" and t.text in "{}"]
    assert braces == ["{", "}"]  # only the body of f
    fdef = find_function(src, "f")
    assert fdef is not None
    assert src[fdef.start:fdef.end] == "int f(void) { return '{'; }"


def test_escaped_quote_inside_string():
    toks = tokens(r'char *s = "a \" } b"; int g(void) { return 1; }')
    assert [t.text for t in toks if t.kind == "string"] == [r'"a \" } b"']
    assert function_name(r'char *s = "a \" } b"; int g(void) { return 1; }') == "g"


def test_division_then_deref_is_not_a_comment():
    assert code_tokens("x = a / *p;") == ["x", "=", "a", "/", "*", "p", ";"]


@pytest.mark.parametrize("src, line", [
    ("int f(void) { return 0; }\n/* never closed\nint g(void) { return 1; }\n", 2),
    ("/*@ requires x > 0;\n  ensures \\result == 0;\nint f(int x);\n", 1),
    ("int a;\nint b;\nint c; /* oops", 3),
])
def test_unterminated_comment_raises_with_its_line(src, line):
    with pytest.raises(CSyntaxError) as exc:
        tokens(src)
    assert exc.value.line == line
    assert str(exc.value).startswith(f"line {line}:")
    assert "unterminated comment" in str(exc.value)
    with pytest.raises(CSyntaxError):
        find_function(src, "f")


def test_comment_opener_inside_string_is_fine():
    src = 'const char *s = "/*";\nint f(void) { return 0; }\n'
    assert find_function(src, "f") is not None


@pytest.mark.parametrize("src", ['char *s = "abc;\nint f(void) { return 0; }\n',
                                 "char c = '{;\nint f(void) { return 0; }\n"])
def test_unterminated_literal_raises(src):
    with pytest.raises(CSyntaxError) as exc:
        tokens(src)
    assert exc.value.line == 1


# --- find_function ----------------------------------------------------------------------


def test_find_function_with_contract():
    src = ("#include <limits.h>\n"
           "/*@ requires n >= 0;\n    ensures \\result == n; */\n"
           "int id(int n) {\n  return n;\n}\n")
    fdef = find_function(src, "id")
    assert fdef.name == "id"
    assert fdef.contract == "/*@ requires n >= 0;\n    ensures \\result == n; */"
    assert fdef.contract_start == src.index("/*@")
    assert src[fdef.start:fdef.end] == "int id(int n) {\n  return n;\n}"


def test_find_function_without_contract():
    src = "/* plain comment */\nint f(void) { return 0; }\n"
    fdef = find_function(src, "f")
    assert fdef.contract is None
    assert fdef.contract_start == fdef.start == src.index("int f")


def test_prototype_alone_is_not_a_definition():
    src = "/*@ ensures \\result >= 0; */\nint abs(int x);\nint max(int x, int y);\n"
    assert find_function(src, "abs") is None
    assert find_function(src, "max") is None
    assert find_function(src, "missing") is None


def test_prototype_then_definition_finds_the_definition():
    src = ("/*@ ensures \\result == 1; */\nint f(void);\n"
           "int g(void) { return f(); }\n"
           "/*@ ensures \\result == 1; assigns \\nothing; */\nint f(void) { return 1; }\n")
    fdef = find_function(src, "f")
    assert src[fdef.start:fdef.end] == "int f(void) { return 1; }"
    assert fdef.contract == "/*@ ensures \\result == 1; assigns \\nothing; */"


def test_calls_inside_bodies_are_not_definitions():
    src = "int g(int x) { if (x) { return f(x); } return 0; }\nint f(int y) { return y; }\n"
    fdef = find_function(src, "f")
    assert src[fdef.start:fdef.end] == "int f(int y) { return y; }"


def test_struct_return_type_is_part_of_the_declaration():
    src = ("struct maybeBool {\n    bool isValid;\n    double value;\n};\n\n"
           "/*@ assigns \\nothing;\n ensures ! \\result.isValid;\n */\n"
           "struct maybeBool noneBool () {\n    struct maybeBool result = { false, false };\n"
           "    return result;\n}")
    fdef = find_function(src, "noneBool")
    assert src[fdef.start:].startswith("struct maybeBool noneBool ()")
    assert fdef.contract.startswith("/*@ assigns \\nothing;")
    assert fdef.end == len(src)
    assert function_name(src[src.index("struct maybeBool noneBool"):]) == "noneBool"


def test_pointer_and_qualified_return_types():
    src = "static const int *p(int *a) { return a; }\n"
    fdef = find_function(src, "p")
    assert fdef.start == 0


def test_loop_annotations_inside_body_are_not_the_contract():
    src = ("int s(int n) {\n  int r = 0;\n  /*@ loop invariant 0 <= i <= n; */\n"
           "  for (int i = 0; i < n; i++) r++;\n  return r;\n}\n")
    fdef = find_function(src, "s")
    assert fdef.contract is None
    assert fdef.end == len(src) - 1


@pytest.mark.parametrize("between", ["// the function\n", "/* the function */\n"])
def test_comment_between_contract_and_function(between):
    src = "/*@ requires x > 0;\n    ensures \\result == x; */\n" + between + "int f(int x) { return x; }\n"
    assert find_function(src, "f").contract == "/*@ requires x > 0;\n    ensures \\result == x; */"


def test_multiline_define_is_one_preprocessor_token():
    src = "#define BEGIN \\\n  {\nint f(void) { return 0; }\n"
    assert [t.kind for t in tokens(src)][0] == "pp"
    assert tokens(src)[0].text == "#define BEGIN \\\n  {"
    assert find_function(src, "f") is not None


# --- code_tokens, acsl_blocks, normalize_acsl ------------------------------------------


def test_code_tokens_ignore_whitespace_comments_and_annotations():
    a = "int f(int a){return a;}"
    b = ("int  f ( int a ) /* note */\n{\n  //@ assert a == a;\n"
         "  /*@ loop invariant \\true; */\n  return a; // same\n}\n")
    assert code_tokens(a) == code_tokens(b)
    assert code_tokens(a) == ["int", "f", "(", "int", "a", ")", "{", "return", "a", ";", "}"]


@pytest.mark.parametrize("other", [
    "int f(int a){return a+1;}",
    "int f(int b){return b;}",
    "long f(int a){return a;}",
    "int f(int a){return a;;}",
])
def test_code_tokens_detect_code_changes(other):
    assert code_tokens("int f(int a){return a;}") != code_tokens(other)


def test_code_tokens_keep_string_contents():
    assert code_tokens('char *s = "a b";') != code_tokens('char *s = "a  b";')
    assert code_tokens("x = a<<=b;") == ["x", "=", "a", "<<=", "b", ";"]


def test_acsl_blocks_in_order():
    src = "//@ logic integer z = 0;\n/* no */\n/*@ requires a; */ int f(int a);\n"
    assert [b.text for b in acsl_blocks(src)] == ["//@ logic integer z = 0;", "/*@ requires a; */"]


def test_normalize_acsl_layout():
    a = "/*@\n  @ requires b != 0;\n  @ ensures \\result == a; // why\n  @*/"
    b = "/*@ requires b != 0;\n    ensures \\result == a; */"
    c = "//@ requires b != 0; ensures \\result == a;"
    assert normalize_acsl(b) == "requires b != 0; ensures \\result == a;"
    assert normalize_acsl(a) == normalize_acsl(b) == normalize_acsl(c)
    assert normalize_acsl(b) != normalize_acsl("/*@ requires b != 1;\n ensures \\result == a; */")


def test_normalize_acsl_at_before_close():
    assert normalize_acsl("/*@ requires x > 0; ensures \\result == x; @*/") == \
        normalize_acsl("/*@ requires x > 0; ensures \\result == x; */")


# --- function_name on the real CASP sample -----------------------------------------------

EXPECTED_FUNCTIONS = {
    "00_327": "array_zero", "01_57": "divmult", "02_12": "matcher", "03_379": "selectioninnerloop",
    "04_140": "g", "05_125": "noneBool", "06_114": "max_abs", "07_71": "decypher", "08_377": "check",
    "09_52": "mv_mult2",
}


def test_function_name_on_every_casp_sample_code(casp_sample_dir):
    found = {}
    for d in sorted((casp_sample_dir / "casp_10").iterdir()):
        code = (d / "code.c").read_text()
        found[d.name] = function_name(code)
        fdef = find_function((d / "spec.acsl").read_text() + "\n" + code, found[d.name])
        assert fdef is not None, d.name
        assert fdef.contract is not None, d.name  # the pair's contract is attached
    assert found == EXPECTED_FUNCTIONS


def test_function_name_without_definition():
    with pytest.raises(ValueError):
        function_name("int f(int x);\nint y = 3;\n")
