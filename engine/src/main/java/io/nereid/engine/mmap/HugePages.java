package io.nereid.engine.mmap;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Off-heap memory for the weights' repacked copies (interleaved rows, F16 / BF16 columns, K-quant
 * layouts) and for the weights a kernel reads as the file has them ({@link #copyOf}), backed by
 * transparent huge pages where Linux lets it: the copy is {@code mmap}ped anonymously, advised
 * {@code MADV_HUGEPAGE} before its first touch, and 2 MiB aligned, so that a decode streaming
 * hundreds of MB a token walks a page table entry per 2 MiB rather than per 4 KiB. JDK arenas
 * zero what they allocate, which faults the pages in as 4 KiB ones before any advice could apply,
 * and HotSpot's {@code -XX:+UseTransparentHugePages} covers the Java heap only. Measured on 1.1B
 * Q4_0 (its interleaved copy), decode after a prompt: one thread 10.26 / 10.48 → 11.01 / 11.03
 * tok/s, two threads 19.33 → 20.48 (alternated runs, {@value #PROPERTY} false / true).
 *
 * <p>Elsewhere (another OS, a failed {@code mmap}, {@value #PROPERTY} {@code false}, or under
 * 2 MiB) the memory is an automatic arena's; with advice the kernel refuses (THP {@code never}),
 * the mapping keeps 4 KiB pages. Either way the segment is zeroed, readable and writable, and
 * freed once unreachable. Thread-safe.
 */
public final class HugePages {

    /** System property: {@code false} allocates the copies from an automatic arena (4 KiB pages). */
    public static final String PROPERTY = "nereid.hugepages";

    private static final long HUGE = 2L << 20;
    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x22; // Linux's values
    private static final int MADV_HUGEPAGE = 14;
    private static final int MADV_DONTNEED = 4;
    private static final long PAGE = 4096;
    private static final boolean LINUX = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MMAP = handle("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG));
    private static final MethodHandle MADVISE = handle("madvise", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle MUNMAP = handle("munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

    private HugePages() {}

    private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return LINUX ? LINKER.defaultLookup().find(name).map(a -> LINKER.downcallHandle(a, descriptor)).orElse(null) : null;
    }

    /** Whether copies of at least 2 MiB are mapped for huge pages here. */
    public static boolean mapped() {
        return MMAP != null && MADVISE != null && MUNMAP != null
                && Boolean.parseBoolean(System.getProperty(PROPERTY, "true"));
    }

    /**
     * {@code bytes} of zeroed off-heap memory, freed when the segment is no longer reachable;
     * 2 MiB aligned and advised for huge pages where {@link #mapped()} and {@code bytes >= 2 MiB},
     * else 64-byte aligned.
     *
     * @throws IllegalArgumentException if {@code bytes < 0}
     */
    public static MemorySegment allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes " + bytes + " < 0");
        }
        if (bytes < HUGE || !mapped()) {
            return Arena.ofAuto().allocate(Math.max(1, bytes), 64);
        }
        long size = Math.addExact(bytes, 2 * HUGE - 1) / HUGE * HUGE; // room to align the start
        MemorySegment raw;
        try {
            raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, size, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS,
                    -1, 0L);
        } catch (Throwable t) {
            return Arena.ofAuto().allocate(bytes, 64);
        }
        long base = raw.address();
        if (base == -1L || base == 0L) { // MAP_FAILED
            return Arena.ofAuto().allocate(bytes, 64);
        }
        long aligned = (base + HUGE - 1) / HUGE * HUGE;
        MemorySegment start = MemorySegment.ofAddress(aligned);
        try {
            int ignored = (int) MADVISE.invokeExact(start, size - (aligned - base), MADV_HUGEPAGE); // refused: 4 KiB pages
        } catch (Throwable t) {
            // the advice is only that; the mapping is good either way
        }
        return start.reinterpret(bytes, Arena.ofAuto(), s -> unmap(base, size));
    }

    /**
     * {@code src}'s bytes in memory of {@link #allocate}; where {@code src} is a file mapping, its
     * whole pages are then dropped from this process's page tables ({@code MADV_DONTNEED}: they stay
     * in the page cache, which may reclaim them, and fault back in if read again), so that the copy is
     * not counted twice in the resident size.
     */
    public static MemorySegment copyOf(MemorySegment src) {
        MemorySegment copy = allocate(src.byteSize());
        copy.copyFrom(src);
        if (src.isMapped() && src.isNative() && MADVISE != null) {
            long from = (src.address() + PAGE - 1) / PAGE * PAGE;
            long to = (src.address() + src.byteSize()) / PAGE * PAGE;
            if (to > from) {
                try {
                    int ignored = (int) MADVISE.invokeExact(MemorySegment.ofAddress(from), to - from, MADV_DONTNEED);
                } catch (Throwable t) {
                    // only the resident size is at stake
                }
            }
        }
        return copy;
    }

    private static void unmap(long base, long size) {
        try {
            int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(base), size);
        } catch (Throwable t) {
            // nothing to do at cleanup: the mapping stays until exit
        }
    }
}
