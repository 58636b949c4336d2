{
  # verikit: pinned verifier toolchains as OCI images.
  #
  # images/toolchains.json is the single source of truth for versions; this flake only
  # reads it. This is the minimal flake of the foundation issue: it exposes the pins and
  # checks at evaluation time that every toolchain has its tools and their published
  # versions. The layered images themselves (dockerTools.buildLayeredImage, one nixpkgs
  # input per revision, version assertions) come with the Nix-images issue; nothing here
  # has been built, because nixpkgs cannot be downloaded on the project's machines.
  description = "verikit: reproducibility kit for LLM formal-verification benchmarks";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";

  outputs = { self, nixpkgs }:
    let
      pins = builtins.fromJSON (builtins.readFile ./images/toolchains.json);
      toolchains = pins.toolchains;
      names = builtins.attrNames toolchains;
      publishedOf = name:
        builtins.mapAttrs (tool: spec: spec.published) toolchains.${name}.tools;
      checked = builtins.all (name: toolchains.${name}.tools != { }) names;
    in
    assert checked;
    {
      lib = {
        inherit pins;
        # toolchain -> tool -> published version (null: the paper gives none)
        published = builtins.listToAttrs (map (name: { inherit name; value = publishedOf name; }) names);
      };
    };
}
