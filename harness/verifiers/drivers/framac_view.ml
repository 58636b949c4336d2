(* verikit: Frama-C's own view of a C/ACSL file, as JSON, for the kit's integrity rules.

   Loaded into Frama-C with  -load-script framac_view.ml ; writes the file named by the
   environment variable VERIKIT_VIEW (nothing when it is unset) as soon as Frama-C has
   parsed and type-checked the file (Ast.apply_after_computed), before any plug-in (RTE,
   WP) adds annotations. Everything in it is read from Frama-C's AST after preprocessing:
   what the kit judges is what WP verifies, not the candidate's raw text.

   Shape (all lines are 1-based, files as Frama-C names them):
   { "frama_c": version,
     "share": Frama-C's share directory (its libc headers live under share/libc),
     "functions": [ { "name", "defined", "file", "line",
                      "type": the C type without parameter names,
                      "formals": [names], "attributes": printed GCC attributes,
                      "libc": declared in Frama-C's own libc (share/libc); its
                              contract and clauses are not listed,
                      "noreturn": attribute noreturn, or a contract saying the
                                  function never returns (ensures/terminates \false,
                                  exits clauses),
                      "spec": the contract as Frama-C prints it ("" when none),
                      "clauses": [ { "behavior", "kind", "status", "text" } ],
                      "body": the body as Frama-C prints it (definitions only),
                      "calls": [ { "callee" (null for an indirect call), "line" } ],
                      "loops": [ { "line", "variant" } ],
                      "gotos": [ lines of gotos to labels the user wrote ],
                      "asm": [ lines of inline assembly ],
                      "annotations": [ { "kind", "status", "line", "text" } ] } ],
     "globals": [ { "kind", "name", "file", "line", "axioms", "text" } ] }
   (global annotations of Frama-C's libc are left out)

   "status" is ACSL's predicate kind: "assert" (proved and used), "check" (proved, not
   used), "admit" (used, never proved). Annotations are the user's only (emitter
   end_user). Source: Frama-C 25 kernel API (Cil_types, Annotations, Printer). *)

open Cil_types

let buf = Buffer.create 65536

let str s =
  Buffer.add_char buf '"';
  String.iter
    (fun c ->
      match c with
      | '"' -> Buffer.add_string buf "\\\""
      | '\\' -> Buffer.add_string buf "\\\\"
      | '\n' -> Buffer.add_string buf "\\n"
      | '\r' -> Buffer.add_string buf "\\r"
      | '\t' -> Buffer.add_string buf "\\t"
      | c when Char.code c < 0x20 -> Buffer.add_string buf (Printf.sprintf "\\u%04x" (Char.code c))
      | c -> Buffer.add_char buf c)
    s;
  Buffer.add_char buf '"'

let sep first = if !first then first := false else Buffer.add_char buf ','

let obj fields =
  Buffer.add_char buf '{';
  let first = ref true in
  List.iter (fun (k, v) -> sep first; str k; Buffer.add_char buf ':'; v ()) fields;
  Buffer.add_char buf '}'

let arr f items =
  Buffer.add_char buf '[';
  let first = ref true in
  List.iter (fun x -> sep first; f x) items;
  Buffer.add_char buf ']'

let int n () = Buffer.add_string buf (string_of_int n)
let bool b () = Buffer.add_string buf (if b then "true" else "false")
let s x () = str x
let pp f x = Format.asprintf "%a" f x

let file_of (pos : Filepath.position) = (pos.Filepath.pos_path :> string)
let line_of (loc : location) = (fst loc).Filepath.pos_lnum

let share = (Fc_config.datadir :> string) ^ "/"
let in_share file = String.length file >= String.length share && String.sub file 0 (String.length share) = share

let status = function Assert -> "assert" | Check -> "check" | Admit -> "admit"

let termination_kind = function
  | Normal -> "ensures" | Exits -> "exits" | Breaks -> "breaks"
  | Continues -> "continues" | Returns -> "returns"

let is_false (ip : identified_predicate) =
  match ip.ip_content.tp_statement.pred_content with Pfalse -> true | _ -> false

