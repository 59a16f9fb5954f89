/* The compiled kernel of fangcheng.analysis: the tables of fangcheng.analysis.tables,
 * copied into dense arrays, read by plain C loops, for a batch of N x 34 count rows
 * (batch.py) or one hand of 34 count bytes (hand.py), and the bots' discard measures
 * (players/bots.py: `bot_` below). Optional: the package builds it from source when the
 * machine has a compiler; without it those modules run their own Python code, which is
 * also the kernel's reference (the differential tests).
 *
 * _fast.py hands the tables over once (load_suit, load_honours per honours kind). A
 * batch call takes the kind, the Shapes flags (1 seven pairs, 2 quads as two pairs, 4
 * thirteen orphans; the dragon set is the kind), contiguous input and output buffers,
 * and returns -1, or the first row the per-hand functions would refuse (batch.py then
 * names the error).
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

#define FAR (NO_CHANGE + 1)

/* The tables, dense: each component's counts read as a base-5 number index an array.
 * The suit's are shared; the honours' are per kind (0 plain, 1 with the 中发白 set). */
typedef struct {
    const int32_t *suit, *suit_waits, *hon, *hon_waits, *two, *pairs;
    const uint8_t *final;
    long n_suit, n_hon, size;
    int loaded;
} Kind;

static Kind kinds[2];
static int32_t *suit_entries, *suit_waits_, *two_suits;
static long n_suit_ids;

static const long P5[9] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625};
static const int ORPHANS[13] = {0, 9, 18, 8, 17, 26, 27, 28, 29, 30, 31, 32, 33};

/* The base-5 index (face j's count times 5^j) of each count vector of `faces` faces
 * holding at most 14 tiles, in the order the table file keeps them (tables.configs:
 * lexicographic, the first face most significant); returns how many. */
static long ordinals(int faces, int face, int tiles, long at, long *out, long n) {
    if (face == faces) {
        out[n] = at;
        return n + 1;
    }
    for (int c = 0; c <= 4 && tiles + c <= 14; c++)
        n = ordinals(faces, face + 1, tiles + c, at + c * P5[face], out, n);
    return n;
}

/* A dense copy of one table of the file: `values` (int32) are by config in the file's
 * order, or, with `where` (int32 config ordinals), for those configs only; `fill`
 * elsewhere. */
static int32_t *dense(PyObject *values, PyObject *where, int faces, int32_t fill) {
    Py_buffer v, w = {0};
    if (PyObject_GetBuffer(values, &v, PyBUF_SIMPLE) < 0) return NULL;
    if (where != Py_None && PyObject_GetBuffer(where, &w, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    long size = P5[faces - 1] * 5, count = (long)(v.len / sizeof(int32_t));
    long *order = PyMem_RawMalloc(size * sizeof(long));
    long configs = order ? ordinals(faces, 0, 0, 0, order, 0) : 0;
    int32_t *out = NULL;
    if (!order) {
        PyErr_NoMemory();
    } else if (v.len % sizeof(int32_t) ||
               (where == Py_None ? count != configs : w.len != count * (Py_ssize_t)sizeof(int32_t))) {
        PyErr_SetString(PyExc_ValueError, "one int32 value per config (or per ordinal given)");
    } else if (!(out = PyMem_RawMalloc(size * sizeof(int32_t)))) {
        PyErr_NoMemory();
    } else {
        for (long i = 0; i < size; i++) out[i] = fill;
        const int32_t *value = v.buf, *ordinal = w.buf;
        for (long i = 0; i < count; i++) {
            long c = where == Py_None ? i : ordinal[i];
            if (c < 0 || c >= configs) continue; /* no config: not from the tables */
            out[order[c]] = value[i];
        }
    }
    PyMem_RawFree(order);
    PyBuffer_Release(&v);
    if (where != Py_None) PyBuffer_Release(&w);
    return out;
}

static void *copy_of(PyObject *obj) {
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE) < 0) return NULL;
    void *out = PyMem_RawMalloc(b.len ? b.len : 1);
    if (out)
        memcpy(out, b.buf, b.len);
    else
        PyErr_NoMemory();
    PyBuffer_Release(&b);
    return out;
}

