{
  # verikit: pinned verifier toolchains as layered OCI images (one per toolchain).
  #
  # images/toolchains.json is the single source of truth for versions: for every tool it
  # names the nixpkgs attribute, the version that attribute must have and the nixpkgs
  # revision it comes from. This file only lists those revisions as inputs (flake inputs
  # must be literals); nix/default.nix reads the JSON, takes each tool from its revision
  # and fails evaluation when an attribute does not have the pinned version, when a pinned
  # revision has no input here, or when an input here is pinned by no tool.
  #
  # Input names: "nixpkgs-" + the first 12 hex digits of the revision. All are
  # `flake = false` (plain nixpkgs source trees, imported with an explicit config), so
  # revisions older than nixpkgs' own flake.nix work too.
  #
  # NOT EVALUATED against real nixpkgs: none of these revisions could be downloaded where
  # this file was written (no network route to GitHub). The wiring, the version assertions
  # and the image metadata are evaluated offline against stub nixpkgs trees
  # (tests/test_flake.py); the first evaluation with the real inputs records their
  # narHash in flake.lock. See docs/nix.md for the per-revision status.
  description = "verikit: reproducibility kit for LLM formal-verification benchmarks";

  inputs = {
    # Image base (shell, coreutils, dockerTools, the build-time probe's python3).
    nixpkgs = { url = "github:NixOS/nixpkgs/82edf75de626d96b1f226137ab953afbe544d1fd"; flake = false; };

    # why3 1.8.2 recipe (table: 1.7.2) + framac recipe: framac/frama-c (30.0 override), framac/why3 1.7.2,
    # why3|rocq/why3 (1.8.0 override)
    nixpkgs-82edf75de626 = { url = "github:NixOS/nixpkgs/82edf75de626d96b1f226137ab953afbe544d1fd"; flake = false; };
    # alt-ergo 2.6.0 (unfree)
    nixpkgs-f8bdb71b1696 = { url = "github:NixOS/nixpkgs/f8bdb71b169648a7927207d02cd680844bf710df"; flake = false; };
    # z3_4_8 4.8.17 (-> 4.8.12 override), z3_4_12 4.12.5 (-> 4.12.1 override for Dafny)
    nixpkgs-194e80780dfa = { url = "github:NixOS/nixpkgs/194e80780dfa29e865660af7899bb6fe61898bb3"; flake = false; };
    # cvc4 1.8, eprover 3.2
    nixpkgs-b6fea07f806d = { url = "github:NixOS/nixpkgs/b6fea07f806dbc77efa6023a29d45aa39e8bbd3b"; flake = false; };
    # cvc5 1.3.1
    nixpkgs-4041ba5e296a = { url = "github:NixOS/nixpkgs/4041ba5e296a24231dbd1a5ebf14bb418a625a6c"; flake = false; };
    # spass 3.9
    nixpkgs-56ed99c3a2a4 = { url = "github:NixOS/nixpkgs/56ed99c3a2a48ad5b684075bedbb8208ed83c182"; flake = false; };
    # vampire 4.9
    nixpkgs-f63ac2eb01fe = { url = "github:NixOS/nixpkgs/f63ac2eb01fed8ae059ef860a9b24e71f2bc9b12"; flake = false; };
    # isabelle 2024
    nixpkgs-563595e02d54 = { url = "github:NixOS/nixpkgs/563595e02d54c05c8e731292fde7b73ac4ebce90"; flake = false; };
    # lean4 4.21.0
    nixpkgs-93533e378b39 = { url = "github:NixOS/nixpkgs/93533e378b39e698c4de04b226519cd6e1b9b8e1"; flake = false; };
    # coq_8_20 8.20.1 with coqPackages_8_20.{stdpp 1.12.0, coq-hammer 1.3.2+8.20} (one Coq build)
    nixpkgs-005ab72f9cf5 = { url = "github:NixOS/nixpkgs/005ab72f9cf5a75cdcd9ff672fb4a3b03391619f"; flake = false; };
    # rocq-core 9.0.0 with rocqPackages.stdpp 1.12.0
    nixpkgs-357aee3ab40d = { url = "github:NixOS/nixpkgs/357aee3ab40dd67ad51033e66d4837e47d6c60e1"; flake = false; };
    # tlaplus18 1.8.0 on jdk17_headless
    nixpkgs-a3961166adbf = { url = "github:NixOS/nixpkgs/a3961166adbf51c5951777d5a7b78c0d46b0b110"; flake = false; };
    # dafny 4.6.0
    nixpkgs-821015076452 = { url = "github:NixOS/nixpkgs/8210150764523406af413f94fb75e02112e5eeb7"; flake = false; };
    # llvmPackages_5 5.0.2 (removed from nixpkgs late 2023)
    nixpkgs-8efeeaf50489 = { url = "github:NixOS/nixpkgs/8efeeaf504890c59048e05f5a7aa0a6b66afca81"; flake = false; };
    # z3/4.5.0.nix (Python 2 bindings) and python2
    nixpkgs-2e93f93b2af5 = { url = "github:NixOS/nixpkgs/2e93f93b2af540c419b2a0c00c7bd783bbdfe6ee"; flake = false; };
  };

  outputs = { self, ... }@inputs: import ./nix { inherit self inputs; };
}