let clauses (spec : funspec) =
  let out = ref [] in
  let add behavior kind st text = out := (behavior, kind, st, text) :: !out in
  List.iter
    (fun b ->
      let ip kind (p : identified_predicate) =
        add b.b_name kind (status p.ip_content.tp_kind) (pp Printer.pp_predicate p.ip_content.tp_statement)
      in
      List.iter (ip "requires") b.b_requires;
      List.iter (ip "assumes") b.b_assumes;
      List.iter (fun (k, p) -> ip (termination_kind k) p) b.b_post_cond;
      (match b.b_assigns with
       | WritesAny -> ()
       | Writes _ as a -> add b.b_name "assigns" "assert" (pp Printer.pp_assigns a));
      (match b.b_allocation with
       | FreeAllocAny -> ()
       | a -> add b.b_name "allocation" "assert" (pp Printer.pp_allocation a));
      List.iter (fun e -> add b.b_name "extended" "assert" (pp Printer.pp_extended e)) b.b_extended)
    spec.spec_behavior;
  (match spec.spec_terminates with
   | Some p -> add "default" "terminates" (status p.ip_content.tp_kind) (pp Printer.pp_predicate p.ip_content.tp_statement)
   | None -> ());
  (match spec.spec_variant with
   | Some (t, _) -> add "default" "decreases" "assert" (pp Printer.pp_term t)
   | None -> ());
  List.iter (fun l -> add "default" "complete" "assert" (String.concat "," l)) spec.spec_complete_behaviors;
  List.iter (fun l -> add "default" "disjoint" "assert" (String.concat "," l)) spec.spec_disjoint_behaviors;
  List.rev !out

let never_returns (vi : varinfo) (spec : funspec) =
  Cil.hasAttribute "noreturn" vi.vattr
  || (match spec.spec_terminates with Some p -> is_false p | None -> false)
  || List.exists
       (fun b ->
         b.b_assumes = []
         && List.exists (fun (k, p) -> k = Exits || (k = Normal && is_false p)) b.b_post_cond)
       spec.spec_behavior

let unnamed_type (vi : varinfo) =
  match vi.vtype with
  | TFun (ret, args, va, attrs) ->
    let args = Option.map (List.map (fun (_, t, a) -> ("", t, a))) args in
    pp Printer.pp_typ (TFun (ret, args, va, attrs))
  | t -> pp Printer.pp_typ t

let annot_kind (ca : code_annotation) =
  match ca.annot_content with
  | AAssert (_, tp) -> ("assert", status tp.tp_kind)
  | AStmtSpec _ -> ("statement contract", "assert")
  | AInvariant (_, true, tp) -> ("loop invariant", status tp.tp_kind)
  | AInvariant (_, false, tp) -> ("invariant", status tp.tp_kind)
  | AVariant _ -> ("loop variant", "assert")
  | AAssigns _ -> ("loop assigns", "assert")
  | AAllocation _ -> ("loop allocation", "assert")
  | APragma _ -> ("pragma", "assert")
  | AExtended (_, _, e) -> (e.ext_name, "assert")

(* Per function: calls, loops, user gotos, asm and user annotations, from one visit. *)
type body_facts = {
  mutable calls : (string option * int) list;
  mutable loops : (int * bool) list;
  mutable gotos : int list;
  mutable asm : int list;
  mutable annots : (string * string * int * string) list;
}

let facts : (string, body_facts) Hashtbl.t = Hashtbl.create 17

let get_facts name =
  match Hashtbl.find_opt facts name with
  | Some f -> f
  | None ->
    let f = { calls = []; loops = []; gotos = []; asm = []; annots = [] } in
    Hashtbl.replace facts name f; f

let user_label (st : stmt) = List.exists (function Label (_, _, true) -> true | _ -> false) st.labels

class visitor = object (self)
  inherit Visitor.frama_c_inplace

  method! vstmt_aux st =
    (match self#current_kf with
     | None -> ()
     | Some kf ->
       let f = get_facts (Kernel_function.get_name kf) in
       let loc = Cil_datatype.Stmt.loc st in
       let callee e = match e.enode with Lval (Var vi, NoOffset) -> Some vi.vname | _ -> None in
       (match st.skind with
        | Instr (Call (_, e, _, l)) -> f.calls <- (callee e, line_of l) :: f.calls
        | Instr (Local_init (_, ConsInit (vi, _, _), l)) -> f.calls <- (Some vi.vname, line_of l) :: f.calls
        | Instr (Asm (_, _, _, l)) -> f.asm <- line_of l :: f.asm
        | Loop (_, _, l, _, _) ->
          let variant = ref false in
          Annotations.iter_code_annot
            (fun _ ca -> match ca.annot_content with AVariant _ -> variant := true | _ -> ())
            st;
          f.loops <- (line_of l, !variant) :: f.loops
        | Goto (target, l) when user_label !target -> f.gotos <- line_of l :: f.gotos
        | _ -> ());
       Annotations.iter_code_annot
         (fun e ca ->
           if Emitter.equal e Emitter.end_user then begin
             let kind, st_kind = annot_kind ca in
             f.annots <- (kind, st_kind, line_of loc, pp Printer.pp_code_annotation ca) :: f.annots
           end)
         st);
    Cil.DoChildren
end