/* load_suit(entries, wait_ordinals, wait_words, two_suits, n_suit): int32 buffers as
 * the file keeps them (`fangcheng.analysis.tables.Packed`) */
static PyObject *load_suit(PyObject *self, PyObject *args) {
    PyObject *entries, *where, *words, *two;
    long n;
    if (!PyArg_ParseTuple(args, "OOOOl", &entries, &where, &words, &two, &n)) return NULL;
    if (suit_entries) Py_RETURN_NONE;
    int32_t *e = dense(entries, Py_None, 9, -1), *w = e ? dense(words, where, 9, INCOMPLETE) : NULL;
    int32_t *t = w ? copy_of(two) : NULL;
    if (!t) {
        PyMem_RawFree(e);
        PyMem_RawFree(w);
        return NULL;
    }
    suit_entries = e;
    suit_waits_ = w;
    two_suits = t;
    n_suit_ids = n;
    Py_RETURN_NONE;
}

/* load_honours(kind, entries, wait_ordinals, wait_words, pairs int32, final bytes,
 * n_honours, size), after load_suit */
static PyObject *load_honours(PyObject *self, PyObject *args) {
    int which;
    PyObject *entries, *where, *words, *pairs, *final;
    long n_hon, size;
    if (!PyArg_ParseTuple(args, "iOOOOOll", &which, &entries, &where, &words, &pairs, &final,
                          &n_hon, &size))
        return NULL;
    if (which < 0 || which > 1 || !suit_entries) {
        PyErr_SetString(PyExc_ValueError, "kind is 0 or 1, after load_suit");
        return NULL;
    }
    Kind *k = &kinds[which];
    if (k->loaded) Py_RETURN_NONE;
    int32_t *e = dense(entries, Py_None, 7, -1), *w = e ? dense(words, where, 7, INCOMPLETE) : NULL;
    int32_t *p = w ? copy_of(pairs) : NULL;
    uint8_t *f = p ? copy_of(final) : NULL;
    if (!f) {
        PyMem_RawFree(e);
        PyMem_RawFree(w);
        PyMem_RawFree(p);
        return NULL;
    }
    k->suit = suit_entries;
    k->suit_waits = suit_waits_;
    k->two = two_suits;
    k->n_suit = n_suit_ids;
    k->hon = e;
    k->hon_waits = w;
    k->pairs = p;
    k->final = f;
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

/* The waits mask of one checked 13 - 3k tile hand of n tiles (34 bytes of 0/1). */
static void wait_row(const Kind *k, int flags, const uint8_t *h, int n, uint8_t *o) {
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
        /* one component short: melds only if another holds the pair, else with it */
        bits[which_short] = (w[which_short] >> (total - INCOMPLETE ? W0_SHIFT : W1_SHIFT)) & 511;
    } else if (short_ == 0 && total == 2) {
        /* two pairs: either becomes a pung */
        for (int c = 0; c < 4; c++)
            if (w[c] & 3) bits[c] = (w[c] >> W0_SHIFT) & 511;
    }
    for (int c = 0; c < 4; c++) {
        if (!bits[c]) continue;
        int faces = c == 3 ? 7 : 9;
        for (int j = 0; j < faces; j++) o[9 * c + j] = (bits[c] >> j) & 1;
    }
    if (n != 13) return;
    if (flags & 1) {
        /* branch-free: the odd faces are unpredictable, and a mispredicted branch per
         * face costs more than the whole loop */
        int odd = 0, at = 0, three_or_four = 0;
        for (int t = 0; t < KINDS; t++) {
            int is_odd = h[t] & 1;
            odd += is_odd;
            at += is_odd * t;
            three_or_four |= h[t] >= 3;
        }
        if (odd == 1 && ((flags & 2) || !three_or_four)) o[at] = 1;
    }
    if (flags & 4) {
        int missing = 0, sum = 0, at = 0;
        for (int i = 0; i < 13; i++) {
            int c = h[ORPHANS[i]], none = !c;
            sum += c;
            missing += none;
            at += none * ORPHANS[i];
        }
        if (sum == 13 && missing == 0)
            for (int i = 0; i < 13; i++) o[ORPHANS[i]] = 1;
        else if (sum == 13 && missing == 1)
            o[at] = 1;
    }
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
        wait_row(k, flags, h, n, o);
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

/* The least shanten + `bias` after one more (step 1) or one fewer (-1) of each face of
 * one checked hand of n tiles, NO_CHANGE + bias where the face cannot change; only the
 * changed face's component key moves. */
static void after_row(const Kind *k, int flags, int step, const uint8_t *h, int n, int bias,
                      int8_t *o) {
    uint8_t hh[KINDS];
    memcpy(hh, h, KINDS);
    long key[4];
    keys_of(h, key);
    for (int t = 0; t < KINDS; t++) {
        if ((step == 1 && h[t] == 4) || (step == -1 && h[t] == 0)) {
            o[t] = (int8_t)(NO_CHANGE + bias);
            continue;
        }
        int c = t / 9;
        long moved = step * P5[t - 9 * c];
        key[c] += moved;
        hh[t] = (uint8_t)(hh[t] + step);
        o[t] = (int8_t)(least(k, flags, hh, key, n + step, NULL, NULL, NULL) + bias);
        hh[t] = h[t];
        key[c] -= moved;
    }
}

/* after(kind, flags, step, hands, out N x 34 int8) -> bad row or -1 */
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
        after_row(k, flags, step, h, n, 0, o);
    }
    Py_END_ALLOW_THREADS
    release(&b);
    return PyLong_FromSsize_t(bad);
}

