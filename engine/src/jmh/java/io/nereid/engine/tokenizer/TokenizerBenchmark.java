package io.nereid.engine.tokenizer;

import io.nereid.engine.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Encode throughput of 1 MB (UTF-8) of English prose and of source code with the Llama 3 and
 * Qwen 3 tokenizers from the fixtures. One operation encodes the whole megabyte, so ops/s is
 * MB/s. Corpora come from the running JDK, so they need no download: prose is the Javadoc
 * comment text of {@code java.base} from {@code lib/src.zip}, code is the same sources whole.
 *
 * <p>Baseline in the same run: {@code baselinePreTokenize}, the regex pre-tokenization alone
 * (the part every BPE implementation must pay); {@code encodeUncached} clears the word cache
 * before each op to show the cost without memoization.
 * Run: {@code bin/nereid jmh engine TokenizerBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
public class TokenizerBenchmark {

    static final int MEGABYTE = 1 << 20;

    @Param({"llama3", "qwen3"})
    String tokenizer;

    @Param({"prose", "code"})
    String corpus;

    Tokenizer tok;
    String text;
    RegexSplitter splitter;

    @Setup(Level.Trial)
    public void setUp() {
        tok = HfTokenizerLoader.load(Fixtures.path("tokenizers/" + tokenizer + "/tokenizer.json"));
        text = corpus.equals("prose") ? javadocProse() : javaSource();
        splitter = ((ModelTokenizer.Bpe) ((ModelTokenizer) tok).model()).splitter();
    }

    @Benchmark
    public int encode() {
        return tok.encode(text, false, true).length;
    }

    @Benchmark
    public int encodeUncached() {
        ((ModelTokenizer.Bpe) ((ModelTokenizer) tok).model()).merger().clearCache();
        return tok.encode(text, false, true).length;
    }

    @Benchmark
    public int baselinePreTokenize() {
        return splitter.split(text, 0, text.length()).length;
    }

    /** Writes the two corpora as {@code prose.txt} and {@code code.txt} into {@code args[0]}, for other tokenizers. */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        java.nio.file.Files.createDirectories(dir);
        java.nio.file.Files.writeString(dir.resolve("prose.txt"), javadocProse());
        java.nio.file.Files.writeString(dir.resolve("code.txt"), javaSource());
    }

    static String javaSource() {
        StringBuilder sb = new StringBuilder(MEGABYTE + 65536);
        for (String source : sources()) {
            sb.append(source);
            if (utf8Length(sb) >= MEGABYTE) {
                break;
            }
        }
        return truncateToMegabyte(sb.toString());
    }

    static String javadocProse() {
        StringBuilder sb = new StringBuilder(MEGABYTE + 65536);
        for (String source : sources()) {
            boolean inDoc = false;
            for (String line : source.split("\n")) {
                String t = line.strip();
                if (t.startsWith("/**")) {
                    inDoc = true;
                    t = t.substring(3);
                }
                if (inDoc) {
                    boolean end = t.endsWith("*/");
                    if (end) {
                        t = t.substring(0, t.length() - 2);
                        inDoc = false;
                    }
                    t = t.replaceFirst("^\\*+ ?", "").replaceAll("<[^>]+>", "").replaceAll("\\{@\\w+ ([^}]*)}", "$1").strip();
                    if (!t.isEmpty() && !t.startsWith("@")) {
                        sb.append(t).append(end ? "\n\n" : " ");
                    }
                }
            }
            if (utf8Length(sb) >= MEGABYTE) {
                break;
            }
        }
        return truncateToMegabyte(sb.toString());
    }

    /** java.base sources in name order, so the corpus is the same on every machine with this JDK. */
    private static List<String> sources() {
        Path zip = Path.of(System.getProperty("java.home"), "lib", "src.zip");
        try (ZipFile z = new ZipFile(zip.toFile())) {
            List<ZipEntry> entries = new ArrayList<>(z.stream()
                    .filter(e -> e.getName().startsWith("java.base/java/") && e.getName().endsWith(".java")).toList());
            entries.sort(Comparator.comparing(ZipEntry::getName));
            List<String> out = new ArrayList<>();
            long total = 0;
            for (ZipEntry e : entries) {
                String s = new String(z.getInputStream(e).readAllBytes(), StandardCharsets.UTF_8);
                out.add(s);
                total += s.length();
                if (total > 40L * MEGABYTE) {
                    break;
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("needs the JDK's lib/src.zip: " + zip, e);
        }
    }

    private static int utf8Length(CharSequence s) {
        return s.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    private static String truncateToMegabyte(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length < MEGABYTE) {
            throw new IllegalStateException("corpus smaller than 1 MB: " + b.length);
        }
        // Cut at a character boundary at or below 1 MB.
        int end = MEGABYTE;
        while ((b[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }
}
