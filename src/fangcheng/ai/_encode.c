/* The compiled observation encoder of fangcheng.ai.env: `encode_observation` in C.
 *
 * Optional, as the analysis kernel is: the package builds it from source when the machine
 * has a compiler, and without it env.py runs its own Python encoder, which is also this
 * one's reference (tests/test_env_encoding.py checks both against the list-built encoder
 * at every step of seeded hands of every table). In Python an encoding was a quarter of a
 * single-seat step, spent on item stores and look-ups, not on arithmetic.
 *
 * env.py hands over the layout once (`setup`: the offsets, by name, of its
 * OBSERVATION_LAYOUT, the Phase members in order, the meld kinds compared, the first
 * dragon and the 漂 bets), so the layout has one source. `encode(obs, out, base, facts)`
 * reads the Observation and its SeatViews (named tuples, by position) and the Melds (by
 * attribute), and fills `out`, a float32 buffer of the tensor's size, in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define KINDS 34
#define SEATS 4
#define MAX_PHASES 16
#define MAX_BETS 8

/* The layout: the table's offsets, then a seat block's. */
enum {
    O_HAND, O_DRAWN, O_UNSEEN, O_SEAT0, O_SEAT_BLOCK, O_DEALER, O_TURN, O_PHASE,
    O_CLAIM_TILE, O_CLAIM_SEAT, O_TREASURE, O_RETIRED, O_WALL, O_RULES, O_SIZE,
    B_RIVER, B_RECENT, B_CHI, B_PENG, B_KONG, B_ANGANG, B_XUANFENG, B_HIDDEN,
    B_CONCEALED, B_READY, B_WON, B_QUE, B_PIAO, B_SCORE, N_OFFSETS
};

static Py_ssize_t at[N_OFFSETS];
static PyObject *phases[MAX_PHASES];
static Py_ssize_t n_phases;
static PyObject *chi, *peng, *an_gang, *xuanfeng; /* meld kinds; others are 明杠, 补杠 */
static long first_dragon;
static long bets[MAX_BETS];
static Py_ssize_t n_bets;
static PyObject *s_kind, *s_tiles, *s_face;
static int ready;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *offsets, *phase_members, *kinds, *bet_values;
    if (!PyArg_ParseTuple(args, "O!O!O!lO!", &PyTuple_Type, &offsets, &PyTuple_Type,
                          &phase_members, &PyTuple_Type, &kinds, &first_dragon,
                          &PyTuple_Type, &bet_values))
        return NULL;
    if (PyTuple_GET_SIZE(offsets) != N_OFFSETS || PyTuple_GET_SIZE(kinds) != 4 ||
        PyTuple_GET_SIZE(phase_members) > MAX_PHASES || PyTuple_GET_SIZE(bet_values) > MAX_BETS) {
        PyErr_SetString(PyExc_ValueError, "setup: a layout this encoder was not written for");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < N_OFFSETS; i++) {
        at[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(offsets, i));
        if (at[i] < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "setup: offsets >= 0");
            return NULL;
        }
    }
    n_phases = PyTuple_GET_SIZE(phase_members);
    for (Py_ssize_t i = 0; i < n_phases; i++) {
        phases[i] = PyTuple_GET_ITEM(phase_members, i);
        Py_INCREF(phases[i]); /* kept: module-level members, set up once */
    }
    PyObject **kind[4] = {&chi, &peng, &an_gang, &xuanfeng};
    for (int i = 0; i < 4; i++) {
        *kind[i] = PyTuple_GET_ITEM(kinds, i);
        Py_INCREF(*kind[i]);
    }
    n_bets = PyTuple_GET_SIZE(bet_values);
    for (Py_ssize_t i = 0; i < n_bets; i++) {
        bets[i] = PyLong_AsLong(PyTuple_GET_ITEM(bet_values, i));
        if (bets[i] == -1 && PyErr_Occurred()) return NULL;
    }
    if (!(s_kind = PyUnicode_InternFromString("kind")) ||
        !(s_tiles = PyUnicode_InternFromString("tiles")) ||
        !(s_face = PyUnicode_InternFromString("face")))
        return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

