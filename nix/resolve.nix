# Take one pinned package from its nixpkgs revision, as images/toolchains.json says, and
# check it: `assert pkg.version == pin` (the version the attribute really has at that
# revision), so that a wrong revision fails evaluation instead of building another version.
#
# A `nix` entry of images/toolchains.json (a tool's, or one of its `with` packages):
#   attr        attribute path in that nixpkgs ("coqPackages_8_20.stdpp"); or
#   call        a file of that nixpkgs tree, callPackage'd (a version with no attribute)
#   version     the version the package must have (exact; "exact": false = harness
#               prefix semantics, used only where the patch level was not read)
#   nixpkgs     the revision (a flake input "nixpkgs-<12 hex>")
#   args        arguments of `.override`; "@tool" = that tool's package of the same toolchain
#   override    {from_version?, src}: the revision has no such version, its recipe is rebuilt
#               from this source; src.hash null = not known yet (fails closed, see fetchSrc)
#   output      the output that goes into the image ("bin")
{ util, pkgsOf, srcOf }:
let
  # A source whose hash is not recorded yet gets Nix's conventional fake hash: the build
  # then fails with "hash mismatch ... got: sha256-..." -- nothing unpinned is ever built
  # into an image; the printed hash is reviewed and recorded in images/toolchains.json.
  fakeHash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  hashOf = s: if (s.hash or null) == null then fakeHash else s.hash;
  fetchSrc = where: pkgs: s:
    if s.fetch == "url" then pkgs.fetchurl { inherit (s) url; hash = hashOf s; }
    else if s.fetch == "github" then pkgs.fetchFromGitHub { inherit (s) owner repo rev; hash = hashOf s; }
    else throw "verikit: ${where}: unknown source kind '${s.fetch}' in images/toolchains.json";
in
{
  inherit fakeHash hashOf;

  # where: "toolchain/tool" (or "toolchain/tool+name" for a `with` package), for messages.
  # refs: the toolchain's resolved tool packages, for "@tool" arguments.
  resolve = where: spec: refs:
    let
      rev = spec.nixpkgs;
      pkgs = pkgsOf where rev;
      what = if (spec.call or null) != null then spec.call else spec.attr;
      base0 =
        if (spec.call or null) != null then pkgs.callPackage (srcOf where rev + "/${spec.call}") { }
        else util.getAttrPath "${where} (nixpkgs ${util.short rev})" spec.attr pkgs;
      argOf = v:
        if builtins.isString v && util.hasPrefix "@" v then
          (refs.${util.removePrefix "@" v}
            or (throw "verikit: ${where}: argument ${v} names no tool of this toolchain")).package
        else v;
      args = builtins.mapAttrs (_: argOf) (spec.args or { });
      withArgs = if args == { } then base0 else base0.override args;
      ov = spec.override or null;
      fromVersion = if ov == null then null else ov.from_version or null;
      pkg =
        if ov == null then withArgs
        else
          assert fromVersion == null || withArgs.version == fromVersion
            || throw ("verikit: ${where}: ${what} at nixpkgs ${util.short rev} has version ${withArgs.version}, "
              + "images/toolchains.json overrides it from ${fromVersion} (override.from_version)");
          withArgs.overrideAttrs (_: { version = spec.version; src = fetchSrc where pkgs ov.src; });
      exact = spec.exact or true;
      versionOk = if exact then pkg.version == spec.version else util.versionPrefix spec.version pkg.version;
    in
    assert versionOk
      || throw ("verikit: ${where}: ${what} at nixpkgs ${rev} has version ${pkg.version}, "
        + "images/toolchains.json pins ${spec.version}${if exact then "" else " (prefix)"}: wrong revision, or fix the pin");
    {
      inherit pkg spec;
      version = pkg.version;
      package = if spec ? output then pkg.${spec.output} else pkg;
    };
}