/* --- one hand at a time, for the per-hand API: fast calls, bytes in ------------------
 * Each takes the hand (34 count bytes) and the Shapes object's four flags as objects
 * (seven pairs, quads as pairs, thirteen orphans, dragon set), and returns None for a
 * hand it would refuse: the Python path then raises its own error. */

static int one(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const uint8_t **h,
               int *flags, Kind **k) {
    if (nargs != want || !PyBytes_CheckExact(args[0]) || PyBytes_GET_SIZE(args[0]) != KINDS) {
        PyErr_SetString(PyExc_TypeError, "a hand of 34 count bytes and the four shape flags");
        return -1;
    }
    *h = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    int f[4];
    for (int i = 0; i < 4; i++)
        if ((f[i] = PyObject_IsTrue(args[1 + i])) < 0) return -1;
    *flags = f[0] | f[1] << 1 | f[2] << 2;
    *k = kind_of(f[3]);
    return *k ? 0 : -1;
}

/* shanten1(h, seven_pairs, quad_pairs, thirteen_orphans, dragon_set) -> int | None */
static PyObject *shanten1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h;
    int flags;
    Kind *k;
    if (one(args, nargs, 5, &h, &flags, &k) < 0) return NULL;
    int n = count_of(h, 6);
    if (n < 0) Py_RETURN_NONE;
    long key[4];
    keys_of(h, key);
    return PyLong_FromLong(least(k, flags, h, key, n, NULL, NULL, NULL));
}

/* is_win1(h, ...flags) -> bool | None */
static PyObject *is_win1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h;
    int flags;
    Kind *k;
    if (one(args, nargs, 5, &h, &flags, &k) < 0) return NULL;
    int n = count_of(h, 4);
    if (n < 0) Py_RETURN_NONE;
    long key[4];
    keys_of(h, key);
    int code = (k->suit[key[0]] + k->suit[key[1]] + k->suit[key[2]] + k->hon[key[3]]) & 1023;
    int win = code == 16 * (n / 3) + 1;
    if (!win && n == 14)
        win = ((flags & 1) && seven_pairs(h, flags & 2) < 0) ||
              ((flags & 4) && thirteen_orphans(h) < 0);
    return PyBool_FromLong(win);
}

/* waits1(h, ...flags) -> tuple of faces, ascending | None */
static PyObject *waits1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h;
    int flags;
    Kind *k;
    if (one(args, nargs, 5, &h, &flags, &k) < 0) return NULL;
    int n = count_of(h, 2);
    if (n < 0) Py_RETURN_NONE;
    uint8_t o[KINDS];
    wait_row(k, flags, h, n, o);
    int count = 0;
    for (int t = 0; t < KINDS; t++) count += o[t];
    PyObject *out = PyTuple_New(count);
    if (!out) return NULL;
    for (int t = 0, i = 0; t < KINDS; t++) {
        if (!o[t]) continue;
        PyObject *face = PyLong_FromLong(t);
        if (!face) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i++, face);
    }
    return out;
}

