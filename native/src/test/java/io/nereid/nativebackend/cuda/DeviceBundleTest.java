package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code native/device/make-bundle.sh} (run with {@code --no-build} on this build's classes) makes a
 * folder under the GPU machine's limit, whose own JDK runs and has the Vector API, with the jars, the
 * tests, the launcher, the fixtures and the scripts {@code check.sh} needs.
 */
class DeviceBundleTest {

    @Test
    void theBundleIsSelfContainedAndUnderSixtyMebibytes(@TempDir Path dir) throws Exception {
        Path module = Path.of("").toAbsolutePath();
        Path root = module.getParent();
        Assumptions.assumeTrue(Files.isDirectory(root.resolve("engine/target/classes"))
                && Files.isDirectory(root.resolve("kvcache/target/classes")),
                "the engine and kvcache are not built in this checkout (a -pl native run): the bundle check is skipped");
        Path out = dir.resolve("bundle");
        String log = KernelSourceTest.run(List.of("bash", root.resolve("native/device/make-bundle.sh").toString(),
                out.toString(), "--no-build"), root);
        assertTrue(log.contains("MiB (limit 60)"), log);
        long bytes;
        try (Stream<Path> files = Files.walk(out)) {
            bytes = files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
        assertTrue(bytes <= 60L << 20, "the bundle holds " + (bytes >> 20) + " MiB");
        for (String f : List.of("check.sh", "jvm.sh", "torch_reference.py", "report.py", "lib/nereid-engine.jar",
                "lib/nereid-kvcache.jar", "lib/nereid-native.jar", "lib/junit-platform-console-standalone.jar",
                "test-lib/nereid-engine-tests.jar",
                "fixtures/models/stories260K.gguf", "fixtures/tokenizers/llama3/tokenizer.json.gz",
                "test-classes/io/nereid/nativebackend/cuda/CudaConsistencyTest.class", "javacpp/javacpp-1.5.14.jar",
                "javacpp/cuda-13.3-9.25-1.5.14.jar", "javacpp/cuda-13.3-9.25-1.5.14-linux-x86_64.jar")) {
            assertTrue(Files.isRegularFile(out.resolve(f)), f + " is missing from the bundle");
        }
        String java = out.resolve("jdk/bin/java").toString();
        assertTrue(KernelSourceTest.run(List.of(java, "-version"), dir).contains("version \"25"));
        assertTrue(KernelSourceTest.run(List.of(java, "--list-modules"), dir).contains("jdk.incubator.vector"));
        // check.sh starts the JVM with bin/lib/jvm.sh's flags: the bundled runtime takes them
        String withFlags = ". \"$1/jvm.sh\" && \"$1/jdk/bin/java\" \"${nereid_jvm_args[@]}\" -version";
        assertTrue(KernelSourceTest.run(List.of("bash", "-c", withFlags, "check", out.toString()), dir)
                .contains("version \"25"));
    }
}
