# What images/toolchains.json cannot say as data: packages that are not nixpkgs attributes
# (Mathlib with its build cache, the AFP) and per-toolchain environment (search paths that
# depend on a package's own metadata). No version is written here: every version comes
# from the JSON or from the derivations it selects.
{ base, util, fakeHash }:
let
  hashOf = spec: if (spec.hash or null) == null then fakeHash else spec.hash;
  failing = name: msg: base.runCommand name { } ''
    echo ${builtins.toJSON msg} >&2
    exit 1
  '';
in
{
  # `with` entries that have a "kind" instead of a nixpkgs attribute.
  kinds = {
    # Mathlib at a pinned commit with its downloaded build cache (the .olean files that
    # `lake exe cache get` fetches), as a fixed-output derivation: network access is
    # allowed only because the output hash is fixed in images/toolchains.json. Until that
    # hash is recorded the build fails with the hash it got (review it, then record it).
    # VCS data and the cache tool's own compiled artefacts are removed so that the output
    # depends only on the commit. NOT BUILT on the machine this was written on.
    lake-cache = { spec, tools, ... }:
      base.stdenv.mkDerivation {
        name = "mathlib-${spec.version}-with-cache";
        nativeBuildInputs = [ tools.lean.package base.git base.curl base.cacert ];
        outputHashMode = "recursive";
        outputHash = hashOf spec;
        SSL_CERT_FILE = "${base.cacert}/etc/ssl/certs/ca-bundle.crt";
        GIT_SSL_CAINFO = "${base.cacert}/etc/ssl/certs/ca-bundle.crt";
        buildCommand = ''
          export HOME=$TMPDIR
          dest=$out${spec.path}
          mkdir -p "$(dirname "$dest")"
          git clone --quiet ${spec.git} "$dest"
          cd "$dest"
          git -c advice.detachedHead=false checkout --quiet ${spec.rev}
          test "$(git rev-parse HEAD)" = ${spec.rev}
          lake exe cache get
          for p in ${util.join " " spec.packages}; do
            test -d .lake/packages/$p || { echo "verikit: lake package $p missing after cache get" >&2; exit 1; }
          done
          find . -name .git -prune -exec rm -rf {} +
          rm -rf .lake/build/bin .lake/build/ir
        '';
      };

    # The AFP release matching the Isabelle version, unpacked at spec.path (thys/ inside).
    # Release name and tarball hash are not recorded yet: the build fails and says so.
    afp = { spec, ... }:
      if (spec.url or null) == null || (spec.hash or null) == null then
        failing "afp-not-pinned"
          ("verikit: the AFP release (sessions ${util.join ", " spec.sessions}) is not pinned: record its "
            + "url and hash in images/toolchains.json (isabelle.tools.isabelle.nix.with, name afp)")
      else
        base.runCommand "afp-${spec.version}" { src = base.fetchurl { inherit (spec) url; hash = spec.hash; }; } ''
          mkdir -p $out${spec.path}
          tar -xzf $src -C $out${spec.path} --strip-components=1
          for s in ${util.join " " spec.sessions}; do test -f $out${spec.path}/thys/$s/ROOT; done
        '';
  };

  # Per-toolchain environment: { paths = [derivations merged into the image root]; env = ["K=V"]; }
  hooks = {
    rocq = { tools, extras, ... }:
      let
        coq = tools.coq.pkg;
        rocq = extras.rocq.pkg;
        stdpp = extras.rocq-stdpp.pkg;
        rocqLibs = [ stdpp ] ++ builtins.filter (p: p ? outPath) (stdpp.propagatedBuildInputs or [ ]);
        rocqPath = util.join ":" (map (p: "${p}/lib/coq/${rocq.rocq-version}/user-contrib") rocqLibs);
      in
      {
        # Rocq 9.0 + stdpp 1.12 (NTP4VC's dune-project) beside Coq 8.20.1 (the paper):
        # `rocq` only, with its own library path (COQPATH belongs to Coq 8.20.1).
        paths = map
          (b: base.writeShellScriptBin b ''
            unset COQPATH
            export ROCQPATH=${rocqPath}
            exec ${rocq}/bin/${b} "$@"
          '')
          extras.rocq.spec.bin;
        env = [
          "COQPATH=/lib/coq/${coq.coq-version}/user-contrib"
          "OCAMLPATH=/lib/ocaml/${coq.ocamlPackages.ocaml.version}/site-lib"
        ];
      };

    lean = { extras, ... }:
      let m = extras.mathlib.spec; in
      {
        paths = [ ];
        env = [
          ("LEAN_PATH=" + util.join ":" ([ "${m.path}/.lake/build/lib/lean" ]
            ++ map (p: "${m.path}/.lake/packages/${p}/.lake/build/lib/lean") m.packages))
        ];
      };

    isabelle = { extras, ... }: {
      paths = [ ];
      env = [ "AFP=${extras.afp.spec.path}/thys" ];
    };
  };
}
