# Small helpers on builtins only, so that the flake's own logic does not depend on the
# nixpkgs revision it happens to import (and can be evaluated against stub nixpkgs trees).
rec {
  hasPrefix = p: s: builtins.substring 0 (builtins.stringLength p) s == p;
  removePrefix = p: s:
    if hasPrefix p s then builtins.substring (builtins.stringLength p) (builtins.stringLength s) s else s;
  splitOn = re: s: builtins.filter builtins.isString (builtins.split re s);
  concatMap = f: l: builtins.concatLists (map f l);
  mapAttrsToList = f: a: map (n: f n a.${n}) (builtins.attrNames a);
  unique = l: builtins.foldl' (acc: x: if builtins.elem x acc then acc else acc ++ [ x ]) [ ] l;
  last = l: builtins.elemAt l (builtins.length l - 1);
  optional = c: x: if c then [ x ] else [ ];
  optionalAttrs = c: a: if c then a else { };
  short = rev: builtins.substring 0 12 rev;
  join = builtins.concatStringsSep;

  # Attribute path "a.b.c" of `set`, or an error naming who asked for it.
  getAttrPath = where: attr: set:
    builtins.foldl'
      (acc: k:
        if builtins.isAttrs acc && acc ? ${k} then acc.${k}
        else throw "verikit: ${where}: the nixpkgs revision has no attribute '${attr}' (missing '${k}')")
      set
      (splitOn "\\." attr);

  # Name of a package as nixpkgs' lib.getName computes it.
  getName = pkg: pkg.pname or (builtins.parseDrvName (pkg.name or "")).name;

  # The harness's version semantics (harness/toolchains.py version_matches): a pin matches
  # when its components (split on . - + ~ space) are a prefix of the version's.
  versionComponents = v: splitOn "[-.+~ ]" v;
  versionPrefix = pin: v:
    let
      p = versionComponents pin;
      q = versionComponents v;
    in
    builtins.length q >= builtins.length p
    && builtins.genList (i: builtins.elemAt q i) (builtins.length p) == p;
  versionMatches = pin: v: if pin == null then null else if v == null then false else versionPrefix pin v;
}
