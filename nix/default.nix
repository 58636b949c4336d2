# verikit flake outputs (flake.nix passes its inputs here).
#
# Reads images/toolchains.json -- the single source of truth for versions -- and, for every
# toolchain, takes each tool from the nixpkgs revision the JSON names, checks its version
# (nix/resolve.nix) and assembles a layered OCI image (nix/image.nix):
#
#   packages.x86_64-linux.image-<toolchain>            the image (dockerTools.buildLayeredImage)
#   packages.x86_64-linux.image-<toolchain>.verikit    its metadata: tag, labels, fingerprint,
#                                                      and the manifest as evaluation knows it
#   lib.{pins, published, revisions, images, fingerprints}
#
# Evaluation fails (nothing is built) when: a tool's attribute does not have the pinned
# version at its revision; a pinned revision has no flake input or an input is at another
# revision; an input is pinned by no tool; a tool with a published version has no Nix pin;
# a Nix pin does not satisfy the published version (the image would report
# pin_match false); tools that must share one build (`same_nixpkgs_as`) come from
# different revisions.
{ self, inputs }:
let
  util = import ./util.nix;
  inherit (util) concatMap mapAttrsToList short;

  pins = builtins.fromJSON (builtins.readFile ../images/toolchains.json);
  toolchains = pins.toolchains;
  names = builtins.attrNames toolchains;
  # The papers' machines; the images are pinned and checked for this platform only.
  system = "x86_64-linux";

  # Every Nix entry: the tools' and their `with` packages, with who pins it.
  entriesOf = tc: concatMap
    (tool:
      let n = toolchains.${tc}.tools.${tool}.nix; in
      if n == null then [ ] else
      [{ where = "${tc}/${tool}"; inherit tc tool; spec = n; }]
      ++ map (w: { where = "${tc}/${tool}+${w.name}"; inherit tc tool; spec = w; }) (n."with" or [ ]))
    (builtins.attrNames toolchains.${tc}.tools);
  entries = concatMap entriesOf names;
  pinned = builtins.filter (e: (e.spec.nixpkgs or null) != null) entries;
  revisions = util.unique (map (e: e.spec.nixpkgs) pinned);
  usersOf = rev: map (e: e.where) (builtins.filter (e: e.spec.nixpkgs == rev) pinned);

  inputName = rev: "nixpkgs-${short rev}";
  srcOf = where: rev:
    let n = inputName rev; in
    if !(inputs ? ${n}) then
      throw "verikit: ${where}: images/toolchains.json pins nixpkgs ${rev} but flake.nix has no input ${n}"
    else
      let i = inputs.${n}; in
      # A locked GitHub input knows its revision; a path: override (the offline stubs) does not.
      assert (i.rev or rev) == rev
        || throw "verikit: flake input ${n} is at ${i.rev}, images/toolchains.json pins ${rev}";
      i;
  unusedInputs = builtins.filter
    (n: util.hasPrefix "nixpkgs-" n && !(builtins.elem n (map inputName revisions)))
    (builtins.attrNames inputs);

  # Unfree packages are allowed by name -- exactly the tools marked "unfree" in
  # images/toolchains.json (today: alt-ergo, licence OCamlPro non-commercial). Building an
  # image for your own use is allowed by that licence; REDISTRIBUTING an image that contains
  # Alt-Ergo (pushing it to a public registry, publishing the archive) needs the licensor's
  # permission: see docs/nix.md.
  unfreeNames = util.unique (map (e: e.spec.pname) (builtins.filter (e: e.spec.unfree or false) pinned));
  config = {
    allowUnfreePredicate = pkg: builtins.elem (util.getName pkg) unfreeNames;
  };
  importTree = src: import src { inherit system config; overlays = [ ]; };
  pkgsByRev = builtins.listToAttrs (map (rev: { name = rev; value = importTree (srcOf "nixpkgs ${short rev}" rev); }) revisions);
  pkgsOf = _where: rev: pkgsByRev.${rev};
  base = importTree inputs.nixpkgs;

  R = import ./resolve.nix { inherit util pkgsOf srcOf; };
  T = import ./toolchains.nix { inherit base util; inherit (R) fakeHash; };

  # --- checks on the pins themselves ----------------------------------------------------
  noNixPin = builtins.filter
    (e: e.spec.published != null && e.spec.nix == null)
    (concatMap (tc: mapAttrsToList (tool: s: { where = "${tc}/${tool}"; spec = s; }) toolchains.${tc}.tools) names);
  # The version a tool's probe will report in the Nix image must satisfy its published pin.
  pinMismatch = builtins.filter
    (e: e.spec.published != null && e.spec.nix != null
      && !(util.versionPrefix e.spec.published (e.spec.nix.reports or e.spec.nix.version)))
    (concatMap (tc: mapAttrsToList (tool: s: { where = "${tc}/${tool}"; spec = s; }) toolchains.${tc}.tools) names);
  sameRevision = builtins.filter
    (e: (e.spec.same_nixpkgs_as or null) != null)
    entries;
  revisionOfName = tc: n:
    let
      tools = toolchains.${tc}.tools;
      fromTool = if tools ? ${n} && tools.${n}.nix != null then [ tools.${n}.nix.nixpkgs ] else [ ];
      fromWith = map (w: w.nixpkgs) (builtins.filter (w: (w.name or null) == n)
        (concatMap (t: if tools.${t}.nix == null then [ ] else tools.${t}.nix."with" or [ ]) (builtins.attrNames tools)));
    in
    builtins.head (fromTool ++ fromWith ++ [ (throw "verikit: ${tc}: same_nixpkgs_as names ${n}, which is no tool or `with` package") ]);
  badSameRevision = builtins.filter (e: revisionOfName e.tc e.spec.same_nixpkgs_as != e.spec.nixpkgs) sameRevision;

  checked =
    assert unusedInputs == [ ]
      || throw "verikit: flake.nix inputs ${toString unusedInputs} are pinned by no tool in images/toolchains.json";
    assert noNixPin == [ ]
      || throw "verikit: published pins without a Nix pin: ${toString (map (e: e.where) noNixPin)}";
    assert pinMismatch == [ ]
      || throw ("verikit: Nix pins that do not satisfy the published version: "
        + toString (map (e: "${e.where} (published ${e.spec.published}, nix ${e.spec.nix.reports or e.spec.nix.version})") pinMismatch));
    assert badSameRevision == [ ]
      || throw ("verikit: packages that must share one build come from different nixpkgs revisions: "
        + toString (map (e: "${e.where} vs ${e.spec.same_nixpkgs_as}") badSameRevision));
    true;

  # --- fingerprint ------------------------------------------------------------------------
  # sha256 of the canonical JSON (sorted keys, no whitespace: builtins.toJSON, the same bytes
  # as harness.toolchains.canonical_json) of the toolchain's pins and of every Nix expression.
  # harness/sandbox/images.py:nix_fingerprint computes the same value from the same files.
  nixDir = builtins.readDir ./.;
  expressions =
    builtins.listToAttrs (map (f: { name = "nix/${f}"; value = builtins.hashFile "sha256" (./. + "/${f}"); })
      (builtins.filter (f: nixDir.${f} == "regular") (builtins.attrNames nixDir)))
    // { "flake.nix" = builtins.hashFile "sha256" ../flake.nix; }
    // util.optionalAttrs (builtins.pathExists ../flake.lock) { "flake.lock" = builtins.hashFile "sha256" ../flake.lock; };
  fingerprintOf = tc: builtins.hashString "sha256" (builtins.toJSON {
    toolchain = tc;
    flavor = "nix";
    tools = builtins.mapAttrs (_: t: { inherit (t) probe pattern published nix; }) toolchains.${tc}.tools;
    inherit expressions;
  });

  # --- images -----------------------------------------------------------------------------
  imageOf = tc:
    let
      spec = toolchains.${tc};
      withNix = builtins.filter (t: spec.tools.${t}.nix != null) (builtins.attrNames spec.tools);
      tools = builtins.listToAttrs (map
        (t: { name = t; value = R.resolve "${tc}/${t}" spec.tools.${t}.nix tools; })
        withNix);
      withEntries = builtins.filter (e: e.tc == tc && e.where != "${e.tc}/${e.tool}") entries;
      extras = builtins.listToAttrs (map
        (e: {
          name = e.spec.name;
          value =
            if e.spec ? kind then
              let drv = T.kinds.${e.spec.kind} { inherit (e) spec; inherit tools; }; in
              { inherit (e) spec; pkg = drv; package = drv; version = e.spec.version; }
            else R.resolve e.where e.spec tools;
        })
        withEntries);
      hook = T.hooks.${tc} or (_: { paths = [ ]; env = [ ]; });
    in
    import ./image.nix { inherit base util spec tools extras hook; name = tc; fingerprint = fingerprintOf tc; };

  images = builtins.listToAttrs (map (tc: { name = "image-${tc}"; value = imageOf tc; }) names);
in
assert checked;
{
  packages.${system} = images;

  lib = {
    inherit pins;
    # toolchain -> tool -> published version (null: the paper gives none)
    published = builtins.mapAttrs (_: tc: builtins.mapAttrs (_: t: t.published) tc.tools) toolchains;
    # nixpkgs revision -> flake input name and the entries it provides
    revisions = builtins.listToAttrs (map (rev: { name = rev; value = { input = inputName rev; users = usersOf rev; }; }) revisions);
    fingerprints = builtins.mapAttrs (n: _: fingerprintOf n) toolchains;
    # toolchain -> image metadata (tag, labels, manifest as evaluated); forces the wiring
    images = builtins.listToAttrs (map
      (tc: { name = tc; value = builtins.removeAttrs images."image-${tc}".verikit [ "env" "manifestDrv" "dpkgShim" ]; })
      names);
    inherit unfreeNames system;
  };
}