/* after1(h, ...flags, step) -> bytes of shanten + 1 per face (FAR where it cannot
 * change) | None: the format of hand.draw_shanten_bytes. */
static PyObject *after1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h;
    int flags;
    Kind *k;
    if (one(args, nargs, 6, &h, &flags, &k) < 0) return NULL;
    long step = PyLong_AsLong(args[5]);
    if (step == -1 && PyErr_Occurred()) return NULL;
    if (step != 1 && step != -1) {
        PyErr_SetString(PyExc_ValueError, "step is 1 or -1");
        return NULL;
    }
    int n = count_of(h, step == 1 ? 2 : 4);
    if (n < 0) Py_RETURN_NONE;
    int8_t o[KINDS];
    after_row(k, flags, (int)step, h, n, 1, o);
    return PyBytes_FromStringAndSize((const char *)o, KINDS);
}

/* --- the bots' discard measures (players/bots.py, `_Memo.closest` and `_Memo.useful`)
 * A bot's distance is shanten plus the win requirements the concealed hand still lacks
 * (`_Memo.lacking`); its useful draws are the faces in reach whose draw shanten, with
 * the requirements' gains, is below the distance (`_Memo.useful`). The memo's constants
 * come as one profile of bytes (`_Memo.__init__` builds it; the P_ offsets below); the
 * Python methods are the reference (tests/test_bots_kernel.py). */
#define P_VOID 0        /* the first tile of the 缺 suit 缺一门 counts, or 255 */
#define P_VOID_LAID 1   /* its tiles in the laid melds */
#define P_OPEN 2        /* bit s: suit s (tiles 9s..9s+8) still open for 三门全 */
#define P_TERMINAL 3    /* 么九 still open */
#define P_PUNG 4        /* 必须有碰 still open */
#define P_DRAGON_PAIR 5 /* a dragon pair counts as the pung */
#define P_DRAGON_SET 6  /* 中发白 counts as the pung */
#define P_FLAGS 7       /* the Shapes flags, as the batch calls take them */
#define P_KIND 8        /* the honours kind: 1 with the 中发白 set */
#define P_QUE 9         /* 34 bytes: 1 for a face of the 缺 suit (its draw sets back) */
#define P_PLAY (P_QUE + KINDS) /* 34 bytes: 1 for a face the rule set plays with */
#define P_SIZE (P_PLAY + KINDS)
#define FIRST_DRAGON 31
#define BIAS 4

typedef struct {
    int total, missing, no_terminal, no_pung; /* missing: bit s for suit s */
} Needs;

static inline int terminal(int t) { return t >= 27 || t % 9 == 0 || t % 9 == 8; }

/* `_Memo.pung_in_reach`: a pung (or substitute) held, or two pairs to grow one from. */
static int pung_in_reach(const uint8_t *p, const uint8_t *h) {
    int pairs = 0, twos = 0;
    for (int t = 0; t < KINDS; t++) {
        pairs += h[t] >= 2;
        twos += h[t] == 2;
    }
    if (pairs >= 2 || (pairs == 1 && !twos)) return 1;
    const uint8_t *d = h + FIRST_DRAGON;
    if (p[P_DRAGON_PAIR] && (d[0] >= 2 || d[1] >= 2 || d[2] >= 2)) return 1;
    return p[P_DRAGON_SET] && d[0] && d[1] && d[2];
}

