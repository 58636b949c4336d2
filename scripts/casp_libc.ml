(* verikit: the contracts Frama-C's own libc gives its functions, as JSON (for
   scripts/casp_libc.py, which derives CASP's allow-list of libc callees from them).

   Loaded with  frama-c -load-script casp_libc.ml FILE  ; writes the file named by the
   environment variable VERIKIT_LIBC once Frama-C has parsed FILE (which includes the
   headers to read): every function declared in Frama-C's libc (under its share
   directory) with its C type, formals, whether it is variadic or never returns, and its
   contract as Frama-C prints it: per behavior the assumes, requires and ensures counts,
   whether it has an assigns clause (a frame) and its text, whether it has an exits clause
   or an allocation clause; terminates. Source: Frama-C 25 kernel API (Cil_types,
   Annotations, Printer). *)

open Cil_types

let buf = Buffer.create 65536
let str s =
  Buffer.add_char buf '"';
  String.iter
    (fun c ->
      match c with
      | '"' -> Buffer.add_string buf "\\\""
      | '\\' -> Buffer.add_string buf "\\\\"
      | c when Char.code c < 0x20 -> Buffer.add_string buf (Printf.sprintf "\\u%04x" (Char.code c))
      | c -> Buffer.add_char buf c)
    s;
  Buffer.add_char buf '"'
let pp f x = Format.asprintf "%a" f x
let share = (Fc_config.datadir :> string) ^ "/"
let in_share file = String.length file >= String.length share && String.sub file 0 (String.length share) = share

let list f items = Buffer.add_char buf '['; List.iteri (fun i x -> if i > 0 then Buffer.add_char buf ','; f x) items; Buffer.add_char buf ']'
let field first k = if not first then Buffer.add_char buf ','; str k; Buffer.add_char buf ':'
let b x = Buffer.add_string buf (if x then "true" else "false")
let n x = Buffer.add_string buf (string_of_int x)

let behavior (bh : funbehavior) =
  Buffer.add_char buf '{';
  field true "name"; str bh.b_name;
  field false "assumes"; n (List.length bh.b_assumes);
  field false "requires"; n (List.length bh.b_requires);
  field false "ensures"; n (List.length (List.filter (fun (k, _) -> k = Normal) bh.b_post_cond));
  field false "exits"; b (List.exists (fun (k, _) -> k <> Normal) bh.b_post_cond);
  field false "ensures_false";
  b (List.exists (fun (k, p) -> k = Normal && p.ip_content.tp_statement.pred_content = Pfalse) bh.b_post_cond);
  field false "assigns";
  (match bh.b_assigns with WritesAny -> Buffer.add_string buf "null" | a -> str (pp Printer.pp_assigns a));
  field false "allocation"; b (bh.b_allocation <> FreeAllocAny);
  Buffer.add_char buf '}'

let func kf =
  let vi = Kernel_function.get_vi kf in
  let spec = Annotations.funspec ~populate:false kf in
  let formals = try List.map (fun v -> v.vname) (Kernel_function.get_formals kf) with _ -> [] in
  Buffer.add_char buf '{';
  field true "name"; str vi.vname;
  field false "type"; str (pp Printer.pp_typ vi.vtype);
  field false "header"; str (Filename.basename ((fst vi.vdecl).Filepath.pos_path :> string));
  field false "formals"; list str formals;
  field false "variadic"; b (match vi.vtype with TFun (_, _, va, _) -> va | _ -> false);
  field false "noreturn"; b (Cil.hasAttribute "noreturn" vi.vattr);
  field false "contract"; b (not (Cil.is_empty_funspec spec));
  field false "terminates";
  (match spec.spec_terminates with
   | Some p -> str (pp Printer.pp_predicate p.ip_content.tp_statement)
   | None -> Buffer.add_string buf "null");
  field false "behaviors"; list behavior spec.spec_behavior;
  Buffer.add_char buf '}'

let write path (_ : Cil_types.file) =
  let kfs = ref [] in
  Globals.Functions.iter (fun kf ->
      let vi = Kernel_function.get_vi kf in
      if in_share ((fst vi.vdecl).Filepath.pos_path :> string) then kfs := kf :: !kfs);
  let kfs = List.sort (fun a c -> compare (Kernel_function.get_name a) (Kernel_function.get_name c)) !kfs in
  Buffer.add_string buf "{\"frama_c\":"; str Fc_config.version_and_codename;
  Buffer.add_string buf ",\"functions\":"; list func kfs; Buffer.add_char buf '}';
  let oc = open_out_bin path in
  Buffer.output_buffer oc buf;
  close_out oc

let () =
  match Sys.getenv_opt "VERIKIT_LIBC" with
  | Some path when path <> "" -> Ast.apply_after_computed (write path)
  | _ -> ()
