"""SANY's view of the module: what the root module contains as SANY parsed it,
read from its XML export (:func:`sany_view`). The verifier only reports the view; a
benchmark judges it."""

from __future__ import annotations


def sany_view(xml_text: str, err_text: str = "") -> dict:
    """What the root module contains as SANY parsed it, from ``XMLExporter``'s XML.

    Returns ``{"root", "modules" (every module SANY loaded, root first), "instances"
    ([{"name" (None when unnamed), "module"}] of the root module), "constants"
    ([{"name", "arity"}]), "variables", "definitions" (names of the root module's own
    top-level definitions, instances' ``I!x`` left out), "assumes", "theorems" (counts),
    "operators" (sorted ``"origin:name"`` reached from the root module's own definitions,
    ASSUMEs and theorems, transitively through its own definitions and LETs; origin
    ``builtin`` for SANY's built-ins, else the standard module defining it, through
    ``I!x`` or an unnamed INSTANCE too; an origin SANY names but the view cannot place
    is ``unknown``), "assertion_variables" (variables ``Assertion`` reads,
    transitively; None when there is no ``Assertion``), "assertion_in_spec" (``Spec``
    reaches ``Assertion``: the invariant used as a constraint), "patterns" (constructs that
    trigger known TLC bugs: ``except-of-function-constructor``, tlaplus#1302)}``; ``{"error": ...}`` when SANY
    wrote no root module (it failed; TLC reports why).

    Raises:
        xml.etree.ElementTree.ParseError: malformed XML (the caller records it).
    """
    import xml.etree.ElementTree as ET

    if "<RootModule>" not in xml_text:
        return {"error": "SANY exported no module: " + " ".join(err_text.split())[-300:]}
    top = ET.fromstring(xml_text)
    root = top.findtext("RootModule")
    ctx = {e.findtext("UID"): e[1] for e in top.find("context") if len(e) > 1}
    mods = {k.findtext("uniquename"): k for k in ctx.values() if k.tag == "ModuleNode"}
    rootnode = mods.get(root)
    if rootnode is None:
        return {"error": f"SANY's export has no node for the root module {root!r}"}

    def fname(k) -> str | None:
        return k.findtext("location/filename")

    insts = [{"name": i.findtext("uniquename"), "module": i.findtext("module")} for i in rootnode.findall("InstanceNode")]
    named = {i["name"]: i["module"] for i in insts if i["name"]}
    unnamed_defs: dict[str, str] = {}
    for i in insts:
        if not i["name"] and i["module"] in mods:
            for r in mods[i["module"]].findall("UserDefinedOpKindRef"):
                k = ctx.get(r.findtext("UID"))
                if k is not None:
                    unnamed_defs.setdefault(k.findtext("uniquename"), i["module"])
    decls = [ctx.get(r.findtext("UID")) for r in rootnode.findall("OpDeclNodeRef")]
    constants = [{"name": k.findtext("uniquename"), "arity": int(k.findtext("arity") or 0)}
                 for k in decls if k is not None and k.findtext("kind") == "2"]
    variables = [k.findtext("uniquename") for k in decls if k is not None and k.findtext("kind") == "3"]
    own = [r.findtext("UID") for r in rootnode.findall("UserDefinedOpKindRef")]
    own = [u for u in own if u in ctx and fname(ctx[u]) == root and "!" not in ctx[u].findtext("uniquename")]
    own_names = {ctx[u].findtext("uniquename") for u in own}

    def origin(k) -> str:
        name, fn = k.findtext("uniquename"), fname(k)
        if fn != root:
            return fn or "unknown"
        if "!" in name:
            return named.get(name.split("!", 1)[0], "unknown") if name.count("!") == 1 else "unknown"
        if name in unnamed_defs and name not in own_names:
            return unnamed_defs[name]
        return root

    patterns: set[str] = set()

    def walk(starts) -> tuple[set[str], set[str]]:
        ops: set[str] = set()
        vars_: set[str] = set()
        todo, seen = list(starts), set()
        walk.seen = seen
        while todo:
            node = todo.pop()
            for appl in node.iter("OpApplNode"):  # constructs of known TLC bugs (images/toolchains.json)
                head = appl.find("operator/BuiltInKindRef/UID")
                first = appl.find("operands/OpApplNode/operator/BuiltInKindRef/UID")
                if (head is not None and first is not None and _builtin(ctx, head.text) == "$Except"
                        and _builtin(ctx, first.text) == "$FcnConstructor"):
                    patterns.add("except-of-function-constructor")
            for ref in node.iter():
                if not ref.tag.endswith("Ref") or ref.tag in ("ModuleNodeRef", "FormalParamNodeRef"):
                    continue
                uid = ref.findtext("UID")
                k = ctx.get(uid)
                if k is None:
                    ops.add(f"unknown:{ref.tag}")
                elif k.tag == "BuiltInKind":
                    ops.add("builtin:" + k.findtext("uniquename"))
                elif k.tag == "OpDeclNode":
                    if k.findtext("kind") == "3":
                        vars_.add(k.findtext("uniquename"))
                elif k.tag == "UserDefinedOpKind":
                    org = origin(k)
                    if org == root:
                        if uid not in seen:
                            seen.add(uid)
                            todo.append(k)
                    else:
                        ops.add(f"{org}:{k.findtext('uniquename').split('!')[-1]}")
                elif k.tag in ("AssumeNode", "TheoremNode"):
                    if uid not in seen:
                        seen.add(uid)
                        todo.append(k)
                else:
                    ops.add(f"unknown:{k.tag}")
        return ops, vars_

    assumes = [ctx[r.findtext("UID")] for r in rootnode.findall("AssumeNodeRef") if r.findtext("UID") in ctx]
    theorems = [ctx[r.findtext("UID")] for r in rootnode.findall("TheoremNodeRef") if r.findtext("UID") in ctx]
    ops, _ = walk([ctx[u] for u in own] + assumes + theorems)
    assertion = next((ctx[u] for u in own if ctx[u].findtext("uniquename") == "Assertion"), None)
    avars = sorted(walk([assertion])[1]) if assertion is not None else None
    spec = next((ctx[u] for u in own if ctx[u].findtext("uniquename") == "Spec"), None)
    in_spec = False
    if spec is not None and assertion is not None:
        walk([spec])
        in_spec = any(ctx.get(u) is assertion for u in walk.seen)
    return {"root": root, "modules": [root] + sorted(m for m in mods if m != root), "instances": insts,
            "constants": constants, "variables": variables, "definitions": sorted(own_names),
            "assumes": len(assumes), "theorems": len(theorems), "operators": sorted(ops),
            "assertion_variables": avars, "assertion_in_spec": in_spec, "patterns": sorted(patterns)}


def _builtin(ctx: dict, uid: str | None) -> str | None:
    k = ctx.get(uid)
    return k.findtext("uniquename") if k is not None and k.tag == "BuiltInKind" else None
