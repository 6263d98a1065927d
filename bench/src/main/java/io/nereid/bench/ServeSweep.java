package io.nereid.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The server side of a Model Analyzer style sweep: the bench starts a Nereid server per
 * configuration, the cross product of {@code --max-num-seqs} and {@code --max-num-batched-tokens}
 * value lists, runs the load levels against it and stops it. Parsed from the bench's arguments by
 * {@link #parse}, which hands the remaining ones to {@link BenchConfig#parse}. Immutable.
 *
 * @param command       how to start a server, before its flags: {@code bin/nereid serve} by default
 * @param serveArgs     flags every server gets ({@code --serve "ARGS"}, {@code --serve-model PATH})
 * @param maxNumSeqs    values to sweep; empty = the server's default
 * @param maxNumBatchedTokens values to sweep; empty = the server's default
 * @param startTimeoutS how long a server may take to listen and answer {@code /health/ready}
 * @param speculativeConfig {@code --speculative-config} JSON: every configuration is then served
 *                      twice, without and with it; null for neither
 */
public record ServeSweep(List<String> command, List<String> serveArgs, List<Integer> maxNumSeqs,
                         List<Integer> maxNumBatchedTokens, double startTimeoutS, String speculativeConfig) {

    public ServeSweep {
        command = List.copyOf(command);
        serveArgs = List.copyOf(serveArgs);
        maxNumSeqs = List.copyOf(maxNumSeqs);
        maxNumBatchedTokens = List.copyOf(maxNumBatchedTokens);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("--serve-command: empty");
        }
        if (!(startTimeoutS > 0)) {
            throw new IllegalArgumentException("--serve-timeout: must be > 0, got " + startTimeoutS);
        }
    }

    /** One server configuration: its label for the report, a directory name, and the serve flags. */
    public record Setup(String label, String dirName, List<String> args) {
    }

    static final String USAGE = """

            Server sweep (the bench starts a Nereid server per configuration; --url is not used):
              --serve-model PATH           the GGUF model each server serves (serve --model PATH)
              --serve "ARGS"               more flags for every server, e.g. "--chat-template chatml"
              --max-num-seqs A,B,...       values to sweep (serve --max-num-seqs)
              --max-num-batched-tokens A,B,...  values to sweep (serve --max-num-batched-tokens)
              --serve-command "CMD"        how to start a server (default: bin/nereid serve); it gets
                                           --host 127.0.0.1 --port 0 and the flags above
              --serve-timeout S            seconds a server may take to become ready (default 300)
              --speculative-config JSON    serve every configuration twice, without and with this
                                           serve --speculative-config (e.g. '{"method":"ngram",
                                           "num_speculative_tokens":3,"prompt_lookup_max":3}'), to compare
            Each configuration is swept over the load levels (--concurrency A,B,... or
            --request-rate R,S,...); the report draws throughput against p99 latency for every
            point and names the best one: the highest output token throughput that meets
            --ttft-slo/--tpot-slo at p99.
            """;

    /** The server-sweep flags, each taking a value (the ones {@link #USAGE} lists). */
    static final List<String> FLAGS = List.of("--serve-model", "--serve", "--max-num-seqs", "--max-num-batched-tokens",
            "--serve-command", "--serve-timeout", "--speculative-config");

    /** The sweep, or null when no server flag was given, and the arguments left for {@link BenchConfig}. */
    public record Parsed(ServeSweep sweep, String[] rest) {
    }

    public static Parsed parse(String[] args) {
        List<String> rest = new ArrayList<>();
        List<String> command = null;
        List<String> serveArgs = new ArrayList<>();
        List<Integer> seqs = new ArrayList<>();
        List<Integer> tokens = new ArrayList<>();
        double timeout = 300;
        String speculative = null;
        boolean any = false;
        boolean url = false;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (!FLAGS.contains(flag)) {
                url |= flag.equals("--url");
                rest.add(flag);
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag + ": missing value");
            }
            String v = args[++i];
            any = true;
            try {
                switch (flag) {
                    case "--serve-model" -> serveArgs.addAll(List.of("--model", v));
                    case "--serve" -> serveArgs.addAll(words(v));
                    case "--max-num-seqs" -> seqs.addAll(positives(flag, v));
                    case "--max-num-batched-tokens" -> tokens.addAll(positives(flag, v));
                    case "--serve-command" -> command = words(v);
                    case "--speculative-config" -> speculative = v;
                    default -> timeout = Double.parseDouble(v);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + ": not a number: '" + v + "'");
            }
        }
        if (!any) {
            return new Parsed(null, args);
        }
        if (url) {
            throw new IllegalArgumentException("--url does not apply to a server sweep: the bench starts each server");
        }
        BenchConfig.listedOnce("--max-num-seqs", seqs);
        BenchConfig.listedOnce("--max-num-batched-tokens", tokens);
        return new Parsed(new ServeSweep(command == null ? defaultCommand() : command, serveArgs, seqs, tokens,
                timeout, speculative), rest.toArray(String[]::new));
    }

    /** Every configuration, smallest first: max-num-seqs outer, max-num-batched-tokens inner. */
    public List<Setup> setups() {
        List<Integer> seqs = maxNumSeqs.isEmpty() ? Arrays.asList((Integer) null) : maxNumSeqs;
        List<Integer> tokens = maxNumBatchedTokens.isEmpty() ? Arrays.asList((Integer) null) : maxNumBatchedTokens;
        List<Setup> setups = new ArrayList<>();
        for (Integer s : seqs) {
            for (Integer t : tokens) {
                List<String> label = new ArrayList<>();
                List<String> dir = new ArrayList<>();
                List<String> flags = new ArrayList<>(serveArgs);
                if (s != null) {
                    label.add("max-num-seqs=" + s);
                    dir.add("seqs" + s);
                    flags.addAll(List.of("--max-num-seqs", s.toString()));
                }
                if (t != null) {
                    label.add("max-num-batched-tokens=" + t);
                    dir.add("tokens" + t);
                    flags.addAll(List.of("--max-num-batched-tokens", t.toString()));
                }
                String name = label.isEmpty() ? "server defaults" : String.join(" ", label);
                String dirName = dir.isEmpty() ? "server" : String.join("-", dir);
                if (speculativeConfig == null) {
                    setups.add(new Setup(name, dirName, flags));
                } else {   // the comparison: the same configuration without, then with, speculative decoding
                    setups.add(new Setup(name + " no-spec", dirName + "-nospec", flags));
                    List<String> spec = new ArrayList<>(flags);
                    spec.addAll(List.of("--speculative-config", speculativeConfig));
                    setups.add(new Setup(name + " spec", dirName + "-spec", spec));
                }
            }
        }
        return setups;
    }

    /** The full command line of one configuration's server, listening on a free loopback port. */
    public List<String> commandLine(Setup setup) {
        List<String> cmd = new ArrayList<>(command);
        cmd.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
        cmd.addAll(setup.args());
        return cmd;
    }

    /**
     * {@code bin/nereid serve} of the checkout the bench runs from: bin/nereid runs the bench from
     * {@code bench/target/classes}, three levels below the root; else {@code bin/nereid} in the
     * working directory.
     */
    static List<String> defaultCommand() {
        Path launcher = Path.of("bin", "nereid");
        try {
            Path classes = Path.of(ServeSweep.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path root = classes.getParent() == null ? null : classes.getParent().getParent();
            root = root == null ? null : root.getParent();
            if (root != null && Files.isExecutable(root.resolve(launcher))) {
                launcher = root.resolve(launcher);
            }
        } catch (java.net.URISyntaxException | SecurityException | NullPointerException e) {
            // no code source: fall back to the working directory's launcher
        }
        return List.of(launcher.toString(), "serve");
    }

    private static List<String> words(String v) {
        return Arrays.stream(v.strip().split("\\s+")).filter(w -> !w.isEmpty()).toList();
    }

    private static List<Integer> positives(String flag, String v) {
        List<Integer> out = new ArrayList<>();
        for (String s : v.split(",", -1)) {
            int n = Integer.parseInt(s.strip());
            if (n < 1) {
                throw new IllegalArgumentException(flag + ": must be >= 1, got " + n);
            }
            out.add(n);
        }
        return out;
    }
}