/* `_Memo.lacking` */
static void lacking(const uint8_t *p, const uint8_t *h, Needs *n) {
    int total = 0;
    if (p[P_VOID] != 255) {
        total += p[P_VOID_LAID];
        for (int i = 0; i < 9; i++) total += h[p[P_VOID] + i];
    }
    n->missing = 0;
    for (int s = 0; s < 3; s++) {
        if (!(p[P_OPEN] >> s & 1)) continue;
        int any = 0;
        for (int i = 0; i < 9; i++) any |= h[9 * s + i];
        if (!any) {
            n->missing |= 1 << s;
            total++;
        }
    }
    n->no_terminal = 0;
    if (p[P_TERMINAL]) {
        int any = 0;
        for (int t = 0; t < KINDS; t++) any |= terminal(t) && h[t];
        n->no_terminal = !any;
    }
    n->no_pung = p[P_PUNG] && !pung_in_reach(p, h);
    n->total = total + n->no_terminal + n->no_pung;
}

/* `_Memo.useful` of one checked hand h of n (13 - 3k) tiles at distance d: 1 per face
 * into o. */
static void useful_row(const Kind *k, const uint8_t *p, const uint8_t *h, int n, int d,
                       uint8_t *o) {
    int8_t after[KINDS];
    after_row(k, p[P_FLAGS], 1, h, n, 1, after);
    Needs nd;
    lacking(p, h, &nd);
    int most = 0;
    for (int t = 0; t < KINDS; t++) most = h[t] > most ? h[t] : most;
    int limit = d - nd.total + 1 + BIAS;
    const uint8_t *dragon = h + FIRST_DRAGON;
    int dragons_held = (dragon[0] > 0) + (dragon[1] > 0) + (dragon[2] > 0);
    for (int t = 0; t < KINDS; t++) {
        int suit = t < 27 ? t / 9 : -1, r = t % 9, held = h[t] > 0;
        int raised = after[t] + BIAS + p[P_QUE + t];
        int wanted = 0;
        if (suit >= 0 && (nd.missing >> suit & 1)) {
            raised--;
            wanted = 1;
        }
        if (nd.no_terminal && terminal(t)) {
            raised--;
            wanted = 1;
        }
        if (nd.no_pung) { /* `_Memo.pung_draws` */
            int is_dragon = t >= FIRST_DRAGON;
            int draws = most >= 2 && held;
            draws |= p[P_DRAGON_PAIR] && held && is_dragon;
            draws |= p[P_DRAGON_SET] && dragons_held == 2 && is_dragon && !held;
            raised -= draws;
        }
        int near = held || wanted;
        if (suit >= 0) {
            const uint8_t *c = h + 9 * suit;
            near |= (r >= 1 && c[r - 1]) || (r >= 2 && c[r - 2]) || (r <= 7 && c[r + 1]) ||
                    (r <= 6 && c[r + 2]);
        }
        o[t] = raised < limit && near && p[P_PLAY + t];
    }
}

static int bot_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const uint8_t **h,
                    const uint8_t **p, Kind **k) {
    if (nargs != want || !PyBytes_CheckExact(args[0]) || PyBytes_GET_SIZE(args[0]) != KINDS ||
        !PyBytes_CheckExact(args[1]) || PyBytes_GET_SIZE(args[1]) != P_SIZE) {
        PyErr_SetString(PyExc_TypeError, "a hand of 34 count bytes and a bot profile");
        return -1;
    }
    *h = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    *p = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    *k = kind_of((*p)[P_KIND]);
    return *k ? 0 : -1;
}

/* A face list's items as faces, each held in h; -1 if one is not (or not a face). */
static int faces_of(PyObject *seq, const uint8_t *h, int *faces) {
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if (m > 64) return -1;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < m; i++) {
        long t = PyLong_Check(items[i]) ? PyLong_AsLong(items[i]) : -1;
        if (t < 0 || t >= KINDS || !h[t]) {
            PyErr_Clear();
            return -1;
        }
        faces[i] = (int)t;
    }
    return (int)m;
}

/* A new list of the faces[i] whose dist[i] is `at`, ascending, each as often as listed. */
static PyObject *faces_at(const int *faces, const int *dist, int m, int at) {
    int out[64], c = 0;
    for (int t = 0; t < KINDS; t++)
        for (int i = 0; i < m; i++)
            if (faces[i] == t && dist[i] == at) out[c++] = t;
    PyObject *list = PyList_New(c);
    if (!list) return NULL;
    for (int i = 0; i < c; i++) {
        PyObject *face = PyLong_FromLong(out[i]);
        if (!face) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, face);
    }
    return list;
}

