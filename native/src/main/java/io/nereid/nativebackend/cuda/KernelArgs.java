package io.nereid.nativebackend.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The {@code void** kernelParams} of {@code cuLaunchKernel}, reused for every launch (the driver copies
 * the values when it queues the launch): up to {@link #MAX} arguments of 8 bytes each and the array of
 * pointers to them. Device pointers are {@code long}s. Engine thread only.
 */
final class KernelArgs {

    static final int MAX = 24;

    private final MemorySegment values;
    private final MemorySegment pointers;
    private int count;

    KernelArgs(Arena arena) {
        values = arena.allocate(8L * MAX, 8);
        pointers = arena.allocate(ADDRESS, MAX);
        for (int i = 0; i < MAX; i++) {
            pointers.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
        }
    }

    KernelArgs reset() {
        count = 0;
        return this;
    }

    KernelArgs ptr(long devicePointer) {
        values.set(JAVA_LONG, slot(), devicePointer);
        return this;
    }

    KernelArgs i64(long v) {
        values.set(JAVA_LONG, slot(), v);
        return this;
    }

    KernelArgs i32(int v) {
        values.set(JAVA_INT, slot(), v);
        return this;
    }

    KernelArgs f32(float v) {
        values.set(JAVA_FLOAT, slot(), v);
        return this;
    }

    int count() {
        return count;
    }

    MemorySegment pointers() {
        return pointers;
    }

    private long slot() {
        if (count == MAX) {
            throw new IllegalStateException("more than " + MAX + " kernel arguments");
        }
        return 8L * count++;
    }
}
