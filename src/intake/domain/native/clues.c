/* The learning filter's classifier (domain/spam/classifier.py, the reference): a message's
 * words' probabilities, read from the word memo or worked out from their counts, and
 * Fisher's combining of the strongest. Every float is computed with the operations of
 * the Python, in its order, with the C library functions the math module calls, so the
 * results are the same to the bit; tests/property/test_native_clues.py compares them. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>

#include "blake2b.h"
#include "fisher.h"

#define STRENGTH 0.15
#define UNKNOWN 0.5
#define MIN_DEVIATION 0.3
#define MAX_CLUES 150
#define SHOWN_CLUES 6
#define WORD_MEMO 50000

static const double spammy = UNKNOWN + MIN_DEVIATION, hammy = UNKNOWN - MIN_DEVIATION;

/* -- token hashes (hashing.py's TokenHasher.hash) ------------------------------------ */

/* BLAKE2b of the token's UTF-8, surrogates passed through as the "surrogatepass" error
 * handler writes them. */
static struct {
    uint8_t key[64];
    size_t key_length;
    blake2b_state state;
} after_key; /* the last key's, under the GIL */

static int64_t
hash_token(PyObject *token, const uint8_t *key, size_t key_length)
{
    blake2b_state state;
    if (PyUnicode_GET_LENGTH(token) == 0) {
        blake2b_init_keyed(&state, key, key_length);
        return blake2b_final64(&state);
    }
    if (after_key.key_length != key_length || memcmp(after_key.key, key, key_length) != 0) {
        blake2b_init_keyed(&after_key.state, key, key_length);
        blake2b_after_key(&after_key.state);
        memcpy(after_key.key, key, key_length);
        after_key.key_length = key_length;
    }
    state = after_key.state;
    int kind = PyUnicode_KIND(token);
    const void *data = PyUnicode_DATA(token);
    Py_ssize_t n = PyUnicode_GET_LENGTH(token);
    if (kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(token)) {
        blake2b_update(&state, data, (size_t)n);
        return blake2b_final64(&state);
    }
    uint8_t buffer[256];
    size_t used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (used > sizeof(buffer) - 4) {
            blake2b_update(&state, buffer, used);
            used = 0;
        }
        if (c < 0x80) {
            buffer[used++] = (uint8_t)c;
        }
        else if (c < 0x800) {
            buffer[used++] = (uint8_t)(0xc0 | (c >> 6));
            buffer[used++] = (uint8_t)(0x80 | (c & 0x3f));
        }
        else if (c < 0x10000) {
            buffer[used++] = (uint8_t)(0xe0 | (c >> 12));
            buffer[used++] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            buffer[used++] = (uint8_t)(0x80 | (c & 0x3f));
        }
        else {
            buffer[used++] = (uint8_t)(0xf0 | (c >> 18));
            buffer[used++] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
            buffer[used++] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            buffer[used++] = (uint8_t)(0x80 | (c & 0x3f));
        }
    }
    blake2b_update(&state, buffer, used);
    return blake2b_final64(&state);
}

static int
read_key(PyObject *key, const uint8_t **bytes, size_t *length)
{
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) < 16 || PyBytes_GET_SIZE(key) > 64) {
        PyErr_SetString(PyExc_ValueError, "a token key is 16 to 64 bytes");
        return -1;
    }
    *bytes = (const uint8_t *)PyBytes_AS_STRING(key);
    *length = (size_t)PyBytes_GET_SIZE(key);
    return 0;
}

static PyObject *
token_hash(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *key;
    size_t key_length;
    if (nargs != 2 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "token_hash(key: bytes, token: str)");
        return NULL;
    }
    if (read_key(args[0], &key, &key_length) < 0) {
        return NULL;
    }
    return PyLong_FromLongLong(hash_token(args[1], key, key_length));
}

