/* A scope's token counts (model.Statistics.tokens) packed in C: each token's keyed 64-bit
 * hash and its packed counts (model.pack) side by side in one slot of 16 bytes, four to
 * a cache line. A dict of them holds two Python ints per token, wherever the heap put
 * them: reading a token's counts there walks its index, its entry, its key (to compare)
 * and its value, four reads that each miss the cache in a table of 100,000 tokens; here
 * a read is one slot, found with no int made for the hash. Built once from a dict and
 * never changed (a change of the statistics makes a new Statistics); the tokens are
 * listed in the dict's order. Included by clues.c. */

#ifndef INTAKE_TOKEN_COUNTS_H
#define INTAKE_TOKEN_COUNTS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int64_t token; /* 0 marks an empty slot: the token 0 is kept apart */
    uint64_t packed;
} count_slot;

#define ZERO_TOKEN UINT32_MAX /* in `order`: the token 0, kept apart */

static PyTypeObject TokenCounts_type;

typedef struct {
    PyObject_HEAD
    count_slot *slots;
    uint32_t *order; /* each token's slot, in the order given */
    size_t mask;     /* slots - 1, a power of two less one */
    Py_ssize_t count;
    int has_zero;
    uint64_t zero_packed;
} TokenCounts;

/* Where a token's search starts. The hashes are keyed BLAKE2b, but a caller may give
 * any ints: mixed, so that a run of small ones spreads. */
static inline size_t
count_home(const TokenCounts *counts, int64_t token)
{
    uint64_t h = (uint64_t)token;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & counts->mask;
}

/* The token's packed counts in *packed: 1, or 0 when it has none. */
static int
counts_find(const TokenCounts *counts, int64_t token, uint64_t *packed)
{
    if (token == 0) {
        *packed = counts->zero_packed;
        return counts->has_zero;
    }
    for (size_t at = count_home(counts, token);; at = (at + 1) & counts->mask) {
        const count_slot *slot = &counts->slots[at];
        if (slot->token == token) {
            *packed = slot->packed;
            return 1;
        }
        if (slot->token == 0) {
            return 0;
        }
    }
}

/* Adds a token not yet held; the table has room (at most half full). */
static void
counts_put(TokenCounts *counts, int64_t token, uint64_t packed)
{
    uint32_t where = ZERO_TOKEN;
    if (token == 0) {
        counts->has_zero = 1;
        counts->zero_packed = packed;
    }
    else {
        size_t at = count_home(counts, token);
        while (counts->slots[at].token != 0) {
            at = (at + 1) & counts->mask;
        }
        counts->slots[at] = (count_slot){token, packed};
        where = (uint32_t)at;
    }
    counts->order[counts->count++] = where;
}

/* -- the counts as Python sees them: a read-only mapping of int to int ---------------- */

/* An empty table with room for `most` tokens, at most half full. */
static int
counts_make(TokenCounts *counts, Py_ssize_t most)
{
    if (most >= (Py_ssize_t)(UINT32_MAX / 4)) {
        PyErr_SetString(PyExc_OverflowError, "too many tokens for packed counts");
        return -1;
    }
    size_t size = 8;
    while (size < (size_t)most * 2) {
        size <<= 1;
    }
    counts->slots = PyMem_Calloc(size, sizeof(count_slot));
    counts->order = PyMem_Malloc(sizeof(uint32_t) * (size_t)(most ? most : 1));
    if (counts->slots == NULL || counts->order == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    counts->mask = size - 1;
    return 0;
}

static int
counts_fill(TokenCounts *counts, PyObject *tokens)
{
    Py_ssize_t at = 0;
    if (counts_make(counts, PyDict_GET_SIZE(tokens)) < 0) {
        return -1;
    }
    PyObject *key, *value;
    while (PyDict_Next(tokens, &at, &key, &value)) {
        if (!PyLong_Check(key) || !PyLong_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "packed counts map an int to an int");
            return -1;
        }
        long long token = PyLong_AsLongLong(key);
        if (token == -1 && PyErr_Occurred()) {
            return -1;
        }
        unsigned long long packed = PyLong_AsUnsignedLongLong(value);
        if (packed == (unsigned long long)-1 && PyErr_Occurred()) {
            return -1;
        }
        counts_put(counts, (int64_t)token, (uint64_t)packed);
    }
    return 0;
}