/* bot_closest(h14, profile, faces) -> (least distance, [faces at it], [ready faces]) |
 * None: `_Memo.closest` over the discards that leave the hand unready (distance FAR if
 * none does), and apart the discards that leave it ready, whose distance (0 with a
 * legal wait, else 1) the rule set's waits decide; lists ascending. None for a hand or a
 * face the Python code would refuse. */
static PyObject *bot_closest(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h, *p;
    Kind *k;
    if (bot_args(args, nargs, 3, &h, &p, &k) < 0) return NULL;
    int n = count_of(h, 4);
    PyObject *seq = PySequence_Fast(args[2], "faces: a list or tuple");
    if (!seq) return NULL;
    int faces[64], m = n < 0 ? -1 : faces_of(seq, h, faces);
    Py_DECREF(seq);
    if (m <= 0) Py_RETURN_NONE;
    int8_t after[KINDS];
    after_row(k, p[P_FLAGS], -1, h, n, 0, after);
    uint8_t hh[KINDS];
    memcpy(hh, h, KINDS);
    int best = FAR, dist[64], ready[64];
    for (int i = 0; i < m; i++) {
        int t = faces[i];
        dist[i] = FAR;
        ready[i] = after[t] <= 0;
        if (ready[i] || after[t] > best) continue; /* shanten is a floor of the distance */
        Needs nd;
        hh[t]--;
        lacking(p, hh, &nd);
        hh[t]++;
        dist[i] = after[t] + nd.total;
        if (dist[i] < best) best = dist[i];
    }
    PyObject *close = faces_at(faces, dist, m, best);
    PyObject *zero = close ? faces_at(faces, ready, m, 1) : NULL;
    if (!zero) {
        Py_XDECREF(close);
        return NULL;
    }
    return Py_BuildValue("(iNN)", best, close, zero);
}

/* bot_useful(h, profile, d) -> 34 bytes, 1 per useful face | None: `_Memo.useful` of a
 * 13 - 3k hand at distance d. */
static PyObject *bot_useful(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h, *p;
    Kind *k;
    if (bot_args(args, nargs, 3, &h, &p, &k) < 0) return NULL;
    long d = PyLong_AsLong(args[2]);
    if (d == -1 && PyErr_Occurred()) return NULL;
    int n = count_of(h, 2);
    if (n < 0) Py_RETURN_NONE;
    uint8_t o[KINDS];
    useful_row(k, p, h, n, (int)d, o);
    return PyBytes_FromStringAndSize((const char *)o, KINDS);
}

/* bot_useful_after(h14, profile, faces, d, unseen) -> [count per face] | None: for each
 * discard of faces, the unseen copies of the useful faces of the hand it leaves at
 * distance d (`EfficientBot.useful` of each). */
