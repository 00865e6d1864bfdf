package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import io.strata.spi.DeviceInfo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Checked wrappers over {@link CudaNative}: every non-zero code becomes a {@link CudaException}. */
public final class CudaRuntime {
    private CudaRuntime() {
    }

    /**
     * Throws for a non-zero code, after resetting the thread's last CUDA error: the failure is reported here
     * once, and must not resurface in the next kernel launch's check (a refused allocation, for example).
     */
    public static void check(int code, String what) {
        if (code != 0) {
            String text = what + ": " + message(code);
            CudaNative.strata_cuda_clear_error();
            throw new CudaException(code, text);
        }
    }

    /** e.g. "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver, error 35)". */
    public static String message(int code) {
        NativeLibrary.require();
        String text = CudaNative.strata_cuda_error_string(code).getString();
        String name = CudaNative.strata_cuda_error_name(code).getString();
        return text + " (" + name + ", error " + code + ")";
    }

    public static int deviceCount() {
        NativeLibrary.require();
        int[] n = new int[1];
        check(CudaNative.strata_cuda_device_count(n), "cudaGetDeviceCount");
        return n[0];
    }

    public static List<DeviceInfo> devices() {
        int n = deviceCount();
        List<DeviceInfo> out = new ArrayList<>(n);
        for (int d = 0; d < n; d++) {
            byte[] name = new byte[256];
            long[] total = new long[1], free = new long[1];
            int[] major = new int[1], minor = new int[1], sms = new int[1], drv = new int[1], rt = new int[1];
            check(CudaNative.strata_cuda_device_info(d, name, name.length, total, free, major, minor, sms, drv, rt),
                    "cudaGetDeviceProperties(" + d + ")");
            int len = 0;
            while (len < name.length && name[len] != 0) {
                len++;
            }
            out.add(new DeviceInfo(d, new String(name, 0, len, StandardCharsets.UTF_8), total[0], free[0], Map.of(
                    "computeCapability", major[0] + "." + minor[0],
                    "multiprocessors", Integer.toString(sms[0]),
                    "driverVersion", version(drv[0]),
                    "runtimeVersion", version(rt[0]))));
        }
        return out;
    }

    private static String version(int v) {
        return (v / 1000) + "." + (v % 1000) / 10;
    }
}
