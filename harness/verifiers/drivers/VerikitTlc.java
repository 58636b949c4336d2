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
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

public final class VerikitTlc {
    public static void main(String[] args) throws Exception {
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
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
        tlc2.TLC.main(Arrays.copyOfRange(args, 1, args.length));
    }
}
