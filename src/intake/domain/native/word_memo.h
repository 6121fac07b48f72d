/* The word memo (model.Statistics.word_memo): each word's f, remembered beside the
 * statistics it was worked out from. A table of its own rather than a dict of str: a
 * word is looked up by its UTF-8 (as "surrogatepass" writes it), straight from the text
 * it was read in, with no str made for it.
 *
 * A lookup reads one slot of 16 bytes, four to a cache line: the word's fingerprint and
 * its f. A message's hundred or so lookups land anywhere in a table of up to 50,000
 * words, so each is a cache miss, and a second read (of the word's bytes, to compare)
 * would be another. The fingerprint is CPython's keyed hash of the bytes (SipHash-1-3
 * under the process's secret, what every dict of str relies on): 64 bits, as the
 * statistics know a token by its 64-bit keyed BLAKE2b, and no sender can make two words
 * share one without the secret (random unless PYTHONHASHSEED sets it). The words' bytes
 * are kept beside, for items(), and read by no lookup. Included by clues.c. */

#ifndef INTAKE_WORD_MEMO_H
#define INTAKE_WORD_MEMO_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "utf8_buffer.h"

/* CPython's keyed hash of bytes (SipHash under the process's secret): public from
   3.14, before that only by its older, underscored name. */
#if PY_VERSION_HEX >= 0x030E0000
#define INTAKE_HASH_BYTES Py_HashBuffer
#else
#define INTAKE_HASH_BYTES _Py_HashBytes
#endif

/* A word's fingerprint: never 0, which marks an empty slot. */
static uint64_t
slot_hash(const uint8_t *bytes, size_t n)
{
    uint64_t h = (uint64_t)INTAKE_HASH_BYTES(bytes, (Py_ssize_t)n);
    return h ? h : 1;
}

typedef struct {
    uint64_t hash; /* the word's fingerprint; 0: an empty slot */
    double f;
} memo_slot;

typedef struct {
    uint32_t at, length; /* the word's bytes in the memo's buffer */
} memo_word;

typedef struct {
    PyObject_HEAD
    memo_slot *slots;
    memo_word *spelled; /* slot i's word, read only by items() */
    size_t mask;        /* slots - 1, a power of two less one; 0 before the first word */
    Py_ssize_t count;
    byte_buffer words;
} WordMemo;

static memo_slot *
memo_find(const WordMemo *memo, uint64_t hash)
{
    if (memo->slots == NULL) {
        return NULL;
    }
    for (size_t at = (size_t)hash & memo->mask;; at = (at + 1) & memo->mask) {
        memo_slot *slot = &memo->slots[at];
        if (slot->hash == hash) {
            return slot;
        }
        if (slot->hash == 0) {
            return NULL;
        }
    }
}

/* Asks the cache for the slot where the search for `hash` starts, not waiting for it. */
static inline void
memo_prefetch(const WordMemo *memo, uint64_t hash)
{
#if defined(__GNUC__) || defined(__clang__)
    if (memo->slots != NULL) {
        __builtin_prefetch(&memo->slots[(size_t)hash & memo->mask]);
    }
#else
    (void)memo;
    (void)hash;
#endif
}

/* The free slot where `hash` goes. */
static size_t
free_slot(const memo_slot *slots, size_t mask, uint64_t hash)
{
    size_t at = (size_t)hash & mask;
    while (slots[at].hash != 0) {
        at = (at + 1) & mask;
    }
    return at;
}

/* Room for one more word: the table stays at most half full. */
static int
memo_grow(WordMemo *memo)
{
    size_t size = memo->slots == NULL ? 64 : memo->mask + 1;
    if ((size_t)(memo->count + 1) * 2 <= size && memo->slots != NULL) {
        return 0;
    }
    size_t grown = memo->slots == NULL ? size : size * 2;
    memo_slot *slots = PyMem_Calloc(grown, sizeof(memo_slot));
    memo_word *spelled = PyMem_Calloc(grown, sizeof(memo_word));
    if (slots == NULL || spelled == NULL) {
        PyMem_Free(slots);
        PyMem_Free(spelled);
        PyErr_NoMemory();
        return -1;
    }
    if (memo->slots != NULL) {
        for (size_t i = 0; i <= memo->mask; i++) {
            if (memo->slots[i].hash != 0) {
                size_t at = free_slot(slots, grown - 1, memo->slots[i].hash);
                slots[at] = memo->slots[i];
                spelled[at] = memo->spelled[i];
            }
        }
        PyMem_Free(memo->slots);
        PyMem_Free(memo->spelled);
    }
    memo->slots = slots;
    memo->spelled = spelled;
    memo->mask = grown - 1;
    return 0;
}

/* Remembers a word not in the memo. */
static int
memo_add(WordMemo *memo, const uint8_t *bytes, size_t n, uint64_t hash, double f)
{
    if (n > UINT32_MAX || memo->words.used + n > UINT32_MAX) {
        return 0; /* past what a slot can point at: not remembered, worked out again */
    }
    if (memo_grow(memo) < 0 || reserve(&memo->words, n) < 0) {
        return -1;
    }
    memcpy(memo->words.bytes + memo->words.used, bytes, n);
    size_t at = free_slot(memo->slots, memo->mask, hash);
    memo->slots[at] = (memo_slot){hash, f};
    memo->spelled[at] = (memo_word){(uint32_t)memo->words.used, (uint32_t)n};
    memo->words.used += n;
    memo->count++;
    return 0;
}