static PyObject *bot_useful_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *h, *p;
    Kind *k;
    if (bot_args(args, nargs, 5, &h, &p, &k) < 0) return NULL;
    long d = PyLong_AsLong(args[3]);
    if (d == -1 && PyErr_Occurred()) return NULL;
    if (!PyBytes_CheckExact(args[4]) || PyBytes_GET_SIZE(args[4]) != KINDS) {
        PyErr_SetString(PyExc_TypeError, "unseen: 34 count bytes");
        return NULL;
    }
    const uint8_t *unseen = (const uint8_t *)PyBytes_AS_STRING(args[4]);
    int n = count_of(h, 4);
    PyObject *seq = PySequence_Fast(args[2], "faces: a list or tuple");
    if (!seq) return NULL;
    int faces[64], m = n < 0 ? -1 : faces_of(seq, h, faces);
    Py_DECREF(seq);
    if (m < 0) Py_RETURN_NONE;
    PyObject *list = PyList_New(m);
    if (!list) return NULL;
    uint8_t hh[KINDS], o[KINDS];
    memcpy(hh, h, KINDS);
    for (int i = 0; i < m; i++) {
        int t = faces[i], count = 0;
        hh[t]--;
        useful_row(k, p, hh, n - 1, (int)d, o);
        hh[t]++;
        for (int u = 0; u < KINDS; u++) count += o[u] * unseen[u];
        PyObject *value = PyLong_FromLong(count);
        if (!value) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

/* --- decompositions ------------------------------------------------------------------
 * The standard readings of one complete hand, as hand.py's `_standard_readings` finds
 * them (its reference): each suit and the honours split into groups by the same walk
 * (at the first face left: a pung, then the pair, then a chow, then the 中发白 set), a
 * reading kept once in the order first found, then every combination of the four
 * components' readings, 万 first. The groups are hand.py's own `Group` objects, handed
 * over once (load_groups: kind * 34 + tile). */

#define MAX_GROUPS 5     /* a component of at most 14 tiles */
#define MAX_READINGS 64  /* a component's readings; more: the Python code answers */

static PyObject *group_objects; /* a tuple of 5 * 34 Groups */

/* load_groups(groups) */
static PyObject *load_groups(PyObject *self, PyObject *arg) {
    if (!PyTuple_CheckExact(arg) || PyTuple_GET_SIZE(arg) != 5 * KINDS) {
        PyErr_SetString(PyExc_TypeError, "a tuple of 5 * 34 groups");
        return NULL;
    }
    Py_INCREF(arg);
    Py_XSETREF(group_objects, arg);
    Py_RETURN_NONE;
}

typedef struct {
    int n, count[MAX_READINGS];
    int code[MAX_READINGS][MAX_GROUPS]; /* kind * 34 + tile, in the order found */
    int overflow;
} Readings;

static int sorted_equal(const int *a, const int *b, int n) {
    int x[MAX_GROUPS], y[MAX_GROUPS];
    memcpy(x, a, n * sizeof(int));
    memcpy(y, b, n * sizeof(int));
    for (int i = 1; i < n; i++) /* insertion sorts of at most five */
        for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
            int s = x[j]; x[j] = x[j - 1]; x[j - 1] = s;
        }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && y[j - 1] > y[j]; j--) {
            int s = y[j]; y[j] = y[j - 1]; y[j - 1] = s;
        }
    return memcmp(x, y, n * sizeof(int)) == 0;
}

static void walk(int *c, int faces, int base, int honours, int dragons, int start, int *groups,
                 int depth, int paired, Readings *r) {
    int i = start;
    while (i < faces && c[i] == 0) i++;
    if (i == faces) {
        for (int k = 0; k < r->n; k++)
            if (r->count[k] == depth && sorted_equal(r->code[k], groups, depth)) return;
        if (r->n == MAX_READINGS) {
            r->overflow = 1;
            return;
        }
        r->count[r->n] = depth;
        memcpy(r->code[r->n++], groups, depth * sizeof(int));
        return;
    }
    if (depth == MAX_GROUPS) return; /* never so in a hand of 14 tiles */
    if (c[i] >= 3) { /* GroupKind: PAIR 0, PUNG 1, CHOW 2, DRAGONS 3 */
        c[i] -= 3;
        groups[depth] = 1 * KINDS + base + i;
        walk(c, faces, base, honours, dragons, i, groups, depth + 1, paired, r);
        c[i] += 3;
    }
    if (c[i] >= 2 && !paired) {
        c[i] -= 2;
        groups[depth] = 0 * KINDS + base + i;
        walk(c, faces, base, honours, dragons, i, groups, depth + 1, 1, r);
        c[i] += 2;
    }
    if (!honours && i <= 6 && c[i + 1] && c[i + 2]) {
        c[i]--, c[i + 1]--, c[i + 2]--;
        groups[depth] = 2 * KINDS + base + i;
        walk(c, faces, base, honours, dragons, i, groups, depth + 1, paired, r);
        c[i]++, c[i + 1]++, c[i + 2]++;
    }
    if (dragons && i == 4 && c[5] && c[6]) {
        c[4]--, c[5]--, c[6]--;
        groups[depth] = 3 * KINDS + 31;
        walk(c, faces, base, honours, dragons, i, groups, depth + 1, paired, r);
        c[4]++, c[5]++, c[6]++;
    }
}

/* decompose1(h, dragon_set) -> list of tuples of Groups (no standard reading: empty) |
 * None for a hand the per-hand functions refuse, or one with more readings than kept */
