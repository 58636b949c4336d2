// verikit TLC job launcher (runs INSIDE the sandbox, in the job directory).
//
// Not run by the package itself: harness/verifiers/tlc/verifier.py compiles this file once
// per run in the sandbox (TLC.prepare: the JDK's own compiler module, which Debian's JRE
// ships) and ships VerikitTlc.class with every job. One JVM does what two did:
//
//   java <JVM options> -cp tla2tools.jar:. VerikitTlc MODULE TLC-ARGUMENTS...
//
//   1. SANY's XML export of MODULE.tla (tla2sany.xml.XMLExporter -o: no schema validation)
//      into sany.xml, SANY's messages into sany.err; both then made read-only, so that the
//      model TLC runs next cannot rewrite them;
//   2. TLC with TLC-ARGUMENTS, its output on this process's standard output, its exit
//      status this process's.
//
// XMLExporter silences SANY by replacing System.out while it parses, and SANY's ToolIO
// keeps the streams it first saw: both are set back before TLC starts.
//
// With a check ahead (the kit's TLC.ahead: the follow-up's check, started on a guess):
//
//   java <JVM options> -cp tla2tools.jar:. VerikitTlc MODULE TLC-ARGUMENTS... --- OUT UNTIL TLC-ARGUMENTS...
//
// the first TLC runs as TLC's own main does (its parameters, its environment check, its
// file resolver, its exit status), without main's System.exit; then, when that status is
// 0 and OUT.tla is in the job directory, the check OUT runs as --each runs one (OUT.out,
// OUT.rc), in a class loader of its own. Files OUT.out, OUT.rc and OUT.dot are removed
// after the first TLC (none the model could have left is taken for the check's). The check has until
// UNTIL seconds after the launcher's start: one still running then is abandoned and its
// files removed (the kit's follow-up run makes it). The exit status is the first TLC's.
//
// A follow-up run's TLC checks, one after another in one JVM:
//
//   java <JVM options> -cp tla2tools.jar:. VerikitTlc --each OUT TLC-ARGUMENTS... [--- OUT TLC-ARGUMENTS...]...
//
// Each check gets tla2tools.jar in a class loader of its own (TLC keeps its state in static
// fields: every check starts from fresh ones, as in a JVM of its own); its output (standard
// output and error) goes to OUT.out and its exit status, as TLC's own main computes it, to
// OUT.rc. Only the JVM's start and the JDK's warm-up are shared: a second check costs about
// a third of a JVM of its own. A check that ends the JVM itself leaves the later OUT.rc
// unwritten: the follow-up's script runs those checks again, each in a JVM of its own.
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class VerikitTlc {
    static final long START = System.nanoTime();

    public static void main(String[] args) throws Throwable {
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        if (args.length > 0 && args[0].equals("--each")) {
            System.exit(each(Arrays.copyOfRange(args, 1, args.length)));
        }
        PrintStream out = System.out, err = System.err;
        try (PrintStream xml = new PrintStream(new FileOutputStream("sany.xml"), true, "UTF-8");
             PrintStream xmlErr = new PrintStream(new FileOutputStream("sany.err"), true, "UTF-8")) {
            System.setOut(xml);
            System.setErr(xmlErr);
            try {
                tla2sany.xml.XMLExporter.main(new String[] {"-o", args[0] + ".tla"});
            } catch (Throwable t) {  // SANY's failure is TLC's to report; the view records it
                t.printStackTrace(xmlErr);
            }
        } finally {
            System.setOut(out);
            System.setErr(err);
            util.ToolIO.out = out;
            util.ToolIO.err = err;
        }
        for (String name : new String[] {"sany.xml", "sany.err"}) {
            Files.setPosixFilePermissions(Path.of(name), PosixFilePermissions.fromString("r--r--r--"));
        }
        int tail = Arrays.asList(args).indexOf("---");
        if (tail < 0) {
            tlc2.TLC.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        int rc;
        try {
            rc = check(VerikitTlc.class.getClassLoader(), Arrays.copyOfRange(args, 1, tail));
        } catch (InvocationTargetException e) {  // uncaught in TLC: it ends the JVM as in TLC's main
            throw e.getCause();
        }
        out.flush();
        err.flush();
        String name = args[tail + 1];
        String[] outputs = {name + ".out", name + ".rc", name + ".dot"};
        remove(outputs);
        if (rc == 0 && Files.exists(Path.of(name + ".tla"))
                && !ahead(name, Double.parseDouble(args[tail + 2]), Arrays.copyOfRange(args, tail + 3, args.length))) {
            remove(outputs);
            Runtime.getRuntime().halt(rc);  // the abandoned check's thread must not hold the exit
        }
        System.exit(rc);
    }

    /** Deletes the check's output files that exist: none is left from an earlier check or an abandoned one. */
    static void remove(String[] files) throws IOException {
        for (String f : files) {
            Files.deleteIfExists(Path.of(f));
        }
    }

    /** The check ahead (see the header); false when it was abandoned at UNTIL. */
    static boolean ahead(String name, double until, String[] tlcArgs) throws Exception {
        String[] argv = new String[tlcArgs.length + 1];
        argv[0] = name;
        System.arraycopy(tlcArgs, 0, argv, 1, tlcArgs.length);
        Thread t = new Thread(() -> {
            try {
                each(argv);
            } catch (Exception e) {  // no OUT.rc: the follow-up run makes the check
                e.printStackTrace();
            }
        });
        t.setDaemon(true);
        long left = (long) (until * 1000) - (System.nanoTime() - START) / 1_000_000;
        if (left > 0) {
            t.start();
            t.join(left);
        }
        return left > 0 && !t.isAlive();
    }

    /** The checks of --each in turn; exit status 0 (each check's is in its OUT.rc). */
    static int each(String[] args) throws Exception {
        URL jar = tlc2.TLC.class.getProtectionDomain().getCodeSource().getLocation();
        List<List<String>> runs = new ArrayList<>();
        List<String> run = new ArrayList<>();
        for (String a : args) {
            if (a.equals("---")) {
                runs.add(run);
                run = new ArrayList<>();
            } else {
                run.add(a);
            }
        }
        runs.add(run);
        PrintStream out = System.out, err = System.err;
        for (List<String> r : runs) {
            String name = r.get(0);
            String[] tlcArgs = r.subList(1, r.size()).toArray(new String[0]);
            int rc;
            try (PrintStream to = new PrintStream(new FileOutputStream(name + ".out"), true, "UTF-8")) {
                try (URLClassLoader loader = new URLClassLoader(new URL[] {jar}, ClassLoader.getPlatformClassLoader())) {
                    System.setOut(to);
                    System.setErr(to);
                    rc = check(loader, tlcArgs);
                } catch (Throwable t) {  // as an uncaught exception ends a JVM of its own: status 1
                    to.print("Exception in thread \"main\" ");
                    t.printStackTrace(to);
                    rc = 1;
                } finally {
                    System.setOut(out);
                    System.setErr(err);
                }
            }
            Files.writeString(Path.of(name + ".rc"), rc + "\n");
            System.gc();  // the finished check's state, before the next one sizes its own
        }
        return 0;
    }

    /**
     * One TLC check in ``loader`` as TLC's main makes it (tla2tools 2.15, tlc2.TLC.main):
     * its parameters (status 1 when they do not parse), its environment check (a warning
     * when the collector is not the throughput one), its file resolver (the module's
     * directory: the job directory), then its run; the exit status main would give. Main's
     * MailSender, with no result.mail.address set, does nothing and is left out.
     */
    static int check(ClassLoader loader, String[] tlcArgs) throws Exception {
        Class<?> tlc = loader.loadClass("tlc2.TLC");
        Object checker = tlc.getConstructor().newInstance();
        if (!(Boolean) tlc.getMethod("handleParameters", String[].class).invoke(checker, (Object) tlcArgs)) {
            return 1;
        }
        Method environment = tlc.getDeclaredMethod("checkEnvironment");
        environment.setAccessible(true);
        if (!(Boolean) environment.invoke(checker)) {
            return 1;
        }
        Object resolver = loader.loadClass("util.SimpleFilenameToStream").getConstructor().newInstance();
        tlc.getMethod("setResolver", loader.loadClass("util.FilenameToStream")).invoke(checker, resolver);
        int code = (Integer) tlc.getMethod("process").invoke(checker);
        Class<?> status = loader.loadClass("tlc2.output.EC$ExitStatus");
        return (Integer) status.getMethod("errorConstantToExitStatus", int.class).invoke(null, code);
    }
}