/* A whole number in [lo, hi), or -1 with a ValueError naming `what`. */
static long whole(PyObject *x, long lo, long hi, const char *what) {
    long v = PyLong_AsLong(x);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v >= hi) {
        PyErr_Format(PyExc_ValueError, "observation: %s %ld out of range", what, v);
        return -1;
    }
    return v;
}

/* Marks `x`'s tile at `offset`, or nothing for None; 0, or -1 with an error. */
static int one_hot(float *v, Py_ssize_t offset, PyObject *x, const char *what) {
    if (x == Py_None) return 0;
    long t = whole(x, 0, KINDS, what);
    if (t < 0) return -1;
    v[offset + t] = 1.0f;
    return 0;
}

/* A tile, counted seen; -1 with an error. */
static long tile_of(PyObject *x, int *seen) {
    long t = whole(x, 0, KINDS, "tile");
    if (t >= 0) seen[t]++;
    return t;
}

/* One seat's block from its SeatView, counting what it shows into `seen`; 0, or -1. */
static int seat_block(PyObject *view, float *b, int *seen, double *concealed_out) {
    if (!PyTuple_Check(view) || PyTuple_GET_SIZE(view) < 8) {
        PyErr_SetString(PyExc_TypeError, "observation: a seat view is a SeatView");
        return -1;
    }
    PyObject *river = PySequence_Fast(PyTuple_GET_ITEM(view, 2), "a river is a sequence");
    if (!river) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(river);
    PyObject **items = PySequence_Fast_ITEMS(river);
    for (Py_ssize_t i = 0; i < n; i++) {
        long t = tile_of(items[i], seen);
        if (t < 0) {
            Py_DECREF(river);
            return -1;
        }
        b[at[B_RIVER] + t] += 1.0f;
        if (n - i <= 4) b[at[B_RECENT] + KINDS * (n - 1 - i) + t] = 1.0f; /* newest first */
    }
    Py_DECREF(river);

    PyObject *melds = PySequence_Fast(PyTuple_GET_ITEM(view, 0), "melds are a sequence");
    if (!melds) return -1;
    n = PySequence_Fast_GET_SIZE(melds);
    items = PySequence_Fast_ITEMS(melds);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kind = PyObject_GetAttr(items[i], s_kind);
        PyObject *tiles = kind ? PyObject_GetAttr(items[i], s_tiles) : NULL;
        PyObject *face = tiles ? PyObject_GetAttr(items[i], s_face) : NULL;
        PyObject *fast = face ? PySequence_Fast(tiles, "a meld's tiles are a sequence") : NULL;
        int ok = fast != NULL;
        if (ok) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
            PyObject **ts = PySequence_Fast_ITEMS(fast);
            for (Py_ssize_t k = 0; ok && k < m; k++) {
                long t = tile_of(ts[k], seen);
                if (t < 0)
                    ok = 0;
                else if (kind == chi)
                    b[at[B_CHI] + t] += 1.0f;
                else if (kind == xuanfeng) {
                    long d = t - first_dragon;
                    if (d < 0 || d > 2) {
                        PyErr_SetString(PyExc_ValueError, "observation: a 旋风杠 of non-dragons");
                        ok = 0;
                    } else
                        b[at[B_XUANFENG] + d] += 1.0f;
                }
            }
            long f = ok ? whole(face, 0, KINDS, "meld face") : 0;
            if (f < 0)
                ok = 0;
            else if (ok && kind == peng)
                b[at[B_PENG] + f] += 1.0f;
            else if (ok && kind == an_gang)
                b[at[B_ANGANG] + f] += 1.0f;
            else if (ok && kind != chi && kind != xuanfeng)
                b[at[B_KONG] + f] += 1.0f;
        }
        Py_XDECREF(fast);
        Py_XDECREF(face);
        Py_XDECREF(tiles);
        Py_XDECREF(kind);
        if (!ok) {
            Py_DECREF(melds);
            return -1;
        }
    }
    Py_DECREF(melds);

    long hidden = whole(PyTuple_GET_ITEM(view, 1), 0, 5, "hidden kongs");
    if (hidden < 0) return -1;
    b[at[B_HIDDEN]] = (float)hidden;
    long concealed = PyLong_AsLong(PyTuple_GET_ITEM(view, 3));
    if (concealed == -1 && PyErr_Occurred()) return -1;
    *concealed_out = (double)concealed;
    int flag = PyObject_IsTrue(PyTuple_GET_ITEM(view, 4));
    if (flag < 0) return -1;
    if (flag) b[at[B_READY]] = 1.0f;
    flag = PyObject_IsTrue(PyTuple_GET_ITEM(view, 6));
    if (flag < 0) return -1;
    if (flag) b[at[B_WON]] = 1.0f;
    PyObject *que = PyTuple_GET_ITEM(view, 5);
    if (que != Py_None) {
        long q = whole(que, 0, 3, "缺 suit");
        if (q < 0) return -1;
        b[at[B_QUE] + q] = 1.0f;
    }
    long piao = PyLong_AsLong(PyTuple_GET_ITEM(view, 7));
    if (piao == -1 && PyErr_Occurred()) return -1;
    for (Py_ssize_t k = 0; k < n_bets; k++)
        if (bets[k] == piao) b[at[B_PIAO] + k] = 1.0f;
    return 0;
}

