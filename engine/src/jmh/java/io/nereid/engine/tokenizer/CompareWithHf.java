package io.nereid.engine.tokenizer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Compares our ids for the benchmark corpora with ids written by {@code bench/tokenizers/hf-encode.cjs}
 * (HF {@code tokenizers}), token for token. Usage: {@code CompareWithHf FIXTURES_DIR CORPUS_DIR IDS_DIR}.
 * Exits 1 on any difference, printing where the first one is.
 */
public final class CompareWithHf {

    private CompareWithHf() {
    }

    public static void main(String[] args) throws IOException {
        Path fixtures = Path.of(args[0]);
        Path corpora = Path.of(args[1]);
        Path idsDir = Path.of(args[2]);
        boolean allEqual = true;
        for (String name : new String[] {"llama3", "qwen3"}) {
            Tokenizer tok = HfTokenizerLoader.load(fixtures.resolve("tokenizers").resolve(name).resolve("tokenizer.json"));
            for (String corpus : new String[] {"prose", "code"}) {
                int[] ours = tok.encode(Files.readString(corpora.resolve(corpus + ".txt")), false, true);
                int[] theirs = Files.readAllLines(idsDir.resolve(name + "-" + corpus + ".ids")).stream()
                        .filter(l -> !l.isBlank()).mapToInt(Integer::parseInt).toArray();
                int mismatch = Arrays.mismatch(ours, theirs);
                allEqual &= mismatch < 0;
                System.out.println(name + " " + corpus + ": " + (mismatch < 0 ? "identical, " + ours.length + " tokens"
                        : "DIFFERENT at token " + mismatch + " (ours " + ours.length + ", HF " + theirs.length + ")"));
            }
        }
        System.exit(allEqual ? 0 : 1);
    }
}
