# A STUB nixpkgs, for evaluating verikit's flake offline (tests/test_flake.py). It is not
# nixpkgs and builds nothing: every derivation's builder exits 1. It has only what the
# flake touches, and it behaves like nixpkgs where the flake's checks depend on it:
#
#  - the packages and versions come from ./attrs.json, which the test writes for each
#    pinned revision from images/toolchains.json (or deliberately wrong, to see the
#    flake's version assertions fail);
#  - `.override { version = ...; }` accepts only versions in the package's table
#    ("versions"), like the version-table recipes (why3); `.overrideAttrs` applies the
#    new attributes; `callPackage` imports a file of this tree;
#  - an unfree package's store paths throw unless config.allowUnfreePredicate accepts it,
#    as nixpkgs' check-meta does;
#  - fetchurl / fetchFromGitHub are real fixed-output derivations (so a malformed pinned
#    hash fails instantiation); dockerTools.buildLayeredImage records its arguments and
#    forces every store path of the image contents.
{ system ? "x86_64-linux", config ? { }, overlays ? [ ], ... }:
let
  data = builtins.fromJSON (builtins.readFile ./attrs.json);
  splitOn = re: s: builtins.filter builtins.isString (builtins.split re s);
  majorMinor = v: builtins.concatStringsSep "." (builtins.genList (i: builtins.elemAt (splitOn "\\." v) i)
    (if builtins.length (splitOn "\\." v) < 2 then 1 else 2));
  notBuildable = [ "-c" "echo 'stub nixpkgs (verikit tests): not buildable' >&2; exit 1" ];
  drv = name: extra: derivation ({ inherit name system; builder = "/bin/sh"; args = notBuildable; } // extra);

  unfreeAllowed = info: (config.allowUnfreePredicate or (_: false)) info;

  mkPkg = a:
    let
      unfree = a.unfree or false;
      meta = { license = { free = !unfree; shortName = if unfree then "unfree (stub)" else "free (stub)"; }; };
      info = { inherit (a) pname version; name = "${a.pname}-${a.version}"; inherit meta; };
      outputs = [ "out" ] ++ (if (a.output or null) != null then [ a.output ] else [ ]);
      d = drv "${a.pname}-${a.version}" {
        inherit outputs;
        stubArgs = builtins.toJSON (a.args or { });
        stubSrc = if (a.src or null) != null then a.src else "";
      };
      allowed = !unfree || unfreeAllowed info;
      refused = throw ("stub nixpkgs: refusing to evaluate '${a.pname}-${a.version}': unfree licence, "
        + "not allowed by config.allowUnfreePredicate");
      guarded = if allowed then d else builtins.mapAttrs
        (n: v: if builtins.elem n (outputs ++ [ "outPath" "drvPath" "all" ]) then refused else v) d;
      overrideArgs = args:
        let
          v = if args ? version then
            (if builtins.elem args.version (a.versions or [ ]) then { version = args.version; }
             else throw "stub nixpkgs: ${a.pname}: version ${args.version} is not in its version table")
          else { };
        in
        mkPkg (a // { args = (a.args or { }) // builtins.mapAttrs (_: x: if x ? outPath then "${x}" else x) args; } // v);
      overrideAttrs = f:
        let
          r = if builtins.isFunction f then f a else f;
          new = if builtins.isFunction r then r a else r;
        in
        mkPkg (a // new);
    in
    guarded // {
      inherit (a) pname version;
      inherit meta;
      name = "${a.pname}-${a.version}";
      src = a.src or null;
      coq-version = majorMinor a.version;
      rocq-version = majorMinor a.version;
      ocamlPackages = { ocaml = { version = "4.14.2"; }; };
      propagatedBuildInputs = [ ];
      override = overrideArgs;
      inherit overrideAttrs;
    };

  setPath = set: path: value:
    if path == [ ] then value
    else
      let k = builtins.head path; in
      set // { ${k} = setPath (set.${k} or { }) (builtins.tail path) value; };
  fromData = builtins.foldl'
    (acc: attr: setPath acc (splitOn "\\." attr) (mkPkg data.attrs.${attr}))
    { }
    (builtins.attrNames data.attrs);

  fixedOutput = name: mode: hash: extra: derivation ({
    inherit name system;
    builder = "/bin/sh";
    args = notBuildable;
    outputHashMode = mode;
    outputHash = hash;
  } // (if builtins.substring 0 7 hash == "sha256:" || builtins.stringLength hash == 52 then { outputHashAlgo = "sha256"; } else { }) // extra);
  hashArg = args: args.hash or (if args ? sha256 then (if builtins.stringLength args.sha256 == 52 then args.sha256 else args.sha256) else "");
  plainHash = h: if builtins.substring 0 7 h == "sha256:" then builtins.substring 7 (builtins.stringLength h) h else h;

  stringsOnly = builtins.mapAttrs (_: v: if builtins.isList v || builtins.isString v || builtins.isBool v || v ? outPath then v else builtins.toJSON v);

  pkgs = fromData // {
    inherit pkgs;
    stubRevision = data.revision;
    callPackage = fn: args: (if builtins.isFunction fn then fn else import fn) (pkgs // { stubPackage = mkPkg; } // args);

    fetchurl = args: fixedOutput "stub-fetchurl-${baseNameOf args.url}" "flat" (plainHash (hashArg args)) { url = args.url; };
    fetchFromGitHub = args: fixedOutput "source" "recursive" (plainHash (hashArg args))
      { url = "https://github.com/${args.owner}/${args.repo}/archive/${args.rev}.tar.gz"; };

    runCommand = name: env: cmd: drv name (stringsOnly (builtins.removeAttrs env [ "passthru" ]) // { stubCommand = cmd; });
    writeTextFile = { name, text, destination ? "", executable ? false, ... }: drv name { inherit text destination executable; };
    writeShellScriptBin = name: text: drv name { inherit text; };
    buildEnv = { name, paths, ... }: drv name { stubPaths = map toString paths; };
    stdenv = {
      mkDerivation = args: drv args.name (stringsOnly (builtins.removeAttrs args [ "name" "passthru" "meta" ]));
    };

    dockerTools = {
      buildLayeredImage = args:
        drv "docker-image-${baseNameOf args.name}.tar.gz" {
          stubImage = builtins.toJSON {
            inherit (args) name tag config;
            extraCommands = args.extraCommands or "";
            contents = map toString args.contents;
          };
        } // { imageName = args.name; imageTag = args.tag; };
      fakeNss = drv "fake-nss" { };
    };
  } // builtins.listToAttrs (map (n: { name = n; value = drv "${n}-stub" { }; })
    [ "bashInteractive" "coreutils" "findutils" "gnugrep" "gnused" "gnutar" "gzip" "python3" "git" "curl" "cacert" ]);
in
pkgs