static PyObject *encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "encode(obs, out, base, facts)");
        return NULL;
    }
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "encode before setup");
        return NULL;
    }
    PyObject *obs = args[0], *facts = args[3];
    if (!PyTuple_Check(obs) || PyTuple_GET_SIZE(obs) < 14) {
        PyErr_SetString(PyExc_TypeError, "observation: an Observation");
        return NULL;
    }
    double base = PyFloat_AsDouble(args[2]);
    if (base == -1.0 && PyErr_Occurred()) return NULL;
    /* facts (env.py's `_rules_facts`): the rule set, its faces in play as one integer
     * (the Python encoder's), the wall's full size, the features' bytes, and the faces in
     * play as 34 bytes (this one's) */
    Py_buffer in_play, features, hand, buf;
    if (!PyTuple_Check(facts) || PyTuple_GET_SIZE(facts) != 5) {
        PyErr_SetString(PyExc_TypeError, "encode: facts as env._rules_facts makes them");
        return NULL;
    }
    long wall_size = PyLong_AsLong(PyTuple_GET_ITEM(facts, 2));
    if (wall_size == -1 && PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(facts, 4), &in_play, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(facts, 3), &features, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&in_play);
        return NULL;
    }
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(obs, 9), &hand, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&features);
        PyBuffer_Release(&in_play);
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &buf, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&hand);
        PyBuffer_Release(&features);
        PyBuffer_Release(&in_play);
        return NULL;
    }
    PyObject *result = NULL, *seats = NULL, *scores = NULL, *retired = NULL;
    if (buf.len != at[O_SIZE] * (Py_ssize_t)sizeof(float) || !buf.format ||
        strcmp(buf.format, "f") != 0) {
        PyErr_SetString(PyExc_ValueError, "encode: out is a float32 array of OBSERVATION_SIZE");
        goto done;
    }
    if (hand.len != KINDS || in_play.len != KINDS) {
        PyErr_SetString(PyExc_ValueError, "observation: a hand is 34 counts");
        goto done;
    }
    float *v = buf.buf;
    memset(v, 0, buf.len);
    int seen[KINDS];
    const unsigned char *h = hand.buf;
    for (int t = 0; t < KINDS; t++) {
        seen[t] = h[t];
        v[at[O_HAND] + t] = (float)h[t];
    }
    long me = whole(PyTuple_GET_ITEM(obs, 0), 0, SEATS, "seat");
    if (me < 0) goto done;
    if (one_hot(v, at[O_DRAWN], PyTuple_GET_ITEM(obs, 10), "drawn tile") < 0) goto done;
    seats = PySequence_Fast(PyTuple_GET_ITEM(obs, 11), "observation: seats are a sequence");
    scores = seats ? PySequence_Fast(PyTuple_GET_ITEM(obs, 12), "observation: scores") : NULL;
    if (!scores) goto done;
    if (PySequence_Fast_GET_SIZE(seats) != SEATS || PySequence_Fast_GET_SIZE(scores) != SEATS) {
        PyErr_SetString(PyExc_ValueError, "observation: four seats and four scores");
        goto done;
    }
    for (int r = 0; r < SEATS; r++) {
        int s = (int)((me + r) % SEATS);
        float *b = v + at[O_SEAT0] + r * at[O_SEAT_BLOCK];
        double concealed;
        if (seat_block(PySequence_Fast_GET_ITEM(seats, s), b, seen, &concealed) < 0) goto done;
        b[at[B_CONCEALED]] = (float)(concealed / 14.0);
        long score = PyLong_AsLong(PySequence_Fast_GET_ITEM(scores, s));
        if (score == -1 && PyErr_Occurred()) goto done;
        if (score) { /* as the Python encoder: the quotient, then squashed, in double */
            if (base == 0.0) {
                PyErr_SetString(PyExc_ZeroDivisionError, "observation: a score in units of base 0");
                goto done;
            }
            double x = (double)score / base;
            b[at[B_SCORE]] = (float)(x / (fabs(x) + 16.0));
        }
    }
    long dealer = whole(PyTuple_GET_ITEM(obs, 3), 0, SEATS, "dealer");
    long turn = dealer < 0 ? -1 : whole(PyTuple_GET_ITEM(obs, 4), 0, SEATS, "turn");
    if (turn < 0) goto done;
    v[at[O_DEALER] + (dealer - me + SEATS) % SEATS] = 1.0f;
    v[at[O_TURN] + (turn - me + SEATS) % SEATS] = 1.0f;
    PyObject *phase = PyTuple_GET_ITEM(obs, 2);
    Py_ssize_t p = 0;
    while (p < n_phases && phases[p] != phase) p++;
    if (p == n_phases) {
        PyErr_SetString(PyExc_ValueError, "observation: a phase that is not a Phase");
        goto done;
    }
    v[at[O_PHASE] + p] = 1.0f;
    PyObject *last = PyTuple_GET_ITEM(obs, 13);
    if (last != Py_None) {
        if (!PyTuple_Check(last) || PyTuple_GET_SIZE(last) != 2) {
            PyErr_SetString(PyExc_TypeError, "observation: last_discard is (seat, tile)");
            goto done;
        }
        long seat = whole(PyTuple_GET_ITEM(last, 0), 0, SEATS, "discarding seat");
        long tile = seat < 0 ? -1 : whole(PyTuple_GET_ITEM(last, 1), 0, KINDS, "discard");
        if (tile < 0) goto done;
        v[at[O_CLAIM_TILE] + tile] = 1.0f;
        v[at[O_CLAIM_SEAT] + (seat - me + SEATS) % SEATS] = 1.0f;
    }
    if (one_hot(v, at[O_TREASURE], PyTuple_GET_ITEM(obs, 7), "treasure") < 0) goto done;
    retired = PySequence_Fast(PyTuple_GET_ITEM(obs, 8), "observation: retired indicators");
    if (!retired) goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(retired); i++) {
        long t = tile_of(PySequence_Fast_GET_ITEM(retired, i), seen);
        if (t < 0) goto done;
        v[at[O_RETIRED] + t] += 1.0f;
    }
    const unsigned char *faces = in_play.buf;
    for (int t = 0; t < KINDS; t++)
        if (faces[t] && seen[t] < 4) v[at[O_UNSEEN] + t] = (float)(4 - seen[t]);
    long wall = PyLong_AsLong(PyTuple_GET_ITEM(obs, 6));
    if (wall == -1 && PyErr_Occurred()) goto done;
    double w = (double)wall / (double)wall_size;
    v[at[O_WALL]] = (float)(w < 1.0 ? w : 1.0);
    const unsigned char *f = features.buf;
    for (Py_ssize_t i = 0; i < features.len; i++) v[at[O_RULES] + i] = (float)f[i];
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(retired);
    Py_XDECREF(scores);
    Py_XDECREF(seats);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&hand);
    PyBuffer_Release(&features);
    PyBuffer_Release(&in_play);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "Hand over the layout, phases, meld kinds and bets."},
    {"encode", (PyCFunction)(void (*)(void))encode, METH_FASTCALL,
     "Fill a float32 buffer with an observation's tensor."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_encode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__encode(void) { return PyModule_Create(&module); }