static PyObject *
fisher_evidence(PyObject *Py_UNUSED(module), PyObject *args)
{
    double ln_f, ln_not_f;
    long clues;
    if (!PyArg_ParseTuple(args, "ddl:fisher_evidence", &ln_f, &ln_not_f, &clues)) {
        return NULL;
    }
    return PyFloat_FromDouble(evidence_of(ln_f, ln_not_f, clues));
}

/* -- choosing and combining the clues (classifier.py's _combine) --------------------- */

typedef struct {
    Py_ssize_t where; /* the token's index in the message */
    double f, strength;
    Py_ssize_t rank; /* its place among the clues, for ties */
} clue;

/* heapq.nlargest's order: the stronger first, of equal ones the earlier. */
static int
stronger_first(const void *a, const void *b)
{
    const clue *x = a, *y = b;
    if (x->strength != y->strength) {
        return x->strength > y->strength ? -1 : 1;
    }
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* (evidence, ((index, f), ...)) of the clues among `found` (0.0: not a clue), or None. */
static PyObject *
combine_found(const double *found, Py_ssize_t n)
{
    clue *clues = PyMem_Malloc(sizeof(clue) * (size_t)(n ? n : 1));
    if (clues == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (found[i] != 0.0) {
            clues[count] = (clue){i, found[i], fabs(found[i] - 0.5), count};
            count++;
        }
    }
    if (count == 0) {
        PyMem_Free(clues);
        Py_RETURN_NONE;
    }
    if (count > MAX_CLUES) {
        qsort(clues, (size_t)count, sizeof(clue), stronger_first);
        count = MAX_CLUES;
        for (Py_ssize_t i = 0; i < count; i++) {
            clues[i].rank = i;
        }
    }
    running_sum ln_f = {0.0, 0.0}, ln_not_f = {0.0, 0.0};
    for (Py_ssize_t i = 0; i < count; i++) {
        add(&ln_f, log(clues[i].f));
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        add(&ln_not_f, log(1.0 - clues[i].f));
    }
    double evidence = evidence_of(total(&ln_f), total(&ln_not_f), (long)count);
    /* The SHOWN_CLUES strongest, by insertion into a short sorted list. */
    clue shown[SHOWN_CLUES];
    int n_shown = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int at = n_shown;
        while (at > 0 && stronger_first(&clues[i], &shown[at - 1]) < 0) {
            at--;
        }
        if (at >= SHOWN_CLUES) {
            continue;
        }
        int last = n_shown < SHOWN_CLUES ? n_shown : SHOWN_CLUES - 1;
        for (int k = last; k > at; k--) {
            shown[k] = shown[k - 1];
        }
        shown[at] = clues[i];
        if (n_shown < SHOWN_CLUES) {
            n_shown++;
        }
    }
    PyMem_Free(clues);
    PyObject *told = PyTuple_New(n_shown);
    if (told == NULL) {
        return NULL;
    }
    for (int k = 0; k < n_shown; k++) {
        PyObject *pair = Py_BuildValue("(nd)", shown[k].where, shown[k].f);
        if (pair == NULL) {
            Py_DECREF(told);
            return NULL;
        }
        PyTuple_SET_ITEM(told, k, pair);
    }
    return Py_BuildValue("(dN)", evidence, told);
}

static PyObject *
combine(PyObject *Py_UNUSED(module), PyObject *found)
{
    PyObject *items = PySequence_Fast(found, "combine() takes a sequence of floats");
    if (items == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    double *values = PyMem_Malloc(sizeof(double) * (size_t)(n ? n : 1));
    PyObject *result = NULL;
    if (values == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(items, i));
        if (values[i] == -1.0 && PyErr_Occurred()) {
            goto done;
        }
    }
    result = combine_found(values, n);
done:
    PyMem_Free(values);
    Py_DECREF(items);
    return result;
}

/* -- a message's words (classifier.py's judge_words) --------------------------------- */

typedef struct {
    PyObject *tokens; /* hash to packed counts: a dict, or any object with .get */
    const uint8_t *key;
    size_t key_length;
    double spam_messages, ham_messages;
} counts;

