/**
 * The paged KV-cache block manager (vLLM's {@code KVCacheManager} and {@code BlockPool}):
 * {@link io.nereid.kvcache.KvCacheManager} is what the scheduler talks to,
 * {@link io.nereid.kvcache.BlockTable} maps one sequence's token positions to physical blocks,
 * {@link io.nereid.kvcache.BlockPool} keeps reference counts, the free queue and the prefix cache
 * of full blocks under a keyed hash ({@link io.nereid.kvcache.BlockHasher}), and
 * {@link io.nereid.kvcache.BlockCopy} is a copy-on-write the backend must perform.
 *
 * <p>It deals in block ids and token ids only: the K/V tensors themselves belong to the backend,
 * which sizes its storage by {@link io.nereid.kvcache.KvCacheConfig#numBlocks()} and
 * {@link io.nereid.kvcache.KvCacheConfig#blockSize()} and performs the copies it is handed.
 *
 * <p>Threading: not thread-safe; everything here is owned by the engine thread, except the
 * immutable {@link io.nereid.kvcache.KvCacheStats} snapshots, which may go to any thread.
 * Depends on the JDK only (checked by {@code ArchitectureTest}).
 */
package io.nereid.kvcache;
