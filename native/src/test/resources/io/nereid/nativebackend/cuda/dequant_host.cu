// A CPU program made of kernels.cu's weight decoders (compiled for the host by nvcc): decodes every
// 32-value group of ROWS rows of COLS values of type TYPE (a GGML type id) from IN, writes floats to OUT.
// usage: dequant_host TYPE ROWS COLS ROW_BYTES IN OUT
#include "kernels.cu"
#include <cstdio>
#include <cstdlib>
#include <vector>

template <int T>
static void decode(const u8* data, long long rowBytes, int rows, int cols, float* out) {
    for (int r = 0; r < rows; r++) {
        for (int g = 0; g < cols / 32; g++) {
            load_group<T>(data + rowBytes * r, g, out + (long long) r * cols + 32 * g);
        }
    }
}

int main(int argc, char** argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: dequant_host TYPE ROWS COLS ROW_BYTES IN OUT\n");
        return 2;
    }
    int type = atoi(argv[1]), rows = atoi(argv[2]), cols = atoi(argv[3]);
    long long rowBytes = atoll(argv[4]);
    std::vector<u8> in(rowBytes * rows);
    FILE* f = fopen(argv[5], "rb");
    if (!f || fread(in.data(), 1, in.size(), f) != in.size()) return 3;
    fclose(f);
    std::vector<float> out((size_t) rows * cols);
    switch (type) {
        case TYPE_F32: decode<TYPE_F32>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_F16: decode<TYPE_F16>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_BF16: decode<TYPE_BF16>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_Q8_0: decode<TYPE_Q8_0>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_Q4_0: decode<TYPE_Q4_0>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_Q4_K: decode<TYPE_Q4_K>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_Q5_K: decode<TYPE_Q5_K>(in.data(), rowBytes, rows, cols, out.data()); break;
        case TYPE_Q6_K: decode<TYPE_Q6_K>(in.data(), rowBytes, rows, cols, out.data()); break;
        default: fprintf(stderr, "type %d\n", type); return 4;
    }
    FILE* o = fopen(argv[6], "wb");
    if (!o || fwrite(out.data(), sizeof(float), out.size(), o) != out.size()) return 5;
    fclose(o);
    return 0;
}
