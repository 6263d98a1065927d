package io.nereid.kvcache;

/**
 * Thrown when an operation needs more blocks than the pool has free (free includes cached blocks
 * that may be evicted). Nothing was changed when it is thrown. The engine checks
 * {@link KvCacheManager#canAppend} first and preempts instead; seeing this is a scheduler bug.
 */
public final class NoFreeBlocksException extends RuntimeException {

    private final int needed;
    private final int free;

    public NoFreeBlocksException(int needed, int free) {
        super("KV cache: " + needed + " block(s) needed but only " + free + " free");
        this.needed = needed;
        this.free = free;
    }

    public int needed() {
        return needed;
    }

    public int free() {
        return free;
    }
}