static PyObject *decompose1(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_CheckExact(args[0]) || PyBytes_GET_SIZE(args[0]) != KINDS ||
        !group_objects) {
        PyErr_SetString(PyExc_TypeError, "a hand of 34 count bytes and the dragon set flag"
                                         " (groups loaded)");
        return NULL;
    }
    const uint8_t *h = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    int dragons = PyObject_IsTrue(args[1]);
    if (dragons < 0) return NULL;
    if (count_of(h, 4) < 0) Py_RETURN_NONE;
    Readings parts[4];
    int pairs = 0;
    for (int comp = 0; comp < 4; comp++) {
        int faces = comp == 3 ? 7 : 9, c[9], groups[MAX_GROUPS], n = 0;
        for (int j = 0; j < faces; j++) n += c[j] = h[9 * comp + j];
        if (n % 3 == 1) return PyList_New(0);
        pairs += n % 3 == 2;
        Readings *r = &parts[comp];
        r->n = r->overflow = 0;
        walk(c, faces, 9 * comp, comp == 3, comp == 3 && dragons, 0, groups, 0, 0, r);
        if (r->overflow) Py_RETURN_NONE;
        if (r->n == 0) return PyList_New(0);
    }
    if (pairs != 1) return PyList_New(0);
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int a = 0; a < parts[0].n; a++)
        for (int b = 0; b < parts[1].n; b++)
            for (int c = 0; c < parts[2].n; c++)
                for (int d = 0; d < parts[3].n; d++) {
                    const int pick[4] = {a, b, c, d};
                    int size = 0;
                    for (int k = 0; k < 4; k++) size += parts[k].count[pick[k]];
                    PyObject *reading = PyTuple_New(size);
                    if (!reading) {
                        Py_DECREF(out);
                        return NULL;
                    }
                    for (int k = 0, at = 0; k < 4; k++)
                        for (int g = 0; g < parts[k].count[pick[k]]; g++) {
                            PyObject *group =
                                PyTuple_GET_ITEM(group_objects, parts[k].code[pick[k]][g]);
                            Py_INCREF(group);
                            PyTuple_SET_ITEM(reading, at++, group);
                        }
                    int failed = PyList_Append(out, reading);
                    Py_DECREF(reading);
                    if (failed) {
                        Py_DECREF(out);
                        return NULL;
                    }
                }
    return out;
}

static PyMethodDef methods[] = {
    {"load_suit", load_suit, METH_VARARGS, "Copy the suit tables into the kernel."},
    {"load_honours", load_honours, METH_VARARGS, "Copy one honours kind's tables."},
    {"shanten", shanten, METH_VARARGS, "Least and per-form shanten of a batch."},
    {"is_win", is_win, METH_VARARGS, "Win check of a batch."},
    {"waits", waits, METH_VARARGS, "Waits mask of a batch."},
    {"after", after, METH_VARARGS, "Shanten after each draw or discard of a batch."},
    {"shanten1", (PyCFunction)(void (*)(void))shanten1, METH_FASTCALL, "Shanten of one hand."},
    {"is_win1", (PyCFunction)(void (*)(void))is_win1, METH_FASTCALL, "Win check of one hand."},
    {"waits1", (PyCFunction)(void (*)(void))waits1, METH_FASTCALL, "Waits of one hand."},
    {"after1", (PyCFunction)(void (*)(void))after1, METH_FASTCALL, "After each change, one."},
    {"load_groups", load_groups, METH_O, "Keep hand.py's Group objects."},
    {"decompose1", (PyCFunction)(void (*)(void))decompose1, METH_FASTCALL,
     "Standard readings of one hand."},
    {"bot_closest", (PyCFunction)(void (*)(void))bot_closest, METH_FASTCALL,
     "A bot's least distance after a discard."},
    {"bot_useful", (PyCFunction)(void (*)(void))bot_useful, METH_FASTCALL,
     "A bot's useful faces of one hand."},
    {"bot_useful_after", (PyCFunction)(void (*)(void))bot_useful_after, METH_FASTCALL,
     "A bot's useful counts after each discard."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
