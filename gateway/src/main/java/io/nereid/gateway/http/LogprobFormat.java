package io.nereid.gateway.http;

import io.nereid.engine.api.TokenLogprob;
import io.nereid.openapi.Logprobs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Turns the engine's {@link TokenLogprob}s into OpenAI's two wire shapes. A token's text is its
 * bytes as UTF-8 (a token holding part of a character shows U+FFFD; {@code bytes} keeps the exact
 * bytes, as OpenAI does). Pure; thread-safe.
 */
final class LogprobFormat {

    private final IntFunction<byte[]> tokenBytes;

    LogprobFormat(IntFunction<byte[]> tokenBytes) {
        this.tokenBytes = tokenBytes;
    }

    String text(int id) {
        return new String(tokenBytes.apply(id), StandardCharsets.UTF_8);
    }

    private int[] bytes(int id) {
        byte[] b = tokenBytes.apply(id);
        int[] out = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i] & 0xff;
        }
        return out;
    }

    Logprobs.Chat chat(List<TokenLogprob> tokens) {
        List<Logprobs.Token> content = new ArrayList<>(tokens.size());
        for (TokenLogprob t : tokens) {
            List<Logprobs.TopToken> top = new ArrayList<>(t.topIds().length);
            for (int k = 0; k < t.topIds().length; k++) {
                top.add(new Logprobs.TopToken(text(t.topIds()[k]), t.topLogprobs()[k], bytes(t.topIds()[k])));
            }
            content.add(new Logprobs.Token(text(t.tokenId()), t.logprob(), bytes(t.tokenId()), top));
        }
        return new Logprobs.Chat(content);
    }

    /**
     * Token text → logprob: the token itself, then its first {@code top} alternatives (the first of equal
     * texts wins) — up to {@code top + 1} entries, as OpenAI's legacy API ("always the sampled token") and vLLM.
     */
    private Map<String, Float> topMap(TokenLogprob t, int top) {
        Map<String, Float> m = new LinkedHashMap<>();
        m.put(text(t.tokenId()), t.logprob());
        for (int k = 0; k < Math.min(top, t.topIds().length); k++) {
            m.putIfAbsent(text(t.topIds()[k]), t.topLogprobs()[k]);
        }
        return m;
    }

    /** The legacy shape, offsets counted from {@code startOffset} (the characters of the choice's earlier tokens). */
    Logprobs.Completion completion(List<TokenLogprob> tokens, int startOffset) {
        List<String> texts = new ArrayList<>();
        List<Float> lps = new ArrayList<>();
        List<Map<String, Float>> tops = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        int offset = startOffset;
        for (TokenLogprob t : tokens) {
            String s = text(t.tokenId());
            texts.add(s);
            lps.add(t.logprob());
            tops.add(topMap(t, t.topIds().length));
            offsets.add(offset);
            offset += s.length();
        }
        return new Logprobs.Completion(texts, lps, tops, offsets);
    }

    /**
     * The echoed prompt in the legacy shape: token {@code j} of {@code promptTokens} at
     * {@code offsets[j]} of the echoed text; {@code scored.get(j - 1)} scores token {@code j} (the
     * first token has null logprob and alternatives); at most {@code top} alternatives each.
     */
    Logprobs.Completion echo(int[] promptTokens, int[] offsets, List<TokenLogprob> scored, int top) {
        List<String> texts = new ArrayList<>();
        List<Float> lps = new ArrayList<>();
        List<Map<String, Float>> tops = new ArrayList<>();
        List<Integer> textOffsets = new ArrayList<>();
        for (int j = 0; j < promptTokens.length; j++) {
            texts.add(text(promptTokens[j]));
            textOffsets.add(offsets[j]);
            TokenLogprob t = j == 0 ? null : scored.get(j - 1);
            lps.add(t == null ? null : t.logprob());
            tops.add(t == null ? null : topMap(t, top));
        }
        return new Logprobs.Completion(texts, lps, tops, textOffsets);
    }

    /** {@code a}'s tokens, then {@code b}'s. */
    static Logprobs.Completion concat(Logprobs.Completion a, Logprobs.Completion b) {
        return new Logprobs.Completion(join(a.tokens(), b.tokens()), join(a.tokenLogprobs(), b.tokenLogprobs()),
                join(a.topLogprobs(), b.topLogprobs()), join(a.textOffset(), b.textOffset()));
    }

    private static <T> List<T> join(List<T> a, List<T> b) {
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /**
     * vLLM's {@code prompt_logprobs}: null for the first prompt token, then per token a map of the
     * token itself and its {@code top} most likely alternatives (ids as strings, the token first).
     */
    List<Map<String, Logprobs.PromptToken>> prompt(List<TokenLogprob> scored, int top) {
        List<Map<String, Logprobs.PromptToken>> out = new ArrayList<>(scored.size() + 1);
        out.add(null);
        for (TokenLogprob t : scored) {
            Map<String, Logprobs.PromptToken> m = new LinkedHashMap<>();
            m.put(Integer.toString(t.tokenId()), new Logprobs.PromptToken(t.logprob(), t.rank(), text(t.tokenId())));
            for (int k = 0; k < Math.min(top, t.topIds().length); k++) {
                int id = t.topIds()[k];
                m.putIfAbsent(Integer.toString(id), new Logprobs.PromptToken(t.topLogprobs()[k], k + 1, text(id)));
            }
            out.add(m);
        }
        return out;
    }

    /** Characters the tokens' texts add up to. */
    int chars(List<TokenLogprob> tokens) {
        int n = 0;
        for (TokenLogprob t : tokens) {
            n += text(t.tokenId()).length();
        }
        return n;
    }
}