let global_annot ga =
  let rec axioms = function
    | Dlemma (_, _, _, { tp_kind = Admit; _ }, _, _) -> 1
    | Daxiomatic (_, l, _, _) -> List.fold_left (fun n g -> n + axioms g) 0 l
    | _ -> 0
  in
  let kind, name, loc =
    match ga with
    | Dfun_or_pred (li, loc) -> ("logic", li.l_var_info.lv_name, loc)
    | Dvolatile (_, _, _, _, loc) -> ("volatile", "", loc)
    | Daxiomatic (n, _, _, loc) -> ("axiomatic", n, loc)
    | Dtype (t, loc) -> ("type", t.lt_name, loc)
    | Dlemma (n, _, _, { tp_kind = Admit; _ }, _, loc) -> ("axiom", n, loc)
    | Dlemma (n, _, _, { tp_kind = Check; _ }, _, loc) -> ("check lemma", n, loc)
    | Dlemma (n, _, _, _, _, loc) -> ("lemma", n, loc)
    | Dinvariant (li, loc) -> ("global invariant", li.l_var_info.lv_name, loc)
    | Dtype_annot (li, loc) -> ("type invariant", li.l_var_info.lv_name, loc)
    | Dmodel_annot (mi, loc) -> ("model", mi.mi_name, loc)
    | Dextended (e, _, loc) -> (e.ext_name, "", loc)
  in
  obj [ ("kind", s kind); ("name", s name); ("file", s (file_of (fst loc))); ("line", int (line_of loc));
        ("axioms", int (axioms ga)); ("text", s (pp Printer.pp_global_annotation ga)) ]

let function_json kf =
  let vi = Kernel_function.get_vi kf in
  let name = vi.vname in
  let libc = in_share (file_of (fst vi.vdecl)) in
  let spec = Annotations.funspec ~populate:false kf in
  let shown = if libc then Cil.empty_funspec () else spec in
  let defined = Kernel_function.is_definition kf in
  let f = get_facts name in
  let body () =
    if defined then str (pp Printer.pp_block (Kernel_function.get_definition kf).sbody) else str ""
  in
  let formals = try List.map (fun v -> v.vname) (Kernel_function.get_formals kf) with _ -> [] in
  obj [
    ("name", s name); ("defined", bool defined); ("file", s (file_of (fst vi.vdecl)));
    ("line", int (line_of vi.vdecl)); ("type", s (unnamed_type vi));
    ("formals", fun () -> arr str formals);
    ("attributes", s (pp Printer.pp_attributes vi.vattr));
    ("noreturn", bool (never_returns vi spec));
    ("libc", bool libc);
    ("spec", s (if Cil.is_empty_funspec shown then "" else pp Printer.pp_funspec shown));
    ("clauses", fun () -> arr (fun (b, k, st, t) -> obj [ ("behavior", s b); ("kind", s k); ("status", s st); ("text", s t) ])
                  (clauses shown));
    ("body", body);
    ("calls", fun () -> arr (fun (c, l) -> obj [ ("callee", (fun () -> match c with Some c -> str c | None -> Buffer.add_string buf "null"));
                                                ("line", int l) ]) (List.rev f.calls));
    ("loops", fun () -> arr (fun (l, v) -> obj [ ("line", int l); ("variant", bool v) ]) (List.rev f.loops));
    ("gotos", fun () -> arr (fun l -> int l ()) (List.rev f.gotos));
    ("asm", fun () -> arr (fun l -> int l ()) (List.rev f.asm));
    ("annotations", fun () -> arr (fun (k, st, l, t) -> obj [ ("kind", s k); ("status", s st); ("line", int l); ("text", s t) ])
                       (List.rev f.annots));
  ]

let write path ast =
  Visitor.visitFramacFileSameGlobals (new visitor) ast;
  let kfs = ref [] in
  Globals.Functions.iter (fun kf -> if not (Cil_builtins.is_builtin (Kernel_function.get_vi kf) || Ast_info.is_frama_c_builtin (Kernel_function.get_name kf)) then kfs := kf :: !kfs);
  let kfs = List.sort (fun a b -> compare (Kernel_function.get_name a) (Kernel_function.get_name b)) !kfs in
  let globals = ref [] in
  Annotations.iter_global (fun e ga ->
      let file = file_of (fst (Cil_datatype.Global_annotation.loc ga)) in
      if Emitter.equal e Emitter.end_user && not (in_share file) then globals := ga :: !globals);
  obj [
    ("frama_c", s Fc_config.version_and_codename);
    ("share", s (Fc_config.datadir :> string));
    ("functions", fun () -> arr function_json kfs);
    ("globals", fun () -> arr global_annot (List.rev !globals));
  ];
  let oc = open_out_bin path in
  Buffer.output_buffer oc buf;
  close_out oc

let () =
  match Sys.getenv_opt "VERIKIT_VIEW" with
  | Some path when path <> "" -> Ast.apply_after_computed (write path)
  | _ -> ()
