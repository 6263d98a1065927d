package io.nereid.kvcache;

/**
 * A copy-on-write copy the backend must perform before the next forward pass writes K/V:
 * copy slots {@code [0, numSlots)} of block {@code source} into block {@code target}, in every
 * layer, for K and V.
 *
 * @param source   physical block id being shared
 * @param target   freshly allocated physical block id that becomes the writer's private copy
 * @param numSlots filled slots to copy (the rest of the block is about to be written)
 */
public record BlockCopy(int source, int target, int numSlots) {

    public BlockCopy {
        if (source <= BlockPool.NULL_BLOCK || target <= BlockPool.NULL_BLOCK || source == target) {
            throw new IllegalArgumentException("bad copy " + source + " -> " + target);
        }
        if (numSlots <= 0) {
            throw new IllegalArgumentException("numSlots must be positive, got " + numSlots);
        }
    }
}
