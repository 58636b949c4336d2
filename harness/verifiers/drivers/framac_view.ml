(* verikit: Frama-C's own view of a C/ACSL file, as JSON, for the kit's integrity rules.

   Loaded into Frama-C with  -load-script framac_view.ml ; writes the file named by the
   environment variable VERIKIT_VIEW (nothing when it is unset) as soon as Frama-C has
   parsed and type-checked the file (Ast.apply_after_computed), before any plug-in (RTE,
   WP) adds annotations. Everything in it is read from Frama-C's AST after preprocessing:
   what the kit judges is what WP verifies, not the candidate's raw text.

   Fail closed: EVERY function Frama-C knows is listed (Frama-C's builtins too, flagged:
   a candidate can mark its own function as one), every global variable, every global of
   the AST, every declaration occurrence as written, and whatever this script
   cannot classify is an explicit "unclassified" entry, never skipped.

   Shape (all lines are 1-based, files as Frama-C names them; builtins have file ""):
   { "frama_c": version,
     "share": Frama-C's share directory (its libc headers live under share/libc),
     "functions": [ { "name", "defined", "file", "line" (its first declaration),
                      "builtin": Frama-C considers it a builtin (Cil_builtins.is_builtin:
                                 attribute FC_BUILTIN; or Ast_info.is_frama_c_builtin),
                      "type": the C type without parameter names,
                      "formals": [names], "attributes": printed GCC attributes,
                      "attribute_names": [names of the function's and its type's attributes],
                      "storage": "none" | "static" | "extern" | "register", "inline",
                      "variadic": a "..." definition (Frama-C rewrites it with __va_params),
                      "ghost",
                      "libc": declared in Frama-C's own libc (share/libc); its
                              contract and clauses are not listed (see spec_digest),
                      "noreturn": attribute noreturn, or a contract saying the
                                  function never returns (ensures/terminates \false,
                                  exits clauses),
                      "spec": the contract as Frama-C prints it ("" when none),
                      "spec_digest": MD5 of the whole contract as printed (libc too),
                      "clauses": [ { "behavior", "kind", "status", "text" } ],
                      "body": the body as Frama-C prints it (definitions only),
                      "calls": [ { "callee" (null for an indirect call), "line" } ],
                      "loops": [ { "line", "variant" } ],
                      "gotos": [ { "line", "cycle" } ]: gotos to labels the user wrote;
                               cycle: the target reaches the goto in Frama-C's CFG
                               without going through the back edge of a loop statement
                               (an edge to a Loop that dominates its source),
                      "asm": [ lines of inline assembly ],
                      "annotations": [ { "kind", "status", "line", "text" } ],
                      "constructs": [ { "kind": "statement" | "type" | "attribute",
                                        "name", "line" } ] (definitions: every statement
                                    kind, type construct and attribute in the function:
                                    signature, locals, casts, sizeof, annotations),
                      "locals": [ { "name", "type", "line", "bytes" (null: unknown),
                                    "temp", "ghost", "vla" } ],
                      "memory": [ { "kind", "what", "line" } ] (definitions: what WP's
                                    Typed model reads differently from the compiled
                                    program: "union member" (what: union.member, every
                                    access in code, read or written), "pointer cast"
                                    (what: "from -> to", a cast between pointers to
                                    different types, qualifiers aside, or between a pointer
                                    and an integer; a null constant is none), "bit-field
                                    store" (what: struct.field:width, a value stored into a
                                    bit-field that is not known to fit its width: not a
                                    constant within it, nor a read of a field, a bool or a
                                    type no wider)) } ],
     "variables": [ { "name", "type", "storage", "initialised", "file", "line", "libc",
                      "ghost", "bytes", "constructs" } ] (every global variable; a local
                  static is one, named by Frama-C),
     "types": [ { "kind": "typedef" | "struct" | "union" | "enum", "name", "file", "line",
                  "libc", "constructs", "fields": [ { "name", "type", "bitfield" } ] } ],
     "declarations": [ { "kind", "name", "file", "line", "libc" } ]: every global of the
                  AST in order ("function declaration", "function definition", "variable
                  declaration", "variable definition", "typedef", "struct", "union",
                  "struct declaration", "union declaration", "enum", "enum declaration",
                  "annotation", "asm", "pragma", "text"),
     "occurrences": [ { "kind", "name", "contract", "file", "line", "libc", "ghost" } ]: every
                  top-level declaration as written (Frama-C's untyped AST), a function's
                  re-declarations included ("function declaration", "function definition",
                  "variable declaration", "typedef", "type", "asm", "pragma", "static
                  assert", "linkage", "annotation"); "contract": it carries one,
     "globals": [ { "kind", "name", "file", "line", "axioms", "members", "text" } ],
                  (global annotations, in the order of their place in the files;
                  "members": the kinds and names inside an axiomatic; global
                  annotations of Frama-C's libc are left out)
     "recursive_logic": [ { "name", "file", "line", "recursion": "guarded" | "unguarded" } ]:
                  the recursive logic definitions of those global annotations (see
                  logic_recursion below),
     "unclassified": [ { "what", "file", "line" } ] }

   A contract's "clauses" list each assigns clause's dependencies as a clause of kind
   "from" (its text: the locations after \from, "\nothing" for none): WP does not check
   them.

   "status" is ACSL's predicate kind: "assert" (proved and used), "check" (proved, not
   used), "admit" (used, never proved). Annotations are the user's only (emitter
   end_user). A loop variant or decreases with a relation has kind "loop variant for
   relation" / "decreases for relation". Source: Frama-C 25 kernel API (Cil_types,
   Annotations, Printer, Dominators). *)

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
let opt_int = function Some n -> int n | None -> fun () -> Buffer.add_string buf "null"
let strs l () = arr str l
let pp f x = Format.asprintf "%a" f x

