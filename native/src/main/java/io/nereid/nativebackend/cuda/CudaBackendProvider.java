package io.nereid.nativebackend.cuda;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import java.util.Optional;

/**
 * {@code --backend cuda}: the CUDA backend on device {@code NEREID_CUDA_DEVICE} (default 0), through the
 * driver, NVRTC and cuBLAS bound with FFM ({@link CudaDriver} says why not JavaCPP). Nothing native is
 * touched until {@link #unavailableReason} or {@link #open} is called.
 */
public final class CudaBackendProvider implements BackendProvider {

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public Optional<String> unavailableReason() {
        return Optional.ofNullable(CudaDriver.unavailableReason());
    }

    @Override
    public Backend open(BackendConfig config) {
        CudaDriver driver;
        try {
            driver = CudaDriver.load();
        } catch (CudaException e) {
            throw new IllegalArgumentException("the CUDA backend cannot run here: " + e.getMessage(), e);
        }
        int ordinal = deviceOrdinal(System.getenv("NEREID_CUDA_DEVICE"));
        if (ordinal >= driver.deviceCount()) {
            throw new IllegalArgumentException("NEREID_CUDA_DEVICE=" + ordinal + " but the driver sees "
                    + driver.deviceCount() + " device(s)");
        }
        CudaBackend b = new CudaBackend(config, driver, driver.device(ordinal));
        System.err.println("nereid cuda: " + b.describe());
        return b;
    }

    static int deviceOrdinal(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("NEREID_CUDA_DEVICE must be a device number (0, 1, ...), got '" + value + "'");
    }
}
