/* The words of a text as the learning filter reads them: domain/spam/tokens.py's
 * _word_tokens in one pass of C, with the same tokens in the same order. tokens.py is the
 * reference and the constants below are its; tests/property/test_native_words.py compares
 * the two over arbitrary text.
 *
 * The Python splits the text at whitespace and punctuation, drops repeated raw words,
 * strips edge characters, and keeps, in this order and each once: the words of 3 to
 * MAX_WORD characters (a long run of digits as "#<length>"), then "long:<first><size>"
 * for the longer ones, then the two-character words outside ASCII. Dropping repeated raw
 * words before the final dedupe changes nothing (a repeat gives the same tokens, later),
 * so here the one dedupe is the final one, over spans of the text: a word becomes a str
 * only once it is kept. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static Py_UCS4
widest_of(PyObject *text, Py_ssize_t start, Py_ssize_t length, Py_UCS4 widest)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = start; i < start + length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c > widest) {
            widest = c;
        }
    }
    return widest;
}

/* The kept item as the str the Python makes: the prefix and the word, "#<length>" or
 * "long:<first><size>". A str is built at its narrowest kind, as every str must be. */
static PyObject *
make_token(PyObject *prefix, PyObject *text, const item *it)
{
    if (it->kind == NUMBER) {
        return PyUnicode_FromFormat("%U#%zd", prefix, it->length);
    }
    if (it->kind == LONG) {
        Py_UCS4 first = PyUnicode_READ_CHAR(text, it->start);
        return PyUnicode_FromFormat("%Ulong:%c%d", prefix, (int)first, bit_length(it->length));
    }
    Py_ssize_t prefix_length = PyUnicode_GET_LENGTH(prefix);
    Py_UCS4 widest = widest_of(prefix, 0, prefix_length, 0);
    widest = widest_of(text, it->start, it->length, widest);
    PyObject *token = PyUnicode_New(prefix_length + it->length, widest);
    if (token == NULL) {
        return NULL;
    }
    /* Character by character: PyUnicode_CopyCharacters checks a narrower target against
     * the start of its source, not the part it copies. */
    int to_kind = PyUnicode_KIND(token);
    void *to = PyUnicode_DATA(token);
    for (Py_ssize_t i = 0; i < prefix_length; i++) {
        PyUnicode_WRITE(to_kind, to, i, PyUnicode_READ_CHAR(prefix, i));
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < it->length; i++) {
        PyUnicode_WRITE(to_kind, to, prefix_length + i, PyUnicode_READ(kind, data, it->start + i));
    }
    return token;
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
} found;

/* The word that ends at `end` (its separator or the text's end), from `start`, stripped
 * and sorted into its kind's list. */
static void
keep_word(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, found *out)
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
split(PyObject *text, found *out)
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

/* Appends the text's words, up to `room` of them, to `sink` (a dict, as keys, or a list):
 * how many, or -1 on an error. */
static Py_ssize_t
add_words(PyObject *text, PyObject *prefix, Py_ssize_t room, PyObject *sink)
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
    found f = {items, 0, items + word_room, items + word_room + long_room, 0, 0};
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
            PyObject *token = make_token(prefix, text, &items[i]);
            int failed = token == NULL
                         || (PyList_Check(sink) ? PyList_Append(sink, token)
                                                : PyDict_SetItem(sink, token, Py_None)) < 0;
            Py_XDECREF(token);
            if (failed) {
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

static PyObject *
word_tokens(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1])
        || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "word_tokens(text: str, prefix: str, out: dict)");
        return NULL;
    }
    if (add_words(args[0], args[1], MAX_TOKENS - PyDict_GET_SIZE(args[2]), args[2]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* list(out) and then the subject's words and the body's, as tokens.tokens adds them to
 * `out` and lists it, but with no dict: none of them can be a key already there (each
 * of those holds a colon after a prefix of its own, a word no colon, and a subject's
 * word the prefix "subject:"), and each kind drops its own repeats. */
static PyObject *
with_words(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_Check(args[0]) || !PyUnicode_Check(args[1])
        || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "with_words(out: dict, subject: str, body: str)");
        return NULL;
    }
    PyObject *listed = PyDict_Keys(args[0]);
    PyObject *prefix = PyUnicode_FromString("subject:"), *none = PyUnicode_New(0, 0);
    if (listed == NULL || prefix == NULL || none == NULL
        || add_words(args[1], prefix, MAX_TOKENS - PyList_GET_SIZE(listed), listed) < 0
        || add_words(args[2], none, MAX_TOKENS - PyList_GET_SIZE(listed), listed) < 0) {
        Py_CLEAR(listed);
    }
    Py_XDECREF(prefix);
    Py_XDECREF(none);
    return listed;
}

static PyMethodDef methods[] = {
    {"word_tokens", (PyCFunction)(void (*)(void))word_tokens, METH_FASTCALL,
     "Adds the words of a text to `out`, as tokens.py's _word_tokens does."},
    {"with_words", (PyCFunction)(void (*)(void))with_words, METH_FASTCALL,
     "list(out), then the subject's words and the body's, as tokens.tokens lists them."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots_[] = {
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "intake.domain.native.words",
    "The learning filter's word tokenizer (domain/spam/tokens.py is the reference).", 0,
    methods, slots_, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_words(void)
{
    fill_separators();
    return PyModuleDef_Init(&module);
}