let file_of (pos : Filepath.position) = (pos.Filepath.pos_path :> string)
let line_of (loc : location) = (fst loc).Filepath.pos_lnum

let share = (Fc_config.datadir :> string) ^ "/"
let in_share file = String.length file >= String.length share && String.sub file 0 (String.length share) = share

(* Anything the script cannot classify: listed, never skipped (the judge rejects it). *)
let unclassified = ref []
let unclassify what loc = unclassified := (what, file_of (fst loc), line_of loc) :: !unclassified

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
       | Writes l as a ->
         add b.b_name "assigns" "assert" (pp Printer.pp_assigns a);
         List.iter
           (function
             | (_, FromAny) -> ()
             | (loc, From deps) ->
               let d = if deps = [] then "\\nothing" else String.concat ", " (List.map (fun (t : identified_term) -> pp Printer.pp_term t.it_content) deps) in
               add b.b_name "from" "assert" (pp Printer.pp_term loc.it_content ^ " \\from " ^ d))
           l);
      (match b.b_allocation with
       | FreeAllocAny -> ()
       | a -> add b.b_name "allocation" "assert" (pp Printer.pp_allocation a));
      List.iter (fun e -> add b.b_name "extended" "assert" (pp Printer.pp_extended e)) b.b_extended)
    spec.spec_behavior;
  (match spec.spec_terminates with
   | Some p -> add "default" "terminates" (status p.ip_content.tp_kind) (pp Printer.pp_predicate p.ip_content.tp_statement)
   | None -> ());
  (match spec.spec_variant with
   | Some (t, None) -> add "default" "decreases" "assert" (pp Printer.pp_term t)
   | Some (t, Some r) ->
     add "default" "decreases for relation" "assert" (pp Printer.pp_term t ^ " for " ^ r.l_var_info.lv_name)
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
  | AVariant (_, None) -> ("loop variant", "assert")
  | AVariant (_, Some _) -> ("loop variant for relation", "assert")
  | AAssigns _ -> ("loop assigns", "assert")
  | AAllocation _ -> ("loop allocation", "assert")
  | APragma _ -> ("pragma", "assert")
  | AExtended (_, _, e) -> (e.ext_name, "assert")

let attr_names attrs = List.map (function Attr (n, _) -> n | AttrAnnot n -> n) attrs

let storage = function NoStorage -> "none" | Static -> "static" | Register -> "register" | Extern -> "extern"

let bytes t = try Some (Cil.bitsSizeOf t / 8) with _ -> None

(* The constructs of a type: one name per type node, and the attributes written on it.
   A typedef is unrolled for its constructs, but the attributes inside its definition are
   left to where it is defined (the "types" list: the candidate's own are judged there;
   Frama-C's libc tags its own typedefs, e.g. fc_stdlib on size_t). Struct/union fields
   are not entered: a composite is judged where it is defined. *)
let node_attrs = function
  | TVoid a | TInt (_, a) | TFloat (_, a) | TPtr (_, a) | TArray (_, _, a) | TFun (_, _, _, a)
  | TNamed (_, a) | TComp (_, a) | TEnum (_, a) | TBuiltin_va_list a -> a

let rec constructs_of ~attrs acc t =
  let acc = if attrs then List.fold_left (fun acc a -> ("attribute", a) :: acc) acc (attr_names (node_attrs t)) else acc in
  let sub = constructs_of ~attrs in
  match t with
  | TVoid _ -> ("type", "void") :: acc
  | TInt (IBool, _) -> ("type", "bool") :: acc
  | TInt _ -> ("type", "integer") :: acc
  | TFloat (FFloat, _) -> ("type", "float") :: acc
  | TFloat (FDouble, _) -> ("type", "double") :: acc
  | TFloat (FLongDouble, _) -> ("type", "long double") :: acc
  | TPtr (t, _) -> sub (("type", "pointer") :: acc) t
  | TArray (t, None, _) -> sub (("type", "array without size") :: acc) t
  | TArray (t, Some e, _) ->
    let k = if Cil.constFoldToInt e <> None then "array" else "variable-length array" in
    sub (("type", k) :: acc) t
  | TFun (r, args, va, _) ->
    let acc = sub (("type", if va then "variadic function" else "function") :: acc) r in
    List.fold_left (fun acc (_, t, _) -> sub acc t) acc (Option.value ~default:[] args)
  | TNamed (ti, _) -> constructs_of ~attrs:false acc ti.ttype
  | TComp (ci, _) -> ("type", if ci.cstruct then "struct" else "union") :: acc
  | TEnum _ -> ("type", "enum") :: acc
  | TBuiltin_va_list _ -> ("type", "va_list") :: acc

let type_constructs acc t = constructs_of ~attrs:true acc t

let stmt_kind (st : stmt) =
  let k =
    match st.skind with
    | Instr (Set _) -> "set"
    | Instr (Call _) -> "call"
    | Instr (Local_init (_, AssignInit _, _)) -> "local init"
    | Instr (Local_init (_, ConsInit _, _)) -> "local init call"
    | Instr (Asm _) -> "asm"
    | Instr (Skip _) -> "skip"
    | Instr (Code_annot _) -> "annotation"
    | Return _ -> "return"
    | Goto _ -> "goto"
    | Break _ -> "break"
    | Continue _ -> "continue"
    | If _ -> "if"
    | Switch _ -> "switch"
    | Loop _ -> "loop"
    | Block _ -> "block"
    | UnspecifiedSequence _ -> "unspecified sequence"
    | Throw _ -> "throw"
    | TryCatch _ -> "try catch"
    | TryFinally _ -> "try finally"
    | TryExcept _ -> "try except"
  in
  if st.ghost then "ghost " ^ k else k

(* Per function: calls, loops, user gotos, asm, user annotations and constructs, from one
   visit. *)
type body_facts = {
  mutable calls : (string option * int) list;
  mutable loops : (int * bool) list;
  mutable gotos : (int * bool) list;
  mutable asm : int list;
  mutable annots : (string * string * int * string) list;
  mutable constructs : (string * string * int) list;
  mutable memory : (string * string * int) list;
}

let facts : (string, body_facts) Hashtbl.t = Hashtbl.create 17

let get_facts name =
  match Hashtbl.find_opt facts name with
  | Some f -> f
  | None ->
    let f = { calls = []; loops = []; gotos = []; asm = []; annots = []; constructs = []; memory = [] } in
    Hashtbl.replace facts name f; f

let user_label (st : stmt) = List.exists (function Label (_, _, true) -> true | _ -> false) st.labels

(* Does the goto [g] to [target] close a cycle that no loop statement heads? Search from
   the target along Frama-C's CFG (stmt.succs) for [g], without the back edges of loop
   statements: an edge to a Loop from a statement of its own body that the Loop
   dominates (those iterations are the loop's, bounded by its variant). An edge to a
   Loop from outside its body (a goto back to a labelled loop) is no back edge: it
   enters the loop again, its variant anew. Any doubt (an exception) counts as a cycle. *)
let goto_cycle (g : stmt) (target : stmt) =
  try
    let seen = Hashtbl.create 17 in
    let back_edge (src : stmt) (dst : stmt) =
      match dst.skind with
      | Loop _ ->
        src.sid <> dst.sid && Cil_datatype.Stmt.Set.mem src (Stmts_graph.get_stmt_stmts dst)
        && Dominators.dominates dst src
      | _ -> false
    in
    let rec go (st : stmt) =
      if st.sid = g.sid then true
      else if Hashtbl.mem seen st.sid then false
      else begin
        Hashtbl.replace seen st.sid ();
        List.exists (fun (n : stmt) -> not (back_edge st n) && go n) st.succs
      end
    in
    go target
  with _ -> true

(* --- what WP's Typed model reads differently from the compiled program ---------------- *)

let bare t = Cil.typeDeepDropAllAttributes (Cil.unrollTypeDeep t)
let is_char t = match Cil.unrollType t with TInt ((IChar | ISChar | IUChar), _) -> true | _ -> false
let is_integral t = match Cil.unrollType t with TInt _ | TEnum _ -> true | _ -> false

(* A cast the Typed model does not follow (WP 25 warns "Cast with incompatible pointers
   types" and keeps reading the memory as the type it was written with): between pointers
   to different types, qualifiers aside (a char pointer and void pointer are one type to
   it: Frama-C's libc passes buffers so), or between a pointer and an integer. A null
   constant is no cast. *)
let odd_cast (t : typ) (e : exp) =
  match Cil.unrollType t, Cil.unrollType (Cil.typeOf e) with
  | TPtr (pt, _), TPtr (pe, _) ->
    let a = bare pt and b = bare pe in
    not (Cil_datatype.Typ.equal a b) && not (Cil.isZero (Cil.stripCasts e))
    && not ((Cil.isVoidType a && is_char b) || (Cil.isVoidType b && is_char a))
  | TPtr _, _ -> is_integral (Cil.typeOf e) && not (Cil.isZero (Cil.stripCasts e))
  | _, TPtr _ -> is_integral t
  | _ -> false

let rec last_field = function
  | NoOffset -> None
  | Field (fi, NoOffset) -> Some fi
  | Field (_, o) | Index (_, o) -> last_field o

(* Is the value [e] stored into the bit-field [fi] known to fit its width? A constant
   within it, a read of a bit-field no wider (same signedness, or unsigned into a wider
   signed one), a comparison or a bool (0 or 1), or an integer type no wider. The cast Frama-C puts on the value
   (to the field's type, FRAMA_C_BITFIELD_SIZE) is looked through. *)
let fits (fi : fieldinfo) (e : exp option) =
  match fi.fbitfield, e with
  | None, _ -> true
  | Some _, None -> false
  | Some w, Some e ->
    let signed = Cil.isSignedInteger fi.ftype in
    let e = match e.enode with
      | CastE (t, inner) when Cil.hasAttribute "FRAMA_C_BITFIELD_SIZE" (Cil.typeAttrs t) -> inner
      | _ -> e in
    let narrow s bits = (s = signed && bits <= w) || (not s && signed && bits < w) in
    match Cil.constFoldToInt e with
    | Some v ->
      let lo = if signed then Integer.neg (Integer.two_power_of_int (w - 1)) else Integer.zero in
      let hi = Integer.pred (Integer.two_power_of_int (if signed then w - 1 else w)) in
      Integer.le lo v && Integer.le v hi
    | None ->
      (match e.enode with
       | Lval (_, off) when (match last_field off with Some g -> g.fbitfield <> None | None -> false) ->
         (match last_field off with
          | Some g -> narrow (Cil.isSignedInteger g.ftype) (Option.get g.fbitfield)
          | None -> false)
       | BinOp ((Lt | Gt | Le | Ge | Eq | Ne | LAnd | LOr), _, _, _) | UnOp (LNot, _, _) -> narrow false 1
       | _ ->
         match Cil.unrollType (Cil.typeOf e) with
         | TInt (IBool, _) -> narrow false 1
         | TInt (k, _) -> narrow (Cil.isSigned k) (Cil.bitsSizeOfInt k)
         | _ -> false)

let field_name (fi : fieldinfo) =
  Printf.sprintf "%s.%s:%d" fi.fcomp.cname fi.fname (Option.value ~default:0 fi.fbitfield)

class visitor = object (self)
  inherit Visitor.frama_c_inplace

  val mutable line = 0

  method private add_type ?(cast = false) t =
    match self#current_kf with
    | None -> ()
    | Some kf ->
      let f = get_facts (Kernel_function.get_name kf) in
      List.iter
        (fun (k, n) ->
          (* Frama-C casts a value stored into a bit-field to the field's type, which carries
             FRAMA_C_BITFIELD_SIZE: ignored in expressions (WP gives it no meaning), kept
             on declarations. *)
          if not (cast && k = "attribute" && n = "FRAMA_C_BITFIELD_SIZE") then
            f.constructs <- (k, n, line) :: f.constructs)
        (type_constructs [] t)

  method! vvdec vi =
    line <- line_of vi.vdecl;
    self#add_type vi.vtype;
    (match self#current_kf with
     | Some kf ->
       let f = get_facts (Kernel_function.get_name kf) in
       List.iter (fun a -> f.constructs <- ("attribute", a, line) :: f.constructs) (attr_names vi.vattr)
     | None -> ());
    Cil.SkipChildren

  method! vtype t = self#add_type ~cast:true t; Cil.SkipChildren

  method private memory kind what =
    match self#current_kf with
    | None -> ()
    | Some kf ->
      let f = get_facts (Kernel_function.get_name kf) in
      f.memory <- (kind, what, line) :: f.memory

  method private union_member = function
    | Field (fi, _) when not fi.fcomp.cstruct -> self#memory "union member" (fi.fcomp.cname ^ "." ^ fi.fname)
    | _ -> ()

  method private store (lv : lval) e =
    match last_field (snd lv) with
    | Some fi when not (fits fi e) -> self#memory "bit-field store" (field_name fi)
    | _ -> ()

  method! voffs o = self#union_member o; Cil.DoChildren
  method! vinitoffs o = self#union_member o; Cil.DoChildren

  method! vexpr e =
    (match e.enode with
     | CastE (t, inner) when odd_cast t inner ->
       self#memory "pointer cast" (pp Printer.pp_typ (Cil.typeOf inner) ^ " -> " ^ pp Printer.pp_typ t)
     | _ -> ());
    Cil.DoChildren

  method! vstmt_aux st =
    (match self#current_kf with
     | None -> ()
     | Some kf ->
       let f = get_facts (Kernel_function.get_name kf) in
       let loc = Cil_datatype.Stmt.loc st in
       line <- line_of loc;
       f.constructs <- ("statement", stmt_kind st, line) :: f.constructs;
       let callee e = match e.enode with Lval (Var vi, NoOffset) -> Some vi.vname | _ -> None in
       (match st.skind with
        | Instr (Set (lv, e, _)) -> self#store lv (Some e)
        | Instr (Call (Some lv, _, _, _)) -> self#store lv None
        | Instr (Local_init (vi, AssignInit init, _)) ->
          let rec walk off = function
            | SingleInit e -> self#store (Var vi, off) (Some e)
            | CompoundInit (_, l) -> List.iter (fun (o, i) -> walk (Cil.addOffset o off) i) l
          in
          walk NoOffset init
        | _ -> ());
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
        | Goto (target, l) when user_label !target -> f.gotos <- (line_of l, goto_cycle st !target) :: f.gotos
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

let rec global_kind = function
  | Dfun_or_pred ({ l_body = LBinductive _; _ } as li, loc) -> ("inductive", li.l_var_info.lv_name, loc)
  | Dfun_or_pred ({ l_body = LBnone | LBreads _; _ } as li, loc) -> ("logic declaration", li.l_var_info.lv_name, loc)
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

and members = function
  | Daxiomatic (_, l, _, _) ->
    List.concat_map (fun g -> let k, n, _ = global_kind g in (k, n) :: members g) l
  | _ -> []

let global_annot ga =
  let rec axioms = function
    | Dlemma (_, _, _, { tp_kind = Admit; _ }, _, _) -> 1
    | Daxiomatic (_, l, _, _) -> List.fold_left (fun n g -> n + axioms g) 0 l
    | _ -> 0
  in
  let kind, name, loc = global_kind ga in
  obj [ ("kind", s kind); ("name", s name); ("file", s (file_of (fst loc))); ("line", int (line_of loc));
        ("axioms", int (axioms ga));
        ("members", fun () -> arr (fun (k, n) -> obj [ ("kind", s k); ("name", s n) ]) (members ga));
        ("text", s (pp Printer.pp_global_annotation ga)) ]


(* --- recursive logic definitions --------------------------------------------------------
   WP takes a logic definition as an axiom (f(x) = body): a recursive one that no function
   satisfies (f(x) = f(x) + 1) makes every goal provable. A recursion is "guarded" when
   every recursive call passes, for some integer parameter x, the term x - c (c a positive
   constant) in a branch where a condition bounds x from below (the else branch of
   x <= k or x < k, the then branch of x > k or x >= k, the right of such an implication
   or conjunction, the right of a disjunction whose left is x <= k or x < k): x decreases
   and is bounded, so the definition has a unique solution. Anything else
   (mutual recursion included) is "unguarded". *)

let rec strip_term (t : term) =
  match t.term_node with
  | TLogic_coerce (_, t) | TCastE (_, t) -> strip_term t
  | _ -> t

let term_var (t : term) =
  match (strip_term t).term_node with TLval (TVar lv, TNoOffset) -> Some lv.lv_id | _ -> None

let term_const (t : term) =
  match (strip_term t).term_node with TConst (Integer (n, _)) -> Some n | _ -> None

(* The variables (by id: a bound variable of the same name is another) a guard bounds
   from below when it holds with polarity [pos]. *)
let bounded_below (cond : term) pos =
  match (strip_term cond).term_node with
  | TBinOp (op, a, b) ->
    let op, x, k =
      match term_var a, term_const b, term_var b, term_const a with
      | Some x, Some _, _, _ -> (Some op, Some x, true)
      | _, _, Some x, Some _ ->
        let flip = function Lt -> Gt | Gt -> Lt | Le -> Ge | Ge -> Le | o -> o in
        (Some (flip op), Some x, true)
      | _ -> (None, None, false)
    in
    if not k then []
    else (match op, x with
        | Some (Gt | Ge), Some x when pos -> [ x ]
        | Some (Lt | Le), Some x when not pos -> [ x ]
        | _ -> [])
  | _ -> []

let bounded_below_pred (p : predicate) pos =
  match p.pred_content with
  | Prel (rel, a, b) ->
    let op = match rel with Rlt -> Some Lt | Rgt -> Some Gt | Rle -> Some Le | Rge -> Some Ge | _ -> None in
    (match op with
     | Some op -> bounded_below { a with term_node = TBinOp (op, a, b) } pos
     | None -> [])
  | _ -> []

let decreasing (formals : logic_var list) bounded (args : term list) =
  List.exists2
    (fun (lv : logic_var) (arg : term) ->
      List.mem lv.lv_id bounded
      && (match (strip_term arg).term_node with
          | TBinOp (MinusA, a, c) ->
            term_var a = Some lv.lv_id
            && (match term_const c with Some n -> Integer.gt n Integer.zero | None -> false)
          | _ -> false))
    formals args

(* For a logic definition [li]: the calls it makes (logic function names), and whether its
   recursive calls are all guarded. *)
let logic_recursion (li : logic_info) =
  let callees = ref [] and unguarded = ref false in
  let call (f : logic_info) bounded args =
    callees := f.l_var_info.lv_name :: !callees;
    if f.l_var_info.lv_name = li.l_var_info.lv_name then
      (try if not (decreasing li.l_profile bounded args) then unguarded := true
       with Invalid_argument _ -> unguarded := true)
  in
  let rec term bounded (t : term) =
    match t.term_node with
    | Tif (c, a, b) ->
      term bounded c;
      term (bounded_below c true @ bounded) a;
      term (bounded_below c false @ bounded) b
    | Tapp (f, _, args) -> call f bounded args; List.iter (term bounded) args
    | _ -> ignore (Visitor.visitFramacTerm (visit bounded) t)
  and pred bounded (p : predicate) =
    match p.pred_content with
    | Pif (c, a, b) ->
      term bounded c;
      pred (bounded_below c true @ bounded) a;
      pred (bounded_below c false @ bounded) b
    | Pimplies (h, q) -> pred bounded h; pred (bounded_below_pred h true @ bounded) q
    | Pand (a, b) -> pred bounded a; pred (bounded_below_pred a true @ bounded) b
    | Por (a, b) -> pred bounded a; pred (bounded_below_pred a false @ bounded) b
    | Papp (f, _, args) -> call f bounded args; List.iter (term bounded) args
    | _ -> ignore (Visitor.visitFramacPredicate (visit bounded) p)
  and visit bounded = object
    inherit Visitor.frama_c_inplace
    method! vterm t =
      (match t.term_node with
       | Tif _ | Tapp _ -> term bounded t; Cil.SkipChildren
       | _ -> Cil.DoChildren)
    method! vpredicate p =
      (match p.pred_content with
       | Pif _ | Pimplies _ | Pand _ | Por _ | Papp _ -> pred bounded p; Cil.SkipChildren
       | _ -> Cil.DoChildren)
  end in
  (match li.l_body with
   | LBterm t -> term [] t
   | LBpred p -> pred [] p
   | LBnone | LBreads _ | LBinductive _ -> ());
  (List.sort_uniq compare !callees, !unguarded)

(* Every logic definition of the user's global annotations (inside axiomatics too), with
   its recursion: "none", "guarded" or "unguarded" (a call back through another
   definition is unguarded). *)
let recursive_logic (globals : global_annotation list) =
  let defs = ref [] in
  let rec collect = function
    | Dfun_or_pred (li, loc) -> defs := (li, loc) :: !defs
    | Daxiomatic (_, l, _, _) -> List.iter collect l
    | _ -> ()
  in
  List.iter collect globals;
  let facts = List.map (fun (li, loc) -> (li.l_var_info.lv_name, loc, logic_recursion li)) !defs in
  let calls name = match List.find_opt (fun (n, _, _) -> n = name) facts with Some (_, _, (c, _)) -> c | None -> [] in
  let reaches_back name =
    let seen = Hashtbl.create 7 in
    let rec go n = List.exists (fun c -> c = name || (not (Hashtbl.mem seen c) && (Hashtbl.replace seen c (); go c)))
                     (List.filter (fun c -> c <> n) (calls n)) in
    go name
  in
  List.filter_map
    (fun (name, loc, (callees, unguarded)) ->
      let self = List.mem name callees in
      let mutual = reaches_back name in
      if not self && not mutual then None
      else Some (name, loc, if unguarded || mutual then "unguarded" else "guarded"))
    (List.rev facts)

let is_builtin (vi : varinfo) = Cil_builtins.is_builtin vi || Ast_info.is_frama_c_builtin vi.vname

let constructs_json l =
  arr (fun (k, n, line) -> obj [ ("kind", s k); ("name", s n); ("line", int line) ])
    (List.sort_uniq compare l)

let function_json kf =
  let vi = Kernel_function.get_vi kf in
  let name = vi.vname in
  let libc = in_share (file_of (fst vi.vdecl)) in
  let spec = Annotations.funspec ~populate:false kf in
  let shown = if libc then Cil.empty_funspec () else spec in
  let defined = Kernel_function.is_definition kf in
  let f = get_facts name in
  let fundec = if defined then Some (Kernel_function.get_definition kf) else None in
  let body () = match fundec with Some fd -> str (pp Printer.pp_block fd.sbody) | None -> str "" in
  let formals = try List.map (fun v -> v.vname) (Kernel_function.get_formals kf) with _ -> [] in
  let fun_attrs =
    attr_names vi.vattr @ (match vi.vtype with TFun (_, _, _, a) -> attr_names a | _ -> [])
  in
  let variadic =
    (match vi.vtype with TFun (_, _, va, _) -> va | _ -> false) || List.mem "__va_params" formals
  in
  let locals =
    match fundec with
    | None -> []
    | Some fd ->
      let vla = Hashtbl.create 7 in
      List.iter
        (fun (st : stmt) ->
          match st.skind with
          | Instr (Local_init (v, ConsInit (c, _, _), _)) when c.vname = "__fc_vla_alloc" -> Hashtbl.replace vla v.vname ()
          | _ -> ())
        fd.sallstmts;
      List.map
        (fun v ->
          (v.vname, pp Printer.pp_typ v.vtype, line_of v.vdecl, bytes v.vtype, v.vtemp, v.vghost,
           Hashtbl.mem vla v.vname
           || List.exists (fun (k, n) -> k = "type" && n = "variable-length array") (type_constructs [] v.vtype)))
        fd.slocals
  in
  obj [
    ("name", s name); ("defined", bool defined); ("file", s (file_of (fst vi.vdecl)));
    ("line", int (line_of vi.vdecl)); ("builtin", bool (is_builtin vi)); ("type", s (unnamed_type vi));
    ("formals", strs formals);
    ("attributes", s (pp Printer.pp_attributes vi.vattr));
    ("attribute_names", strs fun_attrs);
    ("storage", s (storage vi.vstorage)); ("inline", bool vi.vinline); ("variadic", bool variadic);
    ("ghost", bool vi.vghost);
    ("noreturn", bool (never_returns vi spec));
    ("libc", bool libc);
    ("spec", s (if Cil.is_empty_funspec shown then "" else pp Printer.pp_funspec shown));
    ("spec_digest", s (Digest.to_hex (Digest.string (pp Printer.pp_funspec spec))));
    ("clauses", fun () -> arr (fun (b, k, st, t) -> obj [ ("behavior", s b); ("kind", s k); ("status", s st); ("text", s t) ])
                  (clauses shown));
    ("body", body);
    ("calls", fun () -> arr (fun (c, l) -> obj [ ("callee", (fun () -> match c with Some c -> str c | None -> Buffer.add_string buf "null"));
                                                ("line", int l) ]) (List.rev f.calls));
    ("loops", fun () -> arr (fun (l, v) -> obj [ ("line", int l); ("variant", bool v) ]) (List.rev f.loops));
    ("gotos", fun () -> arr (fun (l, c) -> obj [ ("line", int l); ("cycle", bool c) ]) (List.rev f.gotos));
    ("asm", fun () -> arr (fun l -> int l ()) (List.rev f.asm));
    ("annotations", fun () -> arr (fun (k, st, l, t) -> obj [ ("kind", s k); ("status", s st); ("line", int l); ("text", s t) ])
                       (List.rev f.annots));
    ("constructs", fun () -> constructs_json (if defined then f.constructs else []));
    ("locals", fun () ->
        arr (fun (n, t, l, b, temp, ghost, vla) ->
            obj [ ("name", s n); ("type", s t); ("line", int l); ("bytes", opt_int b); ("temp", bool temp);
                  ("ghost", bool ghost); ("vla", bool vla) ]) locals);
    ("memory", fun () ->
        arr (fun (k, w, l) -> obj [ ("kind", s k); ("what", s w); ("line", int l) ])
          (if defined then List.sort_uniq compare f.memory else []));
  ]

let variable_json (vi, (init : initinfo)) =
  let file = file_of (fst vi.vdecl) in
  let cons = List.map (fun (k, n) -> (k, n, line_of vi.vdecl)) (type_constructs [] vi.vtype)
             @ List.map (fun a -> ("attribute", a, line_of vi.vdecl)) (attr_names vi.vattr) in
  obj [ ("name", s vi.vname); ("type", s (pp Printer.pp_typ vi.vtype)); ("storage", s (storage vi.vstorage));
        ("initialised", bool (init.init <> None)); ("file", s file); ("line", int (line_of vi.vdecl));
        ("libc", bool (in_share file)); ("ghost", bool vi.vghost); ("bytes", opt_int (bytes vi.vtype));
        ("constructs", fun () -> constructs_json cons) ]

let type_json (kind, name, loc, (attrs : attributes), (fields : fieldinfo list), (t : typ option)) =
  let line = line_of loc in
  let cons =
    List.map (fun a -> ("attribute", a, line)) (attr_names attrs)
    @ List.concat_map
        (fun fi ->
          let l = line_of fi.floc in
          (* Frama-C records a bit-field's width as the attribute FRAMA_C_BITFIELD_SIZE of
             its type: dropped there, and only there. *)
          let own = List.filter (fun (k, n) -> fi.fbitfield = None || k <> "attribute" || n <> "FRAMA_C_BITFIELD_SIZE")
                      (type_constructs [] fi.ftype) in
          List.map (fun (k, n) -> (k, n, l)) own
          @ List.map (fun a -> ("attribute", a, l)) (attr_names fi.fattr)
          @ (if fi.fbitfield <> None then [ ("type", "bit-field", l) ] else []))
        fields
    @ (match t with Some t -> List.map (fun (k, n) -> (k, n, line)) (type_constructs [] t) | None -> [])
  in
  obj [ ("kind", s kind); ("name", s name); ("file", s (file_of (fst loc))); ("line", int line);
        ("libc", bool (in_share (file_of (fst loc))));
        ("constructs", fun () -> constructs_json cons);
        ("fields", fun () ->
            arr (fun fi -> obj [ ("name", s fi.fname); ("type", s (pp Printer.pp_typ fi.ftype));
                                 ("bitfield", opt_int fi.fbitfield) ]) fields) ]

let declaration (g : global) =
  let comp ci = if ci.cstruct then "struct" else "union" in
  match g with
  | GFunDecl (_, vi, loc) -> Some ("function declaration", vi.vname, loc)
  | GFun (fd, loc) -> Some ("function definition", fd.svar.vname, loc)
  | GVarDecl (vi, loc) -> Some ("variable declaration", vi.vname, loc)
  | GVar (vi, _, loc) -> Some ("variable definition", vi.vname, loc)
  | GType (ti, loc) -> Some ("typedef", ti.tname, loc)
  | GCompTag (ci, loc) -> Some (comp ci, ci.cname, loc)
  | GCompTagDecl (ci, loc) -> Some (comp ci ^ " declaration", ci.cname, loc)
  | GEnumTag (ei, loc) -> Some ("enum", ei.ename, loc)
  | GEnumTagDecl (ei, loc) -> Some ("enum declaration", ei.ename, loc)
  | GAnnot (ga, loc) -> let _, n, _ = global_kind ga in Some ("annotation", n, loc)
  | GAsm (_, loc) -> Some ("asm", "", loc)
  | GPragma (a, loc) -> Some ("pragma", String.concat "" (attr_names [ a ]), loc)
  | GText _ -> Some ("text", "", Cil_datatype.Location.unknown)

(* Every declaration occurrence as written, from Frama-C's untyped AST (Cabs): the typed
   AST keeps one prototype per function, and a re-declaration merges its contract and
   attributes into the first one. Block-scope declarations are not listed. *)
let occurrences () =
  let out = ref [] in
  let add kind name contract (loc : Cabs.cabsloc) ghost =
    out := (kind, name, contract, file_of (fst loc), (fst loc).Filepath.pos_lnum, ghost) :: !out
  in
  let is_function name = try ignore (Globals.Functions.find_by_name name); true with Not_found -> false in
  let rec def ghost = function
    | Cabs.FUNDEF (spec, (_, (name, _, _, _)), _, loc, _) -> add "function definition" name (spec <> None) loc ghost
    | Cabs.DECDEF (spec, (_, names), _) ->
      List.iter
        (fun ((name, _, _, loc), _) ->
          add (if is_function name then "function declaration" else "variable declaration") name (spec <> None) loc ghost)
        names
    | Cabs.TYPEDEF ((_, names), loc) -> List.iter (fun (name, _, _, _) -> add "typedef" name false loc ghost) names
    | Cabs.ONLYTYPEDEF (_, loc) -> add "type" "" false loc ghost
    | Cabs.GLOBASM (_, loc) -> add "asm" "" false loc ghost
    | Cabs.PRAGMA (_, loc) -> add "pragma" "" false loc ghost
    | Cabs.STATIC_ASSERT (_, _, loc) -> add "static assert" "" false loc ghost
    | Cabs.LINKAGE (_, loc, l) -> add "linkage" "" false loc ghost; List.iter (def ghost) l
    | Cabs.GLOBANNOT l -> List.iter (fun (d : Logic_ptree.decl) -> add "annotation" "" false d.decl_loc ghost) l
  in
  List.iter (fun (_, defs) -> List.iter (fun (ghost, d) -> def ghost d) defs) (Ast.UntypedFiles.get ());
  List.rev !out

let write path (ast : file) =
  Visitor.visitFramacFileSameGlobals (new visitor) ast;
  let kfs = ref [] in
  Globals.Functions.iter (fun kf -> kfs := kf :: !kfs);
  let kfs = List.sort (fun a b -> compare (Kernel_function.get_name a) (Kernel_function.get_name b)) !kfs in
  let vars = ref [] in
  Globals.Vars.iter (fun vi init -> vars := (vi, init) :: !vars);
  let vars = List.sort (fun (a, _) (b, _) -> compare a.vname b.vname) !vars in
  let globals = ref [] in
  Annotations.iter_global (fun e ga ->
      let file = file_of (fst (Cil_datatype.Global_annotation.loc ga)) in
      if Emitter.equal e Emitter.end_user && not (in_share file) then globals := ga :: !globals);
  (* Annotations.iter_global walks a hash table, whose order changes with the plug-ins
     loaded (each registers logic names): in the order of their place in the files, then
     by kind and name, so that the view is the same bytes from any Frama-C start. *)
  let place ga = let k, n, _ = global_kind ga in (Cil_datatype.Global_annotation.loc ga, k, n) in
  let globals = ref (List.rev (List.stable_sort (fun a b ->
      let (la, ka, na), (lb, kb, nb) = place a, place b in
      match Cil_datatype.Location.compare la lb with 0 -> compare (ka, na) (kb, nb) | c -> c) !globals)) in
  let types =
    List.filter_map
      (function
        | GType (ti, loc) -> Some ("typedef", ti.tname, loc, [], [], Some ti.ttype)
        | GCompTag (ci, loc) ->
          Some ((if ci.cstruct then "struct" else "union"), ci.cname, loc, ci.cattr,
                Option.value ~default:[] ci.cfields, None)
        | GEnumTag (ei, loc) -> Some ("enum", ei.ename, loc, ei.eattr, [], None)
        | _ -> None)
      ast.globals
  in
  let declarations = List.filter_map declaration ast.globals in
  let safe what loc f x = try f x with e -> unclassify (what ^ ": " ^ Printexc.to_string e) loc in
  (* Each function, variable and type is printed into its own buffer first, so that an
     exception leaves an "unclassified" entry rather than broken JSON. *)
  let each what name_loc json items () =
    let saved = Buffer.contents buf in
    Buffer.clear buf;
    let parts =
      List.filter_map
        (fun x ->
          Buffer.clear buf;
          let name, loc = name_loc x in
          let ok = ref true in
          safe (what ^ " " ^ name) loc (fun x -> try json x with e -> ok := false; raise e) x;
          if !ok then Some (Buffer.contents buf) else None)
        items
    in
    Buffer.clear buf;
    Buffer.add_string buf saved;
    Buffer.add_char buf '[';
    Buffer.add_string buf (String.concat "," parts);
    Buffer.add_char buf ']'
  in
  let top = [
    ("frama_c", s Fc_config.version_and_codename);
    ("share", s (Fc_config.datadir :> string));
    ("functions", each "function" (fun kf -> let vi = Kernel_function.get_vi kf in (vi.vname, vi.vdecl)) function_json kfs);
    ("variables", each "variable" (fun (vi, _) -> (vi.vname, vi.vdecl)) variable_json vars);
    ("types", each "type" (fun (_, n, loc, _, _, _) -> (n, loc)) type_json types);
    ("declarations", fun () ->
        arr (fun (k, n, loc) -> obj [ ("kind", s k); ("name", s n); ("file", s (file_of (fst loc)));
                                      ("line", int (line_of loc)); ("libc", bool (in_share (file_of (fst loc)))) ])
          declarations);
    ("occurrences", fun () ->
        arr (fun (k, n, c, f, l, g) -> obj [ ("kind", s k); ("name", s n); ("contract", bool c); ("file", s f);
                                             ("line", int l); ("libc", bool (in_share f)); ("ghost", bool g) ])
          (occurrences ()));
    ("globals", each "global annotation"
                  (fun ga -> let _, n, loc = global_kind ga in (n, loc)) global_annot (List.rev !globals));
    ("recursive_logic", fun () ->
        arr (fun (n, loc, r) -> obj [ ("name", s n); ("file", s (file_of (fst loc))); ("line", int (line_of loc));
                                       ("recursion", s r) ])
          (recursive_logic (List.rev !globals)));
  ] in
  obj (top @ [ ("unclassified", fun () ->
      arr (fun (w, f, l) -> obj [ ("what", s w); ("file", s f); ("line", int l) ]) (List.rev !unclassified)) ]);
  let oc = open_out_bin path in
  Buffer.output_buffer oc buf;
  close_out oc

let () =
  match Sys.getenv_opt "VERIKIT_VIEW" with
  | Some path when path <> "" -> Ast.apply_after_computed (write path)
  | _ -> ()