/* A word's f, or 0.0 when it is no clue: _probability and _clue of its counts. */
static int
probability_of(const counts *c, PyObject *word, double *f)
{
    PyObject *hash = PyLong_FromLongLong(hash_token(word, c->key, c->key_length));
    if (hash == NULL) {
        return -1;
    }
    PyObject *packed;
    if (PyDict_Check(c->tokens)) {
        packed = Py_XNewRef(PyDict_GetItemWithError(c->tokens, hash));
    }
    else {
        packed = PyObject_CallMethod(c->tokens, "get", "O", hash);
    }
    Py_DECREF(hash);
    if (packed == NULL && PyErr_Occurred()) {
        return -1;
    }
    *f = 0.0;
    if (packed == NULL || packed == Py_None) {
        Py_XDECREF(packed);
        return 0;
    }
    unsigned long long both = PyLong_AsUnsignedLongLong(packed);
    Py_DECREF(packed);
    if (both == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    if (both == 0) {
        return 0;
    }
    unsigned long long spam = both >> 32, ham = both & 0xFFFFFFFFULL;
    double spam_ratio = (double)spam / c->spam_messages;
    double n = (double)(spam + ham);
    double p = spam_ratio / (spam_ratio + (double)ham / c->ham_messages);
    double value = (STRENGTH * UNKNOWN + n * p) / (STRENGTH + n);
    *f = hammy < value && value < spammy ? 0.0 : value;
    return 0;
}

static PyObject *
judge_words(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *words, *memo, *tokens, *key;
    long long spam_messages, ham_messages;
    if (!PyArg_ParseTuple(args, "OO!OOLL:judge_words", &words, &PyDict_Type, &memo, &tokens,
                          &key, &spam_messages, &ham_messages)) {
        return NULL;
    }
    counts c = {tokens, NULL, 0, (double)spam_messages, (double)ham_messages};
    if (read_key(key, &c.key, &c.key_length) < 0) {
        return NULL;
    }
    PyObject *items = PySequence_Fast(words, "judge_words() takes a sequence of words");
    if (items == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    double *found = PyMem_Malloc(sizeof(double) * (size_t)(n ? n : 1));
    PyObject *result = NULL;
    if (found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PySequence_Fast_GET_ITEM(items, i);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "a word is a str");
            goto done;
        }
        PyObject *known = PyDict_GetItemWithError(memo, word);
        if (known != NULL) {
            found[i] = PyFloat_AsDouble(known);
            if (found[i] == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            continue;
        }
        if (PyErr_Occurred() || probability_of(&c, word, &found[i]) < 0) {
            goto done;
        }
        if (PyDict_GET_SIZE(memo) < WORD_MEMO) {
            PyObject *value = PyFloat_FromDouble(found[i]);
            int failed = value == NULL || PyDict_SetItem(memo, word, value) < 0;
            Py_XDECREF(value);
            if (failed) {
                goto done;
            }
        }
    }
    result = combine_found(found, n);
done:
    PyMem_Free(found);
    Py_DECREF(items);
    return result;
}

static PyMethodDef methods[] = {
    {"token_hash", (PyCFunction)(void (*)(void))token_hash, METH_FASTCALL,
     "A token's keyed hash, as hashing.TokenHasher.hash gives it."},
    {"fisher_evidence", fisher_evidence, METH_VARARGS,
     "classifier.fisher_evidence: the evidence of the clues' sums of logarithms."},
    {"combine", combine, METH_O,
     "classifier._combine's evidence and shown clues, or None when nothing is known."},
    {"judge_words", judge_words, METH_VARARGS,
     "classifier.judge_words's evidence and shown clues, or None when nothing is known."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot module_slots[] = {
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "intake.domain.native.clues",
    "The learning filter's classifier (domain/spam/classifier.py is the reference).", 0,
    methods, module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_clues(void)
{
    return PyModuleDef_Init(&module);
}
