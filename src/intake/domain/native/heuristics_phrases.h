/* The spam phrases behind heuristics.c: their table, by first character, and where one
 * starts a word, as scoring's two branches find them. */
#ifndef INTAKE_HEURISTICS_PHRASES_H
#define INTAKE_HEURISTICS_PHRASES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "heuristics_text.h"

typedef struct {
    Py_ssize_t count;
    char **phrases; /* lower case ASCII, each starting with a word character, distinct */
    Py_ssize_t *sizes;
    /* by first character: the phrases starting with it, in order, ended by -1 */
    Py_ssize_t *by_first[128];
    /* by first character: the second characters they go on with, a bit each (all of
     * them for a phrase of one character), which turns most words away at once */
    uint64_t seconds[128][2];
    unsigned char *found; /* per call: which phrases were seen */
} Phrases;

/* Marks the phrases that start at `at`; how many were not marked before. */
static inline Py_ssize_t
mark_phrases(Phrases *self, Text t, Py_ssize_t at)
{
    Py_ssize_t marked = 0;
    unsigned char first = ascii_lower(char_at(t, at));
    if (at + 1 < t.size) {
        unsigned char second = ascii_lower(char_at(t, at + 1));
        if (!((self->seconds[first][second >> 6] >> (second & 63)) & 1)) {
            return 0;
        }
    }
    const Py_ssize_t *p = self->by_first[first];
    for (; p != NULL && *p >= 0; p++) {
        if (!self->found[*p] && starts_with(t, at, self->phrases[*p], self->sizes[*p])) {
            self->found[*p] = 1;
            marked++;
        }
    }
    return marked;
}

/* The ASCII character a phrase's character matches under re.IGNORECASE: an ASCII
 * letter's lower case, and the four others that re folds into one (İ and ı into i, ſ
 * into s, the Kelvin sign into k); 0 for any other character. */
static inline unsigned char
phrase_fold(Py_UCS4 c)
{
    switch (c) {
    case 0x130:
    case 0x131:
        return 'i';
    case 0x17f:
        return 's';
    case 0x212a:
        return 'k';
    default:
        return ascii_lower(c);
    }
}

/* The first phrase (in order) matching at `at`, as re's alternation picks it: its size,
 * or 0. Each distinct phrase as lowered counts once: one written with İ, ı or ſ lowers
 * to a text of its own, kept in `variants`. -1 on an error. */
static Py_ssize_t
match_phrase(Phrases *self, Text t, PyObject *text, Py_ssize_t at, PyObject *variants,
             Py_ssize_t *distinct)
{
    unsigned char first = phrase_fold(char_at(t, at));
    for (const Py_ssize_t *p = self->by_first[first]; first && p && *p >= 0; p++) {
        Py_ssize_t size = self->sizes[*p];
        Py_ssize_t k = 0;
        int variant = 0;
        for (; k < size && at + k < t.size; k++) {
            Py_UCS4 c = char_at(t, at + k);
            if (phrase_fold(c) != (unsigned char)self->phrases[*p][k]) {
                break;
            }
            variant |= c >= 128 && c != 0x212a;
        }
        if (k < size) {
            continue;
        }
        if (!variant) {
            *distinct += !self->found[*p];
            self->found[*p] = 1;
            return size;
        }
        PyObject *written = PyUnicode_Substring(text, at, at + size);
        PyObject *lowered = written ? PyObject_CallMethod(written, "lower", NULL) : NULL;
        Py_XDECREF(written);
        if (lowered == NULL || PySet_Add(variants, lowered) < 0) {
            Py_XDECREF(lowered);
            return -1;
        }
        Py_DECREF(lowered);
        return size;
    }
    return 0;
}

static void
phrases_free(Phrases *self)
{
    for (Py_ssize_t p = 0; p < self->count; p++) {
        PyMem_Free(self->phrases[p]);
    }
    for (int c = 0; c < 128; c++) {
        PyMem_Free(self->by_first[c]);
        self->by_first[c] = NULL;
    }
    memset(self->seconds, 0, sizeof self->seconds);
    PyMem_Free(self->phrases);
    PyMem_Free(self->sizes);
    PyMem_Free(self->found);
    self->phrases = NULL;
    self->sizes = NULL;
    self->found = NULL;
    self->count = 0;
}

/* The phrases, kept distinct, and for each first character the ones starting with it. */
static int
phrases_take(Phrases *self, PyObject *seq)
{
    Py_ssize_t given = PySequence_Fast_GET_SIZE(seq);
    self->phrases = PyMem_Calloc((size_t)given + 1, sizeof(char *));
    self->sizes = PyMem_Calloc((size_t)given + 1, sizeof(Py_ssize_t));
    self->found = PyMem_Calloc((size_t)given + 1, 1);
    if (self->phrases == NULL || self->sizes == NULL || self->found == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t per_first[128] = {0};
    for (Py_ssize_t i = 0; i < given; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        const char *data = PyUnicode_Check(item) && PyUnicode_IS_ASCII(item)
                               ? (const char *)PyUnicode_1BYTE_DATA(item)
                               : NULL;
        Py_ssize_t size = data ? PyUnicode_GET_LENGTH(item) : 0;
        int lowered = 1;
        for (Py_ssize_t k = 0; k < size; k++) {
            lowered &= lower_of[(unsigned char)data[k]] == (unsigned char)data[k];
        }
        if (size == 0 || !lowered || !(classes[(unsigned char)data[0]] & WORD)) {
            PyErr_SetString(PyExc_ValueError,
                            "each phrase is ASCII in lower case, and starts with a letter, "
                            "a digit or _");
            return -1;
        }
        int seen = 0;
        for (Py_ssize_t p = 0; p < self->count && !seen; p++) {
            seen = self->sizes[p] == size && memcmp(self->phrases[p], data, (size_t)size) == 0;
        }
        if (seen) {
            continue;
        }
        char *copy = PyMem_Malloc((size_t)size + 1);
        if (copy == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(copy, data, (size_t)size + 1);
        self->phrases[self->count] = copy;
        self->sizes[self->count] = size;
        per_first[(unsigned char)data[0]]++;
        self->count++;
    }
    for (int c = 0; c < 128; c++) {
        if (per_first[c] == 0) {
            continue;
        }
        self->by_first[c] = PyMem_Malloc(((size_t)per_first[c] + 1) * sizeof(Py_ssize_t));
        if (self->by_first[c] == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t k = 0;
        for (Py_ssize_t p = 0; p < self->count; p++) {
            if ((unsigned char)self->phrases[p][0] == c) {
                self->by_first[c][k++] = p;
                unsigned char second = (unsigned char)self->phrases[p][1];
                if (self->sizes[p] == 1) {
                    self->seconds[c][0] = self->seconds[c][1] = UINT64_MAX;
                }
                else {
                    self->seconds[c][second >> 6] |= (uint64_t)1 << (second & 63);
                }
            }
        }
        self->by_first[c][k] = -1;
    }
    return 0;
}

#endif
