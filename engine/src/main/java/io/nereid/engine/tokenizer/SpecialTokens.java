package io.nereid.engine.tokenizer;

import java.util.Arrays;

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
 */
public record SpecialTokens(int bos, int eos, int eot, int eom, int pad, int unk, boolean addBos, boolean addEos) {

    /** Ids that end generation unless {@code ignore_eos}: EOS, EOT and EOM, without -1 and duplicates. */
    public int[] stopIds() {
        return Arrays.stream(new int[] {eos, eot, eom}).filter(id -> id >= 0).distinct().toArray();
    }
}
