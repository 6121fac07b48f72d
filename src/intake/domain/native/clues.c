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
#include "token_counts.h"
#include "word_memo.h"
#include "word_spans.h"

#define STRENGTH 0.15
#define UNKNOWN 0.5
#define MIN_DEVIATION 0.3
#define MAX_CLUES 150
#define SHOWN_CLUES 6
#define WORD_MEMO 50000

static const double spammy = UNKNOWN + MIN_DEVIATION, hammy = UNKNOWN - MIN_DEVIATION;

/* -- token hashes (hashing.py's TokenHasher.hash) ------------------------------------ */

/* BLAKE2b of a token's UTF-8 (as the "surrogatepass" error handler writes it). */
static struct {
    uint8_t key[64];
    size_t key_length;
    blake2b_state state;
} after_key; /* the last key's, under the GIL */

static int64_t
hash_bytes(const uint8_t *bytes, size_t n, const uint8_t *key, size_t key_length)
{
    blake2b_state state;
    if (n == 0) {
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
    blake2b_update(&state, bytes, n);
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
    if (PyUnicode_IS_ASCII(args[1])) {
        return PyLong_FromLongLong(hash_bytes(PyUnicode_DATA(args[1]),
                                              (size_t)PyUnicode_GET_LENGTH(args[1]), key,
                                              key_length));
    }
    byte_buffer b = {NULL, 0, 0};
    if (append_str(&b, args[1]) < 0) {
        PyMem_Free(b.bytes);
        return NULL;
    }
    int64_t hash = hash_bytes(b.bytes, b.used, key, key_length);
    PyMem_Free(b.bytes);
    return PyLong_FromLongLong(hash);
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

/* The clues among `found` (0.0: not a clue), the MAX_CLUES strongest: their evidence and
 * the SHOWN_CLUES strongest, most telling first. 1, or 0 when there is none, -1 on an
 * error. */
static int
choose_clues(const double *found, Py_ssize_t n, double *evidence, clue shown[SHOWN_CLUES],
             int *n_shown)
{
    clue *clues = PyMem_Malloc(sizeof(clue) * (size_t)(n ? n : 1));
    if (clues == NULL) {
        PyErr_NoMemory();
        return -1;
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
        return 0;
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
    *evidence = evidence_of(total(&ln_f), total(&ln_not_f), (long)count);
    /* The SHOWN_CLUES strongest, by insertion into a short sorted list. */
    *n_shown = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int at = *n_shown;
        while (at > 0 && stronger_first(&clues[i], &shown[at - 1]) < 0) {
            at--;
        }
        if (at >= SHOWN_CLUES) {
            continue;
        }
        int last = *n_shown < SHOWN_CLUES ? *n_shown : SHOWN_CLUES - 1;
        for (int k = last; k > at; k--) {
            shown[k] = shown[k - 1];
        }
        shown[at] = clues[i];
        if (*n_shown < SHOWN_CLUES) {
            (*n_shown)++;
        }
    }
    PyMem_Free(clues);
    return 1;
}

/* (evidence, ((index, f), ...)) of the clues among `found`, or None. */
static PyObject *
combine_found(const double *found, Py_ssize_t n)
{
    double evidence;
    clue shown[SHOWN_CLUES];
    int n_shown;
    int chosen = choose_clues(found, n, &evidence, shown, &n_shown);
    if (chosen <= 0) {
        return chosen < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *told = PyTuple_New(n_shown);
    for (int k = 0; told != NULL && k < n_shown; k++) {
        PyObject *pair = Py_BuildValue("(nd)", shown[k].where, shown[k].f);
        if (pair == NULL) {
            Py_CLEAR(told);
            break;
        }
        PyTuple_SET_ITEM(told, k, pair);
    }
    return told == NULL ? NULL : Py_BuildValue("(dN)", evidence, told);
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

#include "message_judge.h"

static PyObject *
judge_words(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *words, *tokens, *key;
    WordMemo *memo;
    long long spam_messages, ham_messages;
    counts c;
    message m;
    if (!PyArg_ParseTuple(args, "OO!OOLL:judge_words", &words, &WordMemo_type, &memo, &tokens,
                          &key, &spam_messages, &ham_messages)
        || read_counts(&c, tokens, key, spam_messages, ham_messages) < 0) {
        return NULL;
    }
    PyObject *items = PySequence_Fast(words, "judge_words() takes a sequence of words");
    if (items == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject *result = NULL;
    if (message_open(&m, &c, memo, n) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (judge_str(&m, PySequence_Fast_GET_ITEM(items, i)) < 0) {
            goto done;
        }
    }
    if (judge_all(&m) < 0) {
        goto done;
    }
    result = combine_found(m.found, m.n);
done:
    message_close(&m);
    Py_DECREF(items);
    return result;
}

/* tokens.py's list (`out`'s keys, then the subject's words and the body's, as with_words
 * in words.c lists them) judged as judge_words judges it, with no str made for a word. */
static PyObject *
judge_text(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *out, *subject, *body, *tokens, *key, *token, *ignored;
    WordMemo *memo;
    long long spam_messages, ham_messages;
    counts c;
    message m;
    if (!PyArg_ParseTuple(args, "O!UUO!OOLL:judge_text", &PyDict_Type, &out, &subject, &body,
                          &WordMemo_type, &memo, &tokens, &key, &spam_messages, &ham_messages)
        || read_counts(&c, tokens, key, spam_messages, ham_messages) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t listed = PyDict_GET_SIZE(out), at = 0;
    if (message_open(&m, &c, memo, listed + MAX_TOKENS) < 0) {
        goto done;
    }
    while (PyDict_Next(out, &at, &token, &ignored)) {
        if (judge_str(&m, token) < 0) {
            goto done;
        }
    }
    m.prefix = "subject:";
    if (each_word(subject, MAX_TOKENS - m.n, judge_word, &m) < 0) {
        goto done;
    }
    m.prefix = "";
    if (each_word(body, MAX_TOKENS - m.n, judge_word, &m) < 0 || judge_all(&m) < 0) {
        goto done;
    }
    result = judged_by_word(&m);
done:
    message_close(&m);
    return result;
}

static int
add_types(PyObject *module)
{
    if (PyType_Ready(&WordMemo_type) < 0 || PyType_Ready(&TokenCounts_type) < 0
        || PyModule_AddObjectRef(module, "TokenCounts", (PyObject *)&TokenCounts_type) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "WordMemo", (PyObject *)&WordMemo_type);
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
    {"judge_text", judge_text, METH_VARARGS,
     "classifier.judge_text's evidence and shown clues (as tokens), or None."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, add_types},
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
    fill_separators();
    return PyModuleDef_Init(&module);
}
