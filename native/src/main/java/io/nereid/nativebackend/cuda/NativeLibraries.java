package io.nereid.nativebackend.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds and opens a shared library of the CUDA stack ({@code libcuda.so.1}, {@code libnvrtc.so.13},
 * {@code libcublas.so.13}, ...) for FFM downcalls, and binds its functions by name.
 *
 * <p>Where it looks, in order: the directories of {@code NEREID_CUDA_LIB_PATH} (colon-separated), the
 * dynamic linker's own search ({@code LD_LIBRARY_PATH}, ld.so.cache), then {@code $CUDA_HOME/lib64},
 * {@code /usr/local/cuda/lib64} and {@code /usr/local/cuda/targets/x86_64-linux/lib}. Each library is
 * tried under several sonames (CUDA 13 first, then 12, then the unversioned development link).
 */
final class NativeLibraries {

    private static final Linker LINKER = Linker.nativeLinker();

    private NativeLibraries() {
    }

    /** An opened library: its lookup and the file or soname it was found as. */
    record Library(SymbolLookup lookup, String foundAs) {

        /** A downcall to {@code name}, or an {@link UnsatisfiedLinkError} naming the library and the symbol. */
        MethodHandle function(String name, FunctionDescriptor descriptor) {
            MemorySegment symbol = lookup.find(name).orElseThrow(() ->
                    new UnsatisfiedLinkError(foundAs + " has no symbol " + name));
            return LINKER.downcallHandle(symbol, descriptor);
        }
    }

    /** Directories of a colon-separated list (NEREID_CUDA_LIB_PATH), searched before the dynamic linker. */
    static List<Path> userDirectories(String libPathVariable) {
        List<Path> dirs = new ArrayList<>();
        if (libPathVariable != null) {
            for (String d : libPathVariable.split(":")) {
                if (!d.isBlank()) {
                    dirs.add(Path.of(d));
                }
            }
        }
        return dirs;
    }

    /** Where the CUDA toolkit keeps its libraries, searched after the dynamic linker. */
    static List<Path> toolkitDirectories(String cudaHome) {
        List<Path> dirs = new ArrayList<>();
        if (cudaHome != null && !cudaHome.isBlank()) {
            dirs.add(Path.of(cudaHome, "lib64"));
        }
        dirs.add(Path.of("/usr/local/cuda/lib64"));
        dirs.add(Path.of("/usr/local/cuda/targets/x86_64-linux/lib"));
        return dirs;
    }

    /**
     * Opens the first of {@code sonames} found, for the life of the JVM: in the user's directories, then by
     * the dynamic linker, then in the toolkit's directories. Empty, with every place tried added to
     * {@code tried}, when none opens.
     */
    static Optional<Library> open(List<String> sonames, List<String> tried) {
        for (Path dir : userDirectories(System.getenv("NEREID_CUDA_LIB_PATH"))) {
            for (String soname : sonames) {
                Optional<Library> l = tryFile(dir.resolve(soname), tried);
                if (l.isPresent()) {
                    return l;
                }
            }
        }
        for (String soname : sonames) {
            tried.add(soname);
            try {
                return Optional.of(new Library(SymbolLookup.libraryLookup(soname, Arena.global()), soname));
            } catch (IllegalArgumentException notFound) {
                // the next name
            }
        }
        for (Path dir : toolkitDirectories(System.getenv("CUDA_HOME"))) {
            for (String soname : sonames) {
                Optional<Library> l = tryFile(dir.resolve(soname), tried);
                if (l.isPresent()) {
                    return l;
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Library> tryFile(Path file, List<String> tried) {
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        tried.add(file.toString());
        try {
            return Optional.of(new Library(SymbolLookup.libraryLookup(file, Arena.global()), file.toString()));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
