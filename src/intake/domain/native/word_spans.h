/* The words of a text as the learning filter reads them: domain/spam/tokens.py's
 * _word_tokens in one pass of C, with the same tokens in the same order. tokens.py is the
 * reference and the constants below are its; tests/property/test_native_words.py compares
 * the two over arbitrary text. Included by words.c, which makes each word a str, and by
 * clues.c, which judges them without one.
 *
 * The Python splits the text at whitespace and punctuation, drops repeated raw words,
 * strips edge characters, and keeps, in this order and each once: the words of 3 to
 * MAX_WORD characters (a long run of digits as "#<length>"), then "long:<first><size>"
 * for the longer ones, then the two-character words outside ASCII. Dropping repeated raw
 * words before the final dedupe changes nothing (a repeat gives the same tokens, later),
 * so here the one dedupe is the final one, over spans of the text: a word is handed on
 * only once it is kept. */

#ifndef INTAKE_WORD_SPANS_H
#define INTAKE_WORD_SPANS_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8_buffer.h"

#define MAX_WORD 24
#define MAX_NUMBER 6

enum kind { WORD, NUMBER, LONG };

typedef struct {
    Py_ssize_t start, length;
    int kind;
} item;

#define MAX_TOKENS 300

/* Where punctuation becomes a space (tokens.py's _SPACES) or whitespace splits: for ASCII,
 * a table the module fills from Py_UNICODE_ISSPACE and the punctuation. */
static unsigned char ascii_separators[128];
static const char punctuation[] = "!\"#&()*+,/:;<=>?[\\]^`{|}~";

static void
fill_separators(void)
{
    for (Py_UCS4 c = 0; c < 128; c++) {
        ascii_separators[c] = Py_UNICODE_ISSPACE(c) || (c && strchr(punctuation, (int)c));
    }
}

static inline int
is_separator(Py_UCS4 c)
{
    if (c < 128) {
        return ascii_separators[c];
    }
    return c == 0x00a0 || c == 0x200b || Py_UNICODE_ISSPACE(c);
}

/* tokens.py's _EDGES, stripped from both ends of a word. */
static int
is_edge(Py_UCS4 c)
{
    return c == '.' || c == '\'' || c == '-' || c == '@' || c == '_' || c == '%' || c == '$';
}

static int
bit_length(Py_ssize_t n)
{
    int bits = 0;
    while (n) {
        bits++;
        n >>= 1;
    }
    return bits;
}

typedef struct {
    int kind;
    const void *data;
    /* Open addressing over spans, by content: slot holds index + 1 into the items. */
    Py_ssize_t *slots;
    size_t mask;
} spans;

static uint64_t
span_hash(const spans *set, Py_ssize_t start, Py_ssize_t length)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = start; i < start + length; i++) {
        h = (h ^ PyUnicode_READ(set->kind, set->data, i)) * 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static int
span_equal(const spans *set, const item *a, const item *b)
{
    if (a->length != b->length) {
        return 0;
    }
    size_t width = (size_t)set->kind;
    return memcmp((const char *)set->data + a->start * width,
                  (const char *)set->data + b->start * width, (size_t)a->length * width) == 0;
}

/* 1 when the span at items[index] is new (and now known), 0 when seen before. */
static int
span_add(spans *set, item *items, Py_ssize_t index)
{
    const item *it = &items[index];
    size_t slot = (size_t)span_hash(set, it->start, it->length) & set->mask;
    while (set->slots[slot]) {
        if (span_equal(set, &items[set->slots[slot] - 1], it)) {
            return 0;
        }
        slot = (slot + 1) & set->mask;
    }
    set->slots[slot] = index + 1;
    return 1;
}

static int
all_digits(int kind, const void *data, Py_ssize_t start, Py_ssize_t length)
{
    for (Py_ssize_t i = start; i < start + length; i++) {
        if (!Py_UNICODE_ISDIGIT(PyUnicode_READ(kind, data, i))) {
            return 0;
        }
    }
    return 1;
}

/* The text's words, stripped, sorted into the three kinds' lists in the text's order. */
typedef struct {
    item *items;      /* the words and numbers, then the long ones, then the pairs */
    Py_ssize_t words; /* items[0:words] */
    item *longs, *pairs;
    Py_ssize_t n_longs, n_pairs;
} split_words;

/* The word that ends at `end` (its separator or the text's end), from `start`, stripped
 * and sorted into its kind's list. */
static void
keep_word(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, split_words *out)
{
    while (start < end && is_edge(PyUnicode_READ(kind, data, start))) {
        start++;
    }
    while (end > start && is_edge(PyUnicode_READ(kind, data, end - 1))) {
        end--;
    }
    Py_ssize_t length = end - start;
    if (length > 2 && length <= MAX_WORD) {
        int number = length > MAX_NUMBER && all_digits(kind, data, start, length);
        out->items[out->words++] = (item){start, length, number ? NUMBER : WORD};
    }
    else if (length > MAX_WORD) {
        out->longs[out->n_longs++] = (item){start, length, LONG};
    }
    else if (length == 2 && (PyUnicode_READ(kind, data, start) > 0x7f
                             || PyUnicode_READ(kind, data, start + 1) > 0x7f)) {
        out->pairs[out->n_pairs++] = (item){start, length, WORD};
    }
}

/* The scan for words, one loop per width of character, so that each reads its own. */
#define SPLIT(TYPE, KIND)                                                                   \
    {                                                                                       \
        const TYPE *chars = data;                                                           \
        while (i < n) {                                                                     \
            while (i < n && is_separator(chars[i])) {                                       \
                i++;                                                                        \
            }                                                                               \
            Py_ssize_t start = i;                                                           \
            while (i < n && !is_separator(chars[i])) {                                      \
                i++;                                                                        \
            }                                                                               \
            if (i > start) {                                                                \
                keep_word(KIND, data, start, i, out);                                       \
            }                                                                               \
        }                                                                                   \
    }

static void
split(PyObject *text, split_words *out)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        SPLIT(Py_UCS1, PyUnicode_1BYTE_KIND)
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        SPLIT(Py_UCS2, PyUnicode_2BYTE_KIND)
    }
    else {
        SPLIT(Py_UCS4, PyUnicode_4BYTE_KIND)
    }
}

