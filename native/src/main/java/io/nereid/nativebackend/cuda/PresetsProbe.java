package io.nereid.nativebackend.cuda;

import static io.nereid.nativebackend.cuda.DeviceCheck.q;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether the JavaCPP CUDA presets that DESIGN.md names would work on this machine: the evidence behind
 * binding the driver API, NVRTC and cuBLAS with FFM instead ({@link CudaDriver} says why). Reflection
 * only: the presets are no dependency of the backend; {@code check.sh} puts their jars on the class path
 * of this one command ({@code DeviceCheck presets}).
 *
 * <p>Loads the {@code cudart}, {@code nvrtc} and {@code cublas} preset classes (each loads its JNI
 * library, which links {@code libcudart.so.13}, {@code libnvrtc.so.13}, {@code libcublas.so.13} and
 * {@code libcublasLt.so.13}) and calls {@code cudaRuntimeGetVersion}, {@code cudaDriverGetVersion},
 * {@code cudaGetDeviceCount}, {@code nvrtcVersion} and {@code cublasCreate_v2} / {@code cublasDestroy_v2}.
 * With {@code --call NAME} it also calls that {@code cudart} function with null arguments: a function
 * newer than the installed runtime (the 1.5.14 presets are built for CUDA 13.3 and reference 27 runtime
 * functions that 13.0 lacks) is resolved only when called, and then the dynamic linker ends the process,
 * which no Java code can catch.
 */
final class PresetsProbe {

    private PresetsProbe() {
    }

    /** One line on stdout, and the JSON. */
    static String run(java.util.Map<String, String> options) {
        List<String> fields = new ArrayList<>();
        List<String> line = new ArrayList<>();
        String presets = version();
        fields.add(q("presets") + ":" + q(presets));
        line.add("JavaCPP CUDA presets " + presets + ":");
        Class<?> cudart = load("org.bytedeco.cuda.global.cudart", "cudart", fields, line);
        if (cudart != null) {
            fields.add(q("runtime_version") + ":" + intCall(cudart, "cudaRuntimeGetVersion", line));
            fields.add(q("driver_version") + ":" + intCall(cudart, "cudaDriverGetVersion", line));
            fields.add(q("device_count") + ":" + intCall(cudart, "cudaGetDeviceCount", line));
        }
        Class<?> nvrtc = load("org.bytedeco.cuda.global.nvrtc", "nvrtc", fields, line);
        if (nvrtc != null) {
            try {
                int[] major = new int[1];
                int[] minor = new int[1];
                int status = (int) nvrtc.getMethod("nvrtcVersion", int[].class, int[].class).invoke(null, major, minor);
                String v = status == 0 ? major[0] + "." + minor[0] : "status " + status;
                fields.add(q("nvrtc_version") + ":" + q(v));
                line.add("nvrtcVersion " + v);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                fields.add(q("nvrtc_version") + ":" + q(describe(e)));
                line.add("nvrtcVersion failed: " + describe(e));
            }
        }
        Class<?> cublas = load("org.bytedeco.cuda.global.cublas", "cublas", fields, line);
        if (cublas != null) {
            try {
                Class<?> handleType = Class.forName("org.bytedeco.cuda.cublas.cublasContext");
                Object handle = handleType.getConstructor().newInstance();
                int status = (int) cublas.getMethod("cublasCreate_v2", handleType).invoke(null, handle);
                if (status == 0) {
                    cublas.getMethod("cublasDestroy_v2", handleType).invoke(null, handle);
                }
                fields.add(q("cublas_create") + ":" + status);
                line.add("cublasCreate_v2 status " + status);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                fields.add(q("cublas_create") + ":" + q(describe(e)));
                line.add("cublasCreate_v2 failed: " + describe(e));
            }
        }
        String call = options.get("--call");
        if (call != null && cudart != null) {
            System.out.println("calling cudart " + call + " (a function the runtime may lack)");
            System.out.flush();
            try {
                Method m = null;
                for (Method candidate : cudart.getMethods()) {
                    if (candidate.getName().equals(call) && (m == null || candidate.getParameterCount() < m.getParameterCount())) {
                        m = candidate;
                    }
                }
                if (m == null) {
                    throw new NoSuchMethodException(call);
                }
                Object[] nulls = new Object[m.getParameterCount()];
                for (int i = 0; i < nulls.length; i++) {
                    Class<?> p = m.getParameterTypes()[i];
                    if (p == int.class) {
                        nulls[i] = 0;
                    } else if (p == long.class) {
                        nulls[i] = 0L;
                    }
                }
                Object status = m.invoke(null, nulls);
                fields.add(q("call") + ":" + q(call + " returned " + status));
                line.add(call + " returned " + status);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                fields.add(q("call") + ":" + q(call + " failed: " + describe(e)));
                line.add(call + " failed: " + describe(e));
            }
        }
        String text = String.join(" ", line);
        System.out.println(text);
        fields.add(q("line") + ":" + q(text));
        return "{" + String.join(",", fields) + "}";
    }

    private static Class<?> load(String name, String key, List<String> fields, List<String> line) {
        try {
            Class<?> c = Class.forName(name);   // its static initializer loads the JNI library
            fields.add(q(key) + ":" + q("loaded"));
            line.add(key + " loaded;");
            return c;
        } catch (ClassNotFoundException e) {
            fields.add(q(key) + ":" + q("not on the class path"));
            line.add(key + " not on the class path;");
        } catch (LinkageError | RuntimeException e) {
            fields.add(q(key) + ":" + q("failed: " + describe(e)));
            line.add(key + " failed: " + describe(e) + ";");
        }
        return null;
    }

    private static String intCall(Class<?> c, String function, List<String> line) {
        try {
            int[] value = new int[1];
            int status = (int) c.getMethod(function, int[].class).invoke(null, (Object) value);
            line.add(function + " " + (status == 0 ? value[0] : "status " + status) + ";");
            return status == 0 ? Integer.toString(value[0]) : q("status " + status);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            line.add(function + " failed: " + describe(e) + ";");
            return q(describe(e));
        }
    }

    private static String version() {
        try {
            Package p = Class.forName("org.bytedeco.javacpp.Loader").getPackage();
            return p.getImplementationVersion() != null ? p.getImplementationVersion() : "(javacpp, version unknown)";
        } catch (ClassNotFoundException e) {
            return "(not on the class path)";
        }
    }

    private static String describe(Throwable e) {
        Throwable t = e instanceof InvocationTargetException i && i.getCause() != null ? i.getCause() : e;
        while (t.getCause() != null && t instanceof ExceptionInInitializerError) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
    }
}
