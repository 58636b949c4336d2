# One toolchain image, with the same interface as the Debian images (harness/sandbox/images.py):
#
#  - the tools on PATH (/bin), probed by the same argv as every run (images/toolchains.json
#    `probe`); Debian-only probes (`dpkg-query -W -f=${Version} PKG`) are answered by a
#    shim that reports the Nix package's version if its store path is in the image;
#  - /etc/verikit/toolchain.json, written at build time by nix/probe.py, which runs every
#    probe against the built tools (so it records what the image really has) and FAILS the
#    build when a published pin is not met: a Nix image cannot exist with pin_match false;
#  - labels verikit.toolchain, verikit.flavor=nix, verikit.fingerprint;
#  - /bin/sh, coreutils, a world-writable /tmp and passwd entries for root and nobody
#    (jobs are exec'ed as 65534:65534).
#
# The image is tagged verikit/<toolchain>:nix-<first 12 hex of the fingerprint>; the
# fingerprint (nix/default.nix) covers the toolchain's pins and every Nix expression.
{ base, util, name, spec, fingerprint, tools, extras, hook }:
let
  imageName = "verikit/${name}";
  tag = "nix-${builtins.substring 0 12 fingerprint}";
  ref = "${imageName}:${tag}";

  toolSpecs = spec.tools;
  # The version the probe is expected to print for a tool (isabelle prints "Isabelle2024").
  expectedOf = t: toolSpecs.${t}.nix.reports or tools.${t}.version;

  # Files of a package at absolute image paths (tla2tools.jar at /opt/verikit/).
  links = util.concatMap
    (t: util.mapAttrsToList (dst: rel: { inherit dst; src = "${tools.${t}.package}/${rel}"; }) (toolSpecs.${t}.nix.files or { }))
    (builtins.attrNames tools);
  filesDrv = base.runCommand "verikit-${name}-files" { } (''
    mkdir -p $out
  '' + util.join "" (map (l: ''
    mkdir -p "$(dirname "$out${l.dst}")"
    ln -s ${l.src} "$out${l.dst}"
  '') links));

  # dpkg-query shim for the probes that ask Debian's package database.
  dpkgProbes = builtins.filter (t: builtins.head toolSpecs.${t}.probe == "dpkg-query") (builtins.attrNames tools);
  dpkgShim = base.writeTextFile {
    name = "verikit-dpkg-query";
    destination = "/bin/dpkg-query";
    executable = true;
    text = ''
      #!/bin/sh
      # verikit (Nix image): there is no dpkg here. This answers the toolchain's version
      # probes `dpkg-query -W -f=''${Version} PKG` with the version of the Nix package that
      # is in the image (and fails like dpkg-query when the package is not).
      pkg=
      for a in "$@"; do case "$a" in -*) ;; *) pkg=$a ;; esac; done
      case "$pkg" in
    '' + util.join "" (map (t: "  ${util.last toolSpecs.${t}.probe}) path=${tools.${t}.package}; ver=${tools.${t}.version} ;;\n")
      dpkgProbes) + ''
        *) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;;
      esac
      [ -e "$path" ] || { echo "dpkg-query: package $pkg is not installed ($path missing)" >&2; exit 1; }
      printf '%s' "$ver"
    '';
  };

  infra = [ base.bashInteractive base.coreutils base.findutils base.gnugrep base.gnused base.gnutar base.gzip ];
  merged = builtins.attrValues (builtins.mapAttrs (_: r: r.package) tools)
    ++ map (e: e.package) (builtins.filter (e: e.spec.merge or true) (builtins.attrValues extras));
  hooked = hook { inherit tools extras; };

  env = base.buildEnv {
    name = "verikit-${name}-env";
    paths = util.unique (infra ++ merged ++ hooked.paths ++ [ filesDrv ] ++ util.optional (dpkgProbes != [ ]) dpkgShim);
    pathsToLink = [ "/" ];
  };

  # Tool-specific variables: values relative to the tool's package, or absolute image paths.
  toolEnv = util.concatMap
    (t: util.mapAttrsToList (k: v: "${k}=${if util.hasPrefix "/" v then v else "${tools.${t}.package}/${v}"}") (toolSpecs.${t}.nix.env or { }))
    (builtins.attrNames tools);
  imageEnv = [ "PATH=/bin" "LANG=C.UTF-8" "LC_ALL=C.UTF-8" ] ++ toolEnv ++ hooked.env;

  labels = {
    "verikit.toolchain" = name;
    "verikit.flavor" = "nix";
    "verikit.fingerprint" = fingerprint;
  };

  perTool = f: builtins.mapAttrs (t: _: f t) tools;
  nixInfo = t: {
    attr = toolSpecs.${t}.nix.attr or null;
    call = toolSpecs.${t}.nix.call or null;
    nixpkgs = toolSpecs.${t}.nix.nixpkgs;
    version = tools.${t}.version;
    pinned = toolSpecs.${t}.nix.version;
    exact = toolSpecs.${t}.nix.exact or true;
    store_path = "${tools.${t}.package}";
  };
  missing = builtins.filter (t: !(tools ? ${t})) (builtins.attrNames toolSpecs);

  # What nix/probe.py needs to probe the built tools and write the manifest.
  probeSpec = {
    toolchain = name;
    inherit fingerprint;
    image = ref;
    env = imageEnv;
    tools = perTool (t: {
      inherit (toolSpecs.${t}) probe pattern published;
      expected = expectedOf t;
      nix = nixInfo t;
    });
    inherit missing;
  };
  manifestDrv = base.runCommand "verikit-${name}-toolchain-json"
    {
      nativeBuildInputs = [ base.python3 ];
      spec = builtins.toJSON probeSpec;
      passAsFile = [ "spec" ];
    } ''
    python3 ${./probe.py} ${env} "$specPath" $out/etc/verikit/toolchain.json
  '';

  # The manifest as evaluation knows it, before anything is built: the same fields as the
  # baked /etc/verikit/toolchain.json, with each tool's `version` the one the probe is
  # expected to report (from the package metadata, not probed).
  manifest = {
    toolchain = name;
    flavor = "nix";
    inherit fingerprint labels missing;
    image = ref;
    env = imageEnv;
    tools = perTool (t: {
      version = expectedOf t;
      raw = "expected from the Nix package metadata (evaluation; not probed)";
      published = toolSpecs.${t}.published;
      match = util.versionMatches toolSpecs.${t}.published (expectedOf t);
    });
    packages = perTool (t: tools.${t}.version);
    # A prefix pin ("exact": false, e.g. python 2.7) was checked against the version at
    # evaluation; the exact version is the one its revision fixes.
    packages_pinned = perTool (t: if (nixInfo t).exact then (nixInfo t).pinned else tools.${t}.version);
    nix = perTool nixInfo;
    extras = builtins.mapAttrs (_: e: { version = e.spec.version or null; path = "${e.package}"; }) extras;
  };

  image = base.dockerTools.buildLayeredImage {
    name = imageName;
    inherit tag;
    contents = [ env manifestDrv base.dockerTools.fakeNss ];
    extraCommands = ''
      mkdir -p tmp usr/bin
      chmod 1777 tmp
      ln -sf /bin/env usr/bin/env
    '';
    config = {
      Env = imageEnv;
      Labels = labels;
      Cmd = [ "/bin/sh" ];
      WorkingDir = "/";
    };
  };
in
image // { verikit = { inherit manifest labels fingerprint tag; image = ref; inherit env manifestDrv dpkgShim; }; }