static void
memo_clear(WordMemo *memo)
{
    PyMem_Free(memo->slots);
    PyMem_Free(memo->spelled);
    PyMem_Free(memo->words.bytes);
    memo->slots = NULL;
    memo->spelled = NULL;
    memo->mask = 0;
    memo->count = 0;
    memo->words = (byte_buffer){NULL, 0, 0};
}

/* -- the memo as Python sees it: a mapping of word (str) to f ---------------------------- */

/* The word's UTF-8 in `b` (emptied first). */
static int
word_bytes(byte_buffer *b, PyObject *word)
{
    if (!PyUnicode_Check(word)) {
        PyErr_SetString(PyExc_TypeError, "a word is a str");
        return -1;
    }
    b->used = 0;
    return append_str(b, word);
}

static PyObject *
WordMemo_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "WordMemo() takes no arguments");
        return NULL;
    }
    return type->tp_alloc(type, 0); /* zeroed: an empty memo */
}

static void
WordMemo_dealloc(WordMemo *memo)
{
    memo_clear(memo);
    Py_TYPE(memo)->tp_free((PyObject *)memo);
}

static Py_ssize_t
WordMemo_length(WordMemo *memo)
{
    return memo->count;
}

/* The slot of `word`, or NULL (with no error raised when it is simply not there). */
static memo_slot *
slot_of(WordMemo *memo, PyObject *word)
{
    byte_buffer b = {NULL, 0, 0};
    if (word_bytes(&b, word) < 0) {
        PyMem_Free(b.bytes);
        return NULL;
    }
    memo_slot *slot = memo_find(memo, slot_hash(b.bytes, b.used));
    PyMem_Free(b.bytes);
    return slot;
}

static PyObject *
WordMemo_subscript(WordMemo *memo, PyObject *word)
{
    memo_slot *slot = slot_of(memo, word);
    if (slot == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetObject(PyExc_KeyError, word);
        }
        return NULL;
    }
    return PyFloat_FromDouble(slot->f);
}

static int
WordMemo_assign(WordMemo *memo, PyObject *word, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "a word memo forgets only all at once: clear()");
        return -1;
    }
    double f = PyFloat_AsDouble(value);
    if (f == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    byte_buffer b = {NULL, 0, 0};
    int result = word_bytes(&b, word);
    if (result == 0) {
        uint64_t hash = slot_hash(b.bytes, b.used);
        memo_slot *slot = memo_find(memo, hash);
        if (slot != NULL) {
            slot->f = f;
        }
        else {
            result = memo_add(memo, b.bytes, b.used, hash, f);
        }
    }
    PyMem_Free(b.bytes);
    return result;
}

static PyObject *
WordMemo_get(WordMemo *memo, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(word, default=None)");
        return NULL;
    }
    memo_slot *slot = slot_of(memo, args[0]);
    if (slot != NULL) {
        return PyFloat_FromDouble(slot->f);
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    return Py_NewRef(nargs == 2 ? args[1] : Py_None);
}

static PyObject *
WordMemo_clear(WordMemo *memo, PyObject *Py_UNUSED(ignored))
{
    memo_clear(memo);
    Py_RETURN_NONE;
}

static PyObject *
WordMemo_items(WordMemo *memo, PyObject *Py_UNUSED(ignored))
{
    PyObject *items = PyList_New(0);
    for (size_t i = 0; items != NULL && memo->slots != NULL && i <= memo->mask; i++) {
        const memo_slot *slot = &memo->slots[i];
        if (slot->hash == 0) {
            continue;
        }
        const memo_word *word = &memo->spelled[i];
        PyObject *item = Py_BuildValue(
            "(Nd)",
            PyUnicode_DecodeUTF8((const char *)memo->words.bytes + word->at,
                                 (Py_ssize_t)word->length, "surrogatepass"),
            slot->f);
        if (item == NULL || PyList_Append(items, item) < 0) {
            Py_CLEAR(items);
        }
        Py_XDECREF(item);
    }
    return items;
}

static PyMappingMethods WordMemo_mapping = {
    (lenfunc)WordMemo_length,
    (binaryfunc)WordMemo_subscript,
    (objobjargproc)WordMemo_assign,
};

static PyMethodDef WordMemo_methods[] = {
    {"get", (PyCFunction)(void (*)(void))WordMemo_get, METH_FASTCALL,
     "The word's f, or `default` when it is not remembered."},
    {"clear", (PyCFunction)WordMemo_clear, METH_NOARGS, "Forgets every word."},
    {"items", (PyCFunction)WordMemo_items, METH_NOARGS, "The (word, f) remembered."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WordMemo_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "intake.domain.native.clues.WordMemo",
    .tp_basicsize = sizeof(WordMemo),
    .tp_dealloc = (destructor)WordMemo_dealloc,
    .tp_as_mapping = &WordMemo_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Each word's f for one Statistics (model.Statistics.word_memo).",
    .tp_methods = WordMemo_methods,
    .tp_new = WordMemo_new,
};

#endif