static PyObject *
TokenCounts_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *tokens;
    if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyArg_ParseTuple(args, "O!", &PyDict_Type, &tokens)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "TokenCounts(tokens: dict[int, int])");
        }
        return NULL;
    }
    TokenCounts *counts = (TokenCounts *)type->tp_alloc(type, 0);
    if (counts != NULL && counts_fill(counts, tokens) < 0) {
        Py_CLEAR(counts); /* dealloc frees what was made */
    }
    return (PyObject *)counts;
}

static void
TokenCounts_dealloc(TokenCounts *counts)
{
    PyMem_Free(counts->slots);
    PyMem_Free(counts->order);
    Py_TYPE(counts)->tp_free((PyObject *)counts);
}

static Py_ssize_t
TokenCounts_length(TokenCounts *counts)
{
    return counts->count;
}

/* The int `key` as a token: 1, or 0 when no token can be it (not an int, or past 64
 * bits), -1 on an error. */
static int
as_token(PyObject *key, int64_t *token)
{
    if (!PyLong_Check(key)) {
        return 0;
    }
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(key, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    *token = (int64_t)value;
    return !overflow;
}

/* The key's packed counts as an int, or NULL: with no error raised when it has none. */
static PyObject *
counts_lookup(TokenCounts *counts, PyObject *key)
{
    int64_t token;
    uint64_t packed;
    int is_token = as_token(key, &token);
    if (is_token <= 0 || !counts_find(counts, token, &packed)) {
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(packed);
}

static PyObject *
TokenCounts_subscript(TokenCounts *counts, PyObject *key)
{
    PyObject *packed = counts_lookup(counts, key);
    if (packed == NULL && !PyErr_Occurred()) {
        PyErr_SetObject(PyExc_KeyError, key);
    }
    return packed;
}

static int
TokenCounts_contains(TokenCounts *counts, PyObject *key)
{
    int64_t token;
    uint64_t packed;
    int is_token = as_token(key, &token);
    return is_token <= 0 ? is_token : counts_find(counts, token, &packed);
}

static PyObject *
TokenCounts_get(TokenCounts *counts, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(token, default=None)");
        return NULL;
    }
    PyObject *packed = counts_lookup(counts, args[0]);
    if (packed != NULL || PyErr_Occurred()) {
        return packed;
    }
    return Py_NewRef(nargs == 2 ? args[1] : Py_None);
}

/* The i-th token given and its counts. */
static void
counts_at(const TokenCounts *counts, Py_ssize_t i, int64_t *token, uint64_t *packed)
{
    uint32_t where = counts->order[i];
    if (where == ZERO_TOKEN) {
        *token = 0;
        *packed = counts->zero_packed;
        return;
    }
    *token = counts->slots[where].token;
    *packed = counts->slots[where].packed;
}

static PyObject *
TokenCounts_iter(TokenCounts *counts)
{
    PyObject *tokens = PyList_New(counts->count);
    for (Py_ssize_t i = 0; tokens != NULL && i < counts->count; i++) {
        int64_t token;
        uint64_t packed;
        counts_at(counts, i, &token, &packed);
        PyObject *item = PyLong_FromLongLong(token);
        if (item == NULL) {
            Py_CLEAR(tokens);
            break;
        }
        PyList_SET_ITEM(tokens, i, item);
    }
    if (tokens == NULL) {
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(tokens);
    Py_DECREF(tokens);
    return iterator;
}

/* The slot holding a token other than 0, or NULL. */
static count_slot *
counts_slot(const TokenCounts *counts, int64_t token)
{
    for (size_t at = count_home(counts, token);; at = (at + 1) & counts->mask) {
        count_slot *slot = &counts->slots[at];
        if (slot->token == token) {
            return slot;
        }
        if (slot->token == 0) {
            return NULL;
        }
    }
}

/* A copy of the counts, with room for `more` tokens in its order. */
static TokenCounts *
counts_copy(TokenCounts *counts, Py_ssize_t more)
{
    TokenCounts *copy = (TokenCounts *)Py_TYPE(counts)->tp_alloc(Py_TYPE(counts), 0);
    if (copy == NULL) {
        return NULL;
    }
    size_t size = counts->mask + 1;
    copy->slots = PyMem_Malloc(sizeof(count_slot) * size);
    copy->order = PyMem_Malloc(sizeof(uint32_t) * (size_t)(counts->count + more + 1));
    if (copy->slots == NULL || copy->order == NULL) {
        Py_DECREF(copy);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy->slots, counts->slots, sizeof(count_slot) * size);
    memcpy(copy->order, counts->order, sizeof(uint32_t) * (size_t)counts->count);
    copy->mask = counts->mask;
    copy->count = counts->count;
    copy->has_zero = counts->has_zero;
    copy->zero_packed = counts->zero_packed;
    return copy;
}

/* The counts with the change, made anew: where a token is dropped, or the table is
 * too small for the new ones. */
static TokenCounts *
counts_rebuilt(TokenCounts *counts, TokenCounts *change, Py_ssize_t limit)
{
    TokenCounts *merged = (TokenCounts *)Py_TYPE(counts)->tp_alloc(Py_TYPE(counts), 0);
    if (merged == NULL || counts_make(merged, counts->count + change->count) < 0) {
        Py_XDECREF(merged);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < counts->count; i++) {
        int64_t token;
        uint64_t packed, changed;
        counts_at(counts, i, &token, &packed);
        if (counts_find(change, token, &changed)) {
            if (changed == 0) {
                continue;
            }
            packed = changed;
        }
        counts_put(merged, token, packed);
    }
    for (Py_ssize_t i = 0; i < change->count && merged->count < limit; i++) {
        int64_t token;
        uint64_t packed, held;
        counts_at(change, i, &token, &packed);
        if (packed != 0 && !counts_find(counts, token, &held)) {
            counts_put(merged, token, packed);
        }
    }
    return merged;
}

/* These counts with a change read since (spam_knowledge's merge, as a dict would take
 * it): a token whose counts went to 0 is dropped, one held takes its new counts in its
 * place, and a new one is added after the others, in the change's order, while fewer
 * than `limit` are held. A change is most often a few tokens' new counts: the table is
 * copied whole, as a dict is, and changed in place. */
static PyObject *
TokenCounts_merged(TokenCounts *counts, PyObject *args)
{
    TokenCounts *change;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!n:merged", &TokenCounts_type, &change, &limit)) {
        return NULL;
    }
    Py_ssize_t fresh = 0;
    for (Py_ssize_t i = 0; i < change->count; i++) {
        int64_t token;
        uint64_t packed, held;
        counts_at(change, i, &token, &packed);
        int is_held = counts_find(counts, token, &held);
        if (packed == 0 && is_held) {
            return (PyObject *)counts_rebuilt(counts, change, limit);
        }
        fresh += packed != 0 && !is_held;
    }
    if ((size_t)(counts->count + fresh) * 2 > counts->mask + 1) {
        return (PyObject *)counts_rebuilt(counts, change, limit);
    }
    TokenCounts *merged = counts_copy(counts, fresh);
    for (Py_ssize_t i = 0; merged != NULL && i < change->count; i++) {
        int64_t token;
        uint64_t packed;
        counts_at(change, i, &token, &packed);
        count_slot *slot = token == 0 ? NULL : counts_slot(merged, token);
        if (packed == 0) {
            continue;
        }
        if (token == 0 && merged->has_zero) {
            merged->zero_packed = packed;
        }
        else if (slot != NULL) {
            slot->packed = packed;
        }
        else if (merged->count < limit) {
            counts_put(merged, token, packed);
        }
    }
    return (PyObject *)merged;
}

static PyMappingMethods TokenCounts_mapping = {
    (lenfunc)TokenCounts_length,
    (binaryfunc)TokenCounts_subscript,
    NULL,
};

static PySequenceMethods TokenCounts_sequence = {
    .sq_contains = (objobjproc)TokenCounts_contains,
};

static PyMethodDef TokenCounts_methods[] = {
    {"get", (PyCFunction)(void (*)(void))TokenCounts_get, METH_FASTCALL,
     "The token's packed counts, or `default` when it has none."},
    {"merged", (PyCFunction)TokenCounts_merged, METH_VARARGS,
     "merged(change, limit): these counts with a change read since, as a dict would take it."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TokenCounts_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "intake.domain.native.clues.TokenCounts",
    .tp_basicsize = sizeof(TokenCounts),
    .tp_dealloc = (destructor)TokenCounts_dealloc,
    .tp_as_mapping = &TokenCounts_mapping,
    .tp_as_sequence = &TokenCounts_sequence,
    .tp_iter = (getiterfunc)TokenCounts_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A scope's token counts, packed (model.Statistics.tokens).",
    .tp_methods = TokenCounts_methods,
    .tp_new = TokenCounts_new,
};

#endif
