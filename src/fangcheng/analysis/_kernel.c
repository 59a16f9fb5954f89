/* The compiled kernel of fangcheng.analysis.batch: the same dense tables, read by plain
 * C loops over a batch of N x 34 count rows. Optional: the package builds it from source
 * when the machine has a compiler, and batch.py falls back to numpy without it.
 *
 * The tables are handed over once per honours kind by load(); every other call takes
 * the kind, the Shapes flags (1 seven pairs, 2 quads as two pairs, 4 thirteen orphans,
 * the dragon set being the kind), contiguous input and output buffers, and returns -1,
 * or the first row a per-hand function would refuse (batch.py then names the error).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define KINDS 34
#define NO_CHANGE 99
#define INCOMPLETE 2
#define W0_SHIFT 2
#define W1_SHIFT 11
#define ID_SHIFT 16

enum { SUIT, SUIT_WAITS, HON, HON_WAITS, TWO, PAIRS, FINAL, N_TABLES };

typedef struct {
    Py_buffer view[N_TABLES];
    const int32_t *suit, *suit_waits, *hon, *hon_waits, *two, *pairs;
    const int16_t *final;
    long n_suit, n_hon, size;
    int loaded;
} Kind;

static Kind kinds[2];

static const long P5[9] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625};
static const int ORPHANS[13] = {0, 9, 18, 8, 17, 26, 27, 28, 29, 30, 31, 32, 33};

static PyObject *load(PyObject *self, PyObject *args) {
    int which;
    PyObject *obj[N_TABLES];
    long n_suit, n_hon, size;
    if (!PyArg_ParseTuple(args, "iOOOOOOOlll", &which, &obj[0], &obj[1], &obj[2], &obj[3],
                          &obj[4], &obj[5], &obj[6], &n_suit, &n_hon, &size))
        return NULL;
    if (which < 0 || which > 1) {
        PyErr_SetString(PyExc_ValueError, "kind is 0 or 1");
        return NULL;
    }
    Kind *k = &kinds[which];
    if (k->loaded) Py_RETURN_NONE;
    for (int i = 0; i < N_TABLES; i++) {
        if (PyObject_GetBuffer(obj[i], &k->view[i], PyBUF_C_CONTIGUOUS) < 0) {
            for (int j = 0; j < i; j++) PyBuffer_Release(&k->view[j]);
            return NULL;
        }
    }
    k->suit = k->view[SUIT].buf;
    k->suit_waits = k->view[SUIT_WAITS].buf;
    k->hon = k->view[HON].buf;
    k->hon_waits = k->view[HON_WAITS].buf;
    k->two = k->view[TWO].buf;
    k->pairs = k->view[PAIRS].buf;
    k->final = k->view[FINAL].buf;
    k->n_suit = n_suit;
    k->n_hon = n_hon;
    k->size = size;
    k->loaded = 1;
    Py_RETURN_NONE;
}

/* A row's tile count, or -1 if no per-hand function would take it. */
static inline int count_of(const uint8_t *h, int rest) {
    int n = 0;
    for (int t = 0; t < KINDS; t++) {
        if (h[t] > 4) return -1;
        n += h[t];
    }
    if (n > 14 || !((rest >> (n % 3)) & 1)) return -1;
    return n;
}

static inline void keys_of(const uint8_t *h, long key[4]) {
    for (int c = 0; c < 4; c++) {
        const uint8_t *p = h + 9 * c;
        int faces = c == 3 ? 7 : 9;
        long v = 0;
        for (int j = 0; j < faces; j++) v += p[j] * P5[j];
        key[c] = v;
    }
}

static inline int standard(const Kind *k, const long key[4], int n) {
    int32_t a = k->suit[key[0]], b = k->suit[key[1]], c = k->suit[key[2]], d = k->hon[key[3]];
    long two = k->two[(long)(a >> ID_SHIFT) * k->n_suit + (b >> ID_SHIFT)];
    long joined = k->pairs[(long)(c >> ID_SHIFT) * k->n_hon + (d >> ID_SHIFT)];
    return k->final[(two * k->size + joined) * 5 + n / 3] - 1;
}

static inline int seven_pairs(const uint8_t *h, int quad_pairs) {
    int pairs = 0, held = 0, quads = 0;
    for (int t = 0; t < KINDS; t++) {
        pairs += h[t] >= 2;
        held += h[t] > 0;
        quads += h[t] == 4;
    }
    if (quad_pairs) return 6 - pairs - quads;
    return 6 - pairs + (held < 7 ? 7 - held : 0);
}

