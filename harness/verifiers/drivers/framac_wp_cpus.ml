(* verikit: a WP run takes the job's CPUs as prover processes once the steps beside it
   have ended.

   Loaded, with -load-module verikit_framac_wp_cpus.cmxs (built once per run by the job
   driver's --prepare step; without it a run keeps the job's -wp-par), into the WP runs
   that the job driver starts beside another step when the job may use two CPUs: the
   verification (beside the side steps) and the side WP runs (the requires probe, the
   do-nothing-body run: beside the verification). It does nothing unless the environment
   names a file in VERIKIT_WP_CPUS_FREE and VERIKIT_CPUS exceeds -wp-par: then, as soon as
   that file exists (the driver writes it when the other step has ended: vk-cpus-free,
   vk-wp-done), WP's prover processes go from -wp-par to VERIKIT_CPUS for the rest of the
   run. Which goals WP proves does not depend on it, only when each goal starts: every
   prover process still has a CPU of its own. The raise is written to the standard error
   ("[verikit] WP: N provers at a time from here (FILE)").

   How, from Frama-C 25's sources (src/plugins/wp/ProverTask.ml, src/libraries/utils/
   task.ml) and Why3 1.5's (src/session/controller_itp.ml, src/driver/prove_client.ml,
   src/server/server-unix.c):
   - WP schedules its prover calls on one Task.server, ProverTask.server (); each prover
     call of a goal is a task of its own (Prover.spawn), so the server's number of
     processes is the number of prover processes at a time (a goal's provers too run side
     by side once it is 2 or more). Task.server_progress fires the server's
     activity callbacks at each scheduling step (every 50 ms while provers run) and starts
     queued tasks while fewer than that number run.
   - ProverTask.server () sets the server's number of processes to -wp-par
     (Wp_parameters.Procs) at every call, and Why3's to the same number
     (Why3Provers.set_procs, that is Controller_itp.set_session_max_tasks, which sends
     "parallel;N" to why3server). So the number is raised by setting -wp-par and calling
     ProverTask.server () once more: both in the same callback, before the next
     scheduling step. why3server reads its client's requests in order, so the
     "parallel" request comes before the next prover call, which never waits in
     why3server's queue while WP's own wall-clock kill of that call (its start + timeout
     + 2 s, ProverWhy3.ping_prover_call) counts. *)

let () =
  match Sys.getenv_opt "VERIKIT_WP_CPUS_FREE" with
  | None | Some "" -> ()
  | Some file ->
    Cmdline.run_after_configuring_stage begin fun () ->
      let cpus = try int_of_string (Sys.getenv "VERIKIT_CPUS") with _ -> 1 in
      if cpus > Wp.Wp_parameters.Procs.get () then begin
        let server = Wp.ProverTask.server () in
        let raised = ref false in
        Task.on_server_activity server begin fun () ->
          if not !raised && Sys.file_exists file then begin
            raised := true ;
            Wp.Wp_parameters.Procs.set cpus ;
            ignore (Wp.ProverTask.server ()) ;
            Printf.eprintf "[verikit] WP: %d provers at a time from here (%s)\n%!" cpus file
          end
        end
      end
    end
