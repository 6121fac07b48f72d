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

/* The words and pairs kept so far, found again by their characters: at most MAX_TOKENS of
 * them (each_word's callers give it what is left of MAX_TOKENS), so the table is small
 * and lives on the stack, with no allocation that grows with the text. */
#define SET_SLOTS 1024 /* a power of two, at least twice MAX_TOKENS */

typedef struct {
    int kind;
    const void *data;
    item kept[MAX_TOKENS];
    Py_ssize_t n_kept;
    uint16_t slots[SET_SLOTS]; /* index + 1 into kept; 0: an empty slot */
    size_t mask;               /* the slots in use, less one: fewer for a short text */
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

/* 1 when the span is new (and now known), 0 when seen before. The caller keeps fewer
 * than MAX_TOKENS, so there is room for it. */
static int
span_add(spans *set, const item *it)
{
    size_t slot = (size_t)span_hash(set, it->start, it->length) & set->mask;
    while (set->slots[slot]) {
        if (span_equal(set, &set->kept[set->slots[slot] - 1], it)) {
            return 0;
        }
        slot = (slot + 1) & set->mask;
    }
    set->kept[set->n_kept++] = *it;
    set->slots[slot] = (uint16_t)set->n_kept;
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

/* Items put aside while the text is read: a short list on the stack that grows. */
typedef struct {
    item *items;
    Py_ssize_t n, size;
    item local[16];
} item_list;

static int
put_aside(item_list *list, item it)
{
    if (list->n == list->size) {
        Py_ssize_t size = list->size * 2;
        item *items = PyMem_Malloc(sizeof(item) * (size_t)size);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, list->items, sizeof(item) * (size_t)list->n);
        if (list->items != list->local) {
            PyMem_Free(list->items);
        }
        list->items = items;
        list->size = size;
    }
    list->items[list->n++] = it;
    return 0;
}

/* What is done with each word kept, in order: 0, or -1 on an error (raised). */
typedef int (*word_sink)(void *context, PyObject *text, const item *it);

/* One reading of a text: the words handed on as they are found (they come first, in the
 * text's order), the long ones and the pairs put aside for after them. */
typedef struct {
    PyObject *text;
    Py_ssize_t room, kept;
    word_sink sink;
    void *context;
    spans set;
    uint32_t numbers; /* the lengths of long numbers kept, as bits */
    item_list longs, pairs;
    Py_ssize_t kept_longs[MAX_TOKENS]; /* into longs.items */
    Py_ssize_t n_kept_longs;
} reader;

/* Hands the item on if it is new among those kept: a word by its characters, a number by
 * its length, a long word by its first character and size. 0, or -1 on an error. */
static int
take(reader *r, const item *it, Py_ssize_t long_index)
{
    spans *set = &r->set;
    int fresh;
    if (it->kind == WORD) {
        fresh = span_add(set, it);
    }
    else if (it->kind == NUMBER) {
        uint32_t bit = (uint32_t)1 << it->length;
        fresh = !(r->numbers & bit);
        r->numbers |= bit;
    }
    else {
        Py_UCS4 first = PyUnicode_READ(set->kind, set->data, it->start);
        int size = bit_length(it->length);
        fresh = 1;
        for (Py_ssize_t k = 0; fresh && k < r->n_kept_longs; k++) {
            const item *other = &r->longs.items[r->kept_longs[k]];
            fresh = !(PyUnicode_READ(set->kind, set->data, other->start) == first
                      && bit_length(other->length) == size);
        }
        if (fresh) {
            r->kept_longs[r->n_kept_longs++] = long_index;
        }
    }
    if (!fresh) {
        return 0;
    }
    r->kept++;
    return r->sink(r->context, r->text, it);
}

/* The word that ends at `end` (its separator or the text's end), from `start`, stripped:
 * a word or a number handed on, a long word or a pair put aside. 0, or -1 on an error. */
static int
keep_word(reader *r, Py_ssize_t start, Py_ssize_t end)
{
    int kind = r->set.kind;
    const void *data = r->set.data;
    while (start < end && is_edge(PyUnicode_READ(kind, data, start))) {
        start++;
    }
    while (end > start && is_edge(PyUnicode_READ(kind, data, end - 1))) {
        end--;
    }
    Py_ssize_t length = end - start;
    if (length > 2 && length <= MAX_WORD) {
        int number = length > MAX_NUMBER && all_digits(kind, data, start, length);
        item it = {start, length, number ? NUMBER : WORD};
        return take(r, &it, 0);
    }
    if (length > MAX_WORD) {
        return put_aside(&r->longs, (item){start, length, LONG});
    }
    if (length == 2 && (PyUnicode_READ(kind, data, start) > 0x7f
                        || PyUnicode_READ(kind, data, start + 1) > 0x7f)) {
        return put_aside(&r->pairs, (item){start, length, WORD});
    }
    return 0;
}

/* The scan for words, one loop per width of character, so that each reads its own. It
 * ends once `room` are kept: nothing read after could be kept. */
#define SPLIT(TYPE)                                                                         \
    {                                                                                       \
        const TYPE *chars = data;                                                           \
        while (i < n && r->kept < r->room) {                                                \
            while (i < n && is_separator(chars[i])) {                                       \
                i++;                                                                        \
            }                                                                               \
            Py_ssize_t start = i;                                                           \
            while (i < n && !is_separator(chars[i])) {                                      \
                i++;                                                                        \
            }                                                                               \
            if (i > start && keep_word(r, start, i) < 0) {                                  \
                return -1;                                                                  \
            }                                                                               \
        }                                                                                   \
    }

static int
split(reader *r)
{
    int kind = r->set.kind;
    const void *data = r->set.data;
    Py_ssize_t n = PyUnicode_GET_LENGTH(r->text), i = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        SPLIT(Py_UCS1)
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        SPLIT(Py_UCS2)
    }
    else {
        SPLIT(Py_UCS4)
    }
    return 0;
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

/* Reads the words, then hands on the long ones and the pairs put aside, in the order the
 * Python appends them, while there is room. 0, or -1 on an error. */
static int
read_words(reader *r)
{
    if (split(r) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < r->longs.n && r->kept < r->room; i++) {
        if (take(r, &r->longs.items[i], i) < 0) {
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < r->pairs.n && r->kept < r->room; i++) {
        if (take(r, &r->pairs.items[i], 0) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Hands the text's words, up to `room` of them (at most MAX_TOKENS), to `sink`: how
 * many, or -1 on an error. */
static Py_ssize_t
each_word(PyObject *text, Py_ssize_t room, word_sink sink, void *context)
{
    if (room <= 0) {
        return 0;
    }
    if (room > MAX_TOKENS) {
        PyErr_SetString(PyExc_ValueError, "room for more words than MAX_TOKENS");
        return -1;
    }
    reader reading, *r = &reading; /* some 12 KB: hot on the stack, where a heap block
                                       grown with the text was new memory each time */
    r->text = text;
    r->room = room;
    r->kept = 0;
    r->sink = sink;
    r->context = context;
    r->set.kind = PyUnicode_KIND(text);
    r->set.data = PyUnicode_DATA(text);
    r->set.n_kept = 0;
    /* Twice the words and pairs the text can hold or the room, whichever is fewer: a
     * kept one takes two characters and a separator at least. */
    Py_ssize_t most = PyUnicode_GET_LENGTH(text) / 3 + 1;
    size_t size = 8;
    while (size < (size_t)(most < room ? most : room) * 2) {
        size <<= 1;
    }
    r->set.mask = size - 1;
    memset(r->set.slots, 0, sizeof(uint16_t) * size);
    r->numbers = 0;
    r->longs.items = r->longs.local;
    r->pairs.items = r->pairs.local;
    r->longs.n = r->pairs.n = 0;
    r->longs.size = r->pairs.size = (Py_ssize_t)(sizeof r->longs.local / sizeof(item));
    r->n_kept_longs = 0;
    Py_ssize_t kept = read_words(r) < 0 ? -1 : r->kept;
    if (r->longs.items != r->longs.local) {
        PyMem_Free(r->longs.items);
    }
    if (r->pairs.items != r->pairs.local) {
        PyMem_Free(r->pairs.items);
    }
    return kept;
}

#endif