/* Whether the item is new among those kept: a word by its characters, a number by its
 * length, a long word by its first character and size. */
static int
is_new(spans *set, item *items, Py_ssize_t index, uint32_t *numbers, const item *longs,
       const Py_ssize_t *kept_longs, Py_ssize_t n_kept_longs)
{
    const item *it = &items[index];
    if (it->kind == WORD) {
        return span_add(set, items, index);
    }
    if (it->kind == NUMBER) {
        uint32_t bit = (uint32_t)1 << it->length;
        int fresh = !(*numbers & bit);
        *numbers |= bit;
        return fresh;
    }
    Py_UCS4 first = PyUnicode_READ(set->kind, set->data, it->start);
    int size = bit_length(it->length);
    for (Py_ssize_t k = 0; k < n_kept_longs; k++) {
        const item *other = &longs[kept_longs[k]];
        if (PyUnicode_READ(set->kind, set->data, other->start) == first
            && bit_length(other->length) == size) {
            return 0;
        }
    }
    return 1;
}

/* Appends the kept word as tokens.py writes it after its prefix: the word itself,
 * "#<length>" for a long number, or "long:<first><size>" for a long run. */
static int
append_word(byte_buffer *b, PyObject *text, const item *it)
{
    char digits[32];
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (it->kind == NUMBER) {
        int n = snprintf(digits, sizeof digits, "#%zd", it->length);
        return append_ascii(b, digits, (size_t)n);
    }
    if (it->kind == LONG) {
        int n = snprintf(digits, sizeof digits, "%d", bit_length(it->length));
        return append_ascii(b, "long:", 5) < 0 || append_utf8(b, kind, data, it->start, 1) < 0
                       || append_ascii(b, digits, (size_t)n) < 0
                   ? -1
                   : 0;
    }
    return append_utf8(b, kind, data, it->start, it->length);
}

/* What is done with each word kept, in order: 0, or -1 on an error (raised). */
typedef int (*word_sink)(void *context, PyObject *text, const item *it);

/* Hands the text's words, up to `room` of them, to `sink`: how many, or -1 on an error. */
static Py_ssize_t
each_word(PyObject *text, Py_ssize_t room, word_sink sink, void *context)
{
    if (room <= 0) {
        return 0;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    /* Bounds: a kept word takes 3 characters and a separator, a pair 2, a long word 25. */
    Py_ssize_t word_room = n / 4 + 1, long_room = n / 26 + 1, pair_room = n / 3 + 1;
    item *items = PyMem_Malloc(sizeof(item) * (size_t)(word_room + long_room + pair_room));
    Py_ssize_t *kept_longs = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)long_room);
    Py_ssize_t *slots = NULL;
    Py_ssize_t kept = -1;
    if (items == NULL || kept_longs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    split_words f = {items, 0, items + word_room, items + word_room + long_room, 0, 0};
    split(text, &f);
    size_t size = 8;
    while (size < (size_t)(f.words + f.n_pairs) * 2) {
        size <<= 1;
    }
    slots = PyMem_Calloc(size, sizeof(Py_ssize_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    spans set = {PyUnicode_KIND(text), PyUnicode_DATA(text), slots, size - 1};
    uint32_t numbers = 0;
    Py_ssize_t n_kept_longs = 0;
    kept = 0;
    /* The order the Python appends them in: words, then long ones, then pairs. */
    Py_ssize_t order[3][2] = {{0, f.words},
                              {word_room, word_room + f.n_longs},
                              {word_room + long_room, word_room + long_room + f.n_pairs}};
    for (int part = 0; part < 3 && kept < room; part++) {
        for (Py_ssize_t i = order[part][0]; i < order[part][1] && kept < room; i++) {
            if (!is_new(&set, items, i, &numbers, f.longs, kept_longs, n_kept_longs)) {
                continue;
            }
            if (items[i].kind == LONG) {
                kept_longs[n_kept_longs++] = i - word_room;
            }
            if (sink(context, text, &items[i]) < 0) {
                kept = -1;
                goto done;
            }
            kept++;
        }
    }
done:
    PyMem_Free(items);
    PyMem_Free(kept_longs);
    PyMem_Free(slots);
    return kept;
}

#endif
