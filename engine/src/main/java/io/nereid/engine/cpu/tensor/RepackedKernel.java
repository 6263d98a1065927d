package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.mmap.HugePages;
import java.lang.foreign.MemorySegment;

/**
 * The vector kernel of a format whose own layout decodes slowly (Q4_K, Q5_K, Q6_K): it computes
 * from a copy in a faster layout, made by {@code packer} and read by {@code packed}.
 * {@link #bind} packs a matrix once, off-heap, which is how {@link WeightMatrix} uses it; a direct
 * call on the format's own bytes (the tests, a one-off decode) packs that run to the heap first
 * and is not meant for a hot path.
 *
 * <p>Stateless and thread-safe, as the kernel it wraps.
 */
final class RepackedKernel implements RowKernel {

    /** Writes {@code blocks} blocks of the format at {@code src} to {@code dst} in the packed layout. */
    interface Packer {
        void pack(MemorySegment src, long blocks, MemorySegment dst);
    }

    private final GgmlType type;
    private final RowKernel packed;
    private final int packedBlockBytes;
    private final Packer packer;

    RepackedKernel(GgmlType type, RowKernel packed, int packedBlockBytes, Packer packer) {
        this.type = type;
        this.packed = packed;
        this.packedBlockBytes = packedBlockBytes;
        this.packer = packer;
    }

    @Override
    public GgmlType type() {
        return type;
    }

    /** The matrix packed into a new off-heap segment (freed when it is no longer reachable), for {@code packed}. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        MemorySegment copy = HugePages.allocate(blocks * packedBlockBytes);
        packer.pack(data, blocks, copy);
        return new Bound(packed, copy, packedBlockBytes);
    }

    /** The {@code n} weights at {@code offset} packed to the heap. */
    private MemorySegment packRun(MemorySegment w, long offset, int n) {
        long blocks = n / type.blockSize();
        MemorySegment copy = MemorySegment.ofArray(new byte[Math.toIntExact(blocks * packedBlockBytes)]);
        packer.pack(w.asSlice(offset, blocks * type.bytesPerBlock()), blocks, copy);
        return copy;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        return packed.dot(packRun(w, offset, n), 0, x, xOff, n);
    }

    @Override
    public float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        return packed.dotFast(packRun(w, offset, n), 0, x, xOff, n);
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        packed.dot4Tokens(packRun(w, offset, n), 0, x, xOff, xStride, n, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        packed.dequantize(packRun(w, offset, n), 0, dst, dstOff, n);
    }
}
