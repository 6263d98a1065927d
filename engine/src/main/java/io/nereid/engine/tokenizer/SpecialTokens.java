package io.nereid.engine.tokenizer;

import java.util.List;
import java.util.stream.IntStream;

/**
 * Special token ids of a model; -1 where the model has none.
 *
 * @param bos     beginning of sequence
 * @param eos     end of sequence
 * @param eot     end of turn (e.g. Llama 3 {@code <|eot_id|>}, ChatML {@code <|im_end|>}), or -1
 * @param eom     end of message (Llama 3.1 {@code <|eom_id|>}), or -1
 * @param pad     padding, or -1
 * @param unk     unknown, or -1
 * @param addBos  whether {@code encode(..., addSpecial=true, ...)} prepends BOS
 * @param addEos  whether it appends EOS
 * @param moreStops further ids that end generation, e.g. the {@code eos_token_id} list of a
 *                  Hugging Face {@code generation_config.json}
 */
public record SpecialTokens(int bos, int eos, int eot, int eom, int pad, int unk, boolean addBos, boolean addEos,
        List<Integer> moreStops) {

    public SpecialTokens {
        moreStops = List.copyOf(moreStops);
    }

    /** Without further stop ids. */
    public SpecialTokens(int bos, int eos, int eot, int eom, int pad, int unk, boolean addBos, boolean addEos) {
        this(bos, eos, eot, eom, pad, unk, addBos, addEos, List.of());
    }

    /** Ids that end generation unless {@code ignore_eos}: EOS, EOT, EOM and the further ones, without -1 and duplicates. */
    public int[] stopIds() {
        return IntStream.concat(IntStream.of(eos, eot, eom), moreStops.stream().mapToInt(Integer::intValue))
                .filter(id -> id >= 0).distinct().toArray();
    }
}