static inline int thirteen_orphans(const uint8_t *h) {
    int missing = 0, paired = 0;
    for (int i = 0; i < 13; i++) {
        missing += h[ORPHANS[i]] == 0;
        paired |= h[ORPHANS[i]] >= 2;
    }
    return missing - paired;
}

/* The least shanten over the allowed forms; each form's into std/pairs/orphans if given. */
static inline int least(const Kind *k, int flags, const uint8_t *h, const long key[4], int n,
                        int8_t *std, int8_t *pairs, int8_t *orphans) {
    int best = standard(k, key, n), p = NO_CHANGE, o = NO_CHANGE;
    if (std) *std = (int8_t)best;
    if (n >= 13) {
        if (flags & 1) p = seven_pairs(h, flags & 2);
        if (flags & 4) o = thirteen_orphans(h);
    }
    if (pairs) *pairs = (int8_t)p;
    if (orphans) *orphans = (int8_t)o;
    if (p < best) best = p;
    if (o < best) best = o;
    return best;
}

typedef struct {
    Py_buffer in, out[4];
    int outs;
} Bufs;

static void release(Bufs *b) {
    PyBuffer_Release(&b->in);
    for (int i = 0; i < b->outs; i++) PyBuffer_Release(&b->out[i]);
}

static int get(Bufs *b, PyObject *in, PyObject **out, int outs) {
    b->outs = 0;
    if (PyObject_GetBuffer(in, &b->in, PyBUF_C_CONTIGUOUS) < 0) return -1;
    for (int i = 0; i < outs; i++) {
        if (PyObject_GetBuffer(out[i], &b->out[i], PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
            release(b);
            return -1;
        }
        b->outs++;
    }
    return 0;
}

static Kind *kind_of(int which) {
    if (which < 0 || which > 1 || !kinds[which].loaded) {
        PyErr_SetString(PyExc_RuntimeError, "kernel tables not loaded");
        return NULL;
    }
    return &kinds[which];
}

/* shanten(kind, flags, rest, hands, least, standard, pairs, orphans) -> bad row or -1 */
static PyObject *shanten(PyObject *self, PyObject *args) {
    int which, flags, rest;
    PyObject *in, *out[4];
    if (!PyArg_ParseTuple(args, "iiiOOOOO", &which, &flags, &rest, &in, &out[0], &out[1],
                          &out[2], &out[3]))
        return NULL;
    Kind *k = kind_of(which);
    Bufs b;
    if (!k || get(&b, in, out, 4) < 0) return NULL;
    Py_ssize_t rows = b.in.len / KINDS, bad = -1;
    const uint8_t *h = b.in.buf;
    int8_t *lo = b.out[0].buf, *st = b.out[1].buf, *pa = b.out[2].buf, *orph = b.out[3].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++, h += KINDS) {
        int n = count_of(h, rest);
        if (n < 0) {
            bad = r;
            break;
        }
        long key[4];
        keys_of(h, key);
        lo[r] = (int8_t)least(k, flags, h, key, n, st + r, pa + r, orph + r);
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

/* is_win(kind, flags, hands, out) -> bad row or -1: the standard form by the win codes
 * of the four components' entries, the other forms only when that fails. */
static PyObject *is_win(PyObject *self, PyObject *args) {
    int which, flags;
    PyObject *in, *out;
    if (!PyArg_ParseTuple(args, "iiOO", &which, &flags, &in, &out)) return NULL;
    Kind *k = kind_of(which);
    Bufs b;
    if (!k || get(&b, in, &out, 1) < 0) return NULL;
    Py_ssize_t rows = b.in.len / KINDS, bad = -1;
    const uint8_t *h = b.in.buf;
    uint8_t *o = b.out[0].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++, h += KINDS) {
        int n = count_of(h, 4);
        if (n < 0) {
            bad = r;
            break;
        }
        long key[4];
        keys_of(h, key);
        int code = (k->suit[key[0]] + k->suit[key[1]] + k->suit[key[2]] + k->hon[key[3]]) & 1023;
        int win = code == 16 * (n / 3) + 1;
        if (!win && n == 14) {
            win = ((flags & 1) && seven_pairs(h, flags & 2) < 0) ||
                  ((flags & 4) && thirteen_orphans(h) < 0);
        }
        o[r] = (uint8_t)win;
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

/* waits(kind, flags, hands, out N x 34) -> bad row or -1 */
static PyObject *waits(PyObject *self, PyObject *args) {
    int which, flags;
    PyObject *in, *out;
    if (!PyArg_ParseTuple(args, "iiOO", &which, &flags, &in, &out)) return NULL;
    Kind *k = kind_of(which);
    Bufs b;
    if (!k || get(&b, in, &out, 1) < 0) return NULL;
    Py_ssize_t rows = b.in.len / KINDS, bad = -1;
    const uint8_t *h = b.in.buf;
    uint8_t *o = b.out[0].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++, h += KINDS, o += KINDS) {
        int n = count_of(h, 2);
        if (n < 0) {
            bad = r;
            break;
        }
        memset(o, 0, KINDS);
        long key[4];
        keys_of(h, key);
        int32_t w[4] = {k->suit_waits[key[0]], k->suit_waits[key[1]], k->suit_waits[key[2]],
                        k->hon_waits[key[3]]};
        int short_ = 0, total = 0, which_short = 0;
        for (int c = 0; c < 4; c++) {
            int code = w[c] & 3;
            total += code;
            if (code == INCOMPLETE) {
                short_++;
                which_short = c;
            }
        }
        int32_t bits[4] = {0, 0, 0, 0};
        if (short_ == 1 && total - INCOMPLETE <= 1) {
            bits[which_short] =
                (w[which_short] >> (total - INCOMPLETE ? W0_SHIFT : W1_SHIFT)) & 511;
        } else if (short_ == 0 && total == 2) {
            for (int c = 0; c < 4; c++)
                if (w[c] & 3) bits[c] = (w[c] >> W0_SHIFT) & 511;
        }
        for (int c = 0; c < 4; c++) {
            int faces = c == 3 ? 7 : 9;
            for (int j = 0; j < faces; j++) o[9 * c + j] = (bits[c] >> j) & 1;
        }
        if (n != 13) continue;
        if (flags & 1) {
            int odd = 0, at = 0, three_or_four = 0;
            for (int t = 0; t < KINDS; t++) {
                if (h[t] & 1) {
                    odd++;
                    at = t;
                }
                three_or_four |= h[t] >= 3;
            }
            if (odd == 1 && ((flags & 2) || !three_or_four)) o[at] = 1;
        }
        if (flags & 4) {
            int missing = 0, sum = 0, at = 0;
            for (int i = 0; i < 13; i++) {
                int c = h[ORPHANS[i]];
                sum += c;
                if (!c) {
                    missing++;
                    at = ORPHANS[i];
                }
            }
            if (sum == 13 && missing == 0)
                for (int i = 0; i < 13; i++) o[ORPHANS[i]] = 1;
            else if (sum == 13 && missing == 1)
                o[at] = 1;
        }
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

/* after(kind, flags, step, hands, out N x 34 int8) -> bad row or -1: the least shanten
 * after one more (step 1) or one fewer (-1) of each face; only the changed face's
 * component key moves. */
static PyObject *after(PyObject *self, PyObject *args) {
    int which, flags, step;
    PyObject *in, *out;
    if (!PyArg_ParseTuple(args, "iiiOO", &which, &flags, &step, &in, &out)) return NULL;
    Kind *k = kind_of(which);
    Bufs b;
    if (!k || get(&b, in, &out, 1) < 0) return NULL;
    Py_ssize_t rows = b.in.len / KINDS, bad = -1;
    const uint8_t *h = b.in.buf;
    int8_t *o = b.out[0].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++, h += KINDS, o += KINDS) {
        int n = count_of(h, step == 1 ? 2 : 4);
        if (n < 0) {
            bad = r;
            break;
        }
        uint8_t hh[KINDS];
        memcpy(hh, h, KINDS);
        long key[4];
        keys_of(h, key);
        for (int t = 0; t < KINDS; t++) {
            if ((step == 1 && h[t] == 4) || (step == -1 && h[t] == 0)) {
                o[t] = NO_CHANGE;
                continue;
            }
            int c = t / 9;
            long moved = step * P5[t - 9 * c];
            key[c] += moved;
            hh[t] = (uint8_t)(hh[t] + step);
            o[t] = (int8_t)least(k, flags, hh, key, n + step, NULL, NULL, NULL);
            hh[t] = h[t];
            key[c] -= moved;
        }
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

static PyMethodDef methods[] = {
    {"load", load, METH_VARARGS, "Hand one honours kind's dense tables to the kernel."},
    {"shanten", shanten, METH_VARARGS, "Least and per-form shanten of a batch."},
    {"is_win", is_win, METH_VARARGS, "Win check of a batch."},
    {"waits", waits, METH_VARARGS, "Waits mask of a batch."},
    {"after", after, METH_VARARGS, "Shanten after each draw or discard of a batch."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
