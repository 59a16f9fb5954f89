/* The limit for batched hand analysis (benchmarks/bench_batch.py): the same dense tables
 * as fangcheng.analysis.batch, read by the plainest C loops, no input checks, no Python.
 * Usage: limit DIR REPEAT. DIR holds the tables and hands bench_batch.py wrote; prints
 * the best CPU nanoseconds per hand of REPEAT runs for the win check (standard form),
 * standard shanten and the standard waits mask (34 bytes per hand). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *slurp(const char *dir, const char *name, long *size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(*size);
    if (fread(buf, 1, *size, f) != (size_t)*size) exit(1);
    fclose(f);
    return buf;
}

static const long P5[9] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625};

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const char *dir = argv[1];
    int repeat = atoi(argv[2]);
    long size, n13, n14;
    const int32_t *suit = slurp(dir, "suit", &size), *hon = slurp(dir, "honours", &size);
    const int32_t *sw = slurp(dir, "suit_waits", &size), *hw = slurp(dir, "honour_waits", &size);
    const int32_t *two = slurp(dir, "two_suits", &size), *pairs = slurp(dir, "pairs", &size);
    const int16_t *final = slurp(dir, "final", &size);
    const int32_t *dims = slurp(dir, "dims", &size); /* n_suit, n_honours, size */
    const uint8_t *h13 = slurp(dir, "hands13", &n13), *h14 = slurp(dir, "hands14", &n14);
    n13 /= 34;
    n14 /= 34;
    uint8_t *out = malloc(n13 * 34);
    long sink = 0;
    double best[3] = {1e9, 1e9, 1e9};
    for (int r = 0; r < repeat; r++) {
        double t = cpu();
        for (long i = 0; i < n14; i++) {
            const uint8_t *h = h14 + 34 * i;
            long k[4] = {0, 0, 0, 0};
            for (int c = 0; c < 4; c++)
                for (int j = 0; j < (c == 3 ? 7 : 9); j++) k[c] += h[9 * c + j] * P5[j];
            int code = (suit[k[0]] + suit[k[1]] + suit[k[2]] + hon[k[3]]) & 1023;
            sink += code == 65;
        }
        double w = (cpu() - t) / n14;
        t = cpu();
        for (long i = 0; i < n13; i++) {
            const uint8_t *h = h13 + 34 * i;
            long k[4] = {0, 0, 0, 0};
            for (int c = 0; c < 4; c++)
                for (int j = 0; j < (c == 3 ? 7 : 9); j++) k[c] += h[9 * c + j] * P5[j];
            int32_t a = suit[k[0]], b = suit[k[1]], c = suit[k[2]], d = hon[k[3]];
            long tw = two[(long)(a >> 16) * dims[0] + (b >> 16)];
            long jo = pairs[(long)(c >> 16) * dims[1] + (d >> 16)];
            sink += final[(tw * dims[2] + jo) * 5 + 4] - 1;
        }
        double s = (cpu() - t) / n13;
        t = cpu();
        for (long i = 0; i < n13; i++) {
            const uint8_t *h = h13 + 34 * i;
            uint8_t *o = out + 34 * i;
            long k[4] = {0, 0, 0, 0};
            for (int c = 0; c < 4; c++)
                for (int j = 0; j < (c == 3 ? 7 : 9); j++) k[c] += h[9 * c + j] * P5[j];
            int32_t wd[4] = {sw[k[0]], sw[k[1]], sw[k[2]], hw[k[3]]};
            int shorts = 0, total = 0, at = 0;
            for (int c = 0; c < 4; c++) {
                total += wd[c] & 3;
                if ((wd[c] & 3) == 2) shorts++, at = c;
            }
            int32_t bits[4] = {0, 0, 0, 0};
            if (shorts == 1 && total - 2 <= 1)
                bits[at] = (wd[at] >> (total - 2 ? 2 : 11)) & 511;
            else if (shorts == 0 && total == 2)
                for (int c = 0; c < 4; c++)
                    if (wd[c] & 3) bits[c] = (wd[c] >> 2) & 511;
            for (int c = 0; c < 4; c++)
                for (int j = 0; j < (c == 3 ? 7 : 9); j++) o[9 * c + j] = (bits[c] >> j) & 1;
        }
        double v = (cpu() - t) / n13;
        for (long i = 0; i < n13 * 34; i++) sink += out[i];
        if (w < best[0]) best[0] = w;
        if (s < best[1]) best[1] = s;
        if (v < best[2]) best[2] = v;
    }
    printf("%.1f %.1f %.1f %ld\n", best[0] * 1e9, best[1] * 1e9, best[2] * 1e9, sink);
    return 0;
}
