/* The character-level reading behind heuristics.c: Python's str and re semantics for the
 * few classes and patterns the heuristics use, over a str of any kind.
 *
 *   - whitespace is str.isspace's (re's \s): for ASCII \t \n \v \f \r, \x1c-\x1f and
 *     the space;
 *   - a word character (re's \w) is str.isalnum's or `_`;
 *   - the patterns' ASCII letters match their upper case too, and no other character
 *     (a phrase's letters aside, see phrase_fold in heuristics.c).
 */
#ifndef INTAKE_HEURISTICS_TEXT_H
#define INTAKE_HEURISTICS_TEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define CONSONANT_RUN 6

/* Each ASCII character's classes, and its lower case, filled in once at import. */
enum {
    SPACE = 1,
    UPPER = 2,
    LETTER = 4,
    WORD = 8,
    VOWEL = 16,
    LINK_MARK = 32,   /* where a link may start: h or w */
    MARKUP_MARK = 64, /* where a markup link may start: [ or < */
};
static unsigned char classes[128];
static unsigned char lower_of[128];

static void
fill_tables(void)
{
    for (int c = 0; c < 128; c++) {
        unsigned char k = 0;
        int upper = c >= 'A' && c <= 'Z';
        int low = upper ? c + ('a' - 'A') : c;
        k |= (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) ? SPACE : 0;
        k |= upper ? UPPER : 0;
        k |= (low >= 'a' && low <= 'z') ? LETTER | WORD : 0;
        k |= ((c >= '0' && c <= '9') || c == '_') ? WORD : 0;
        k |= (low == 'a' || low == 'e' || low == 'i' || low == 'o' || low == 'u' || low == 'y')
                 ? VOWEL
                 : 0;
        k |= (low == 'h' || low == 'w') ? LINK_MARK : 0;
        k |= (c == '[' || c == '<') ? MARKUP_MARK : 0;
        classes[c] = k;
        lower_of[c] = (unsigned char)low;
    }
}

/* A str's characters; `kind` is a constant where the caller knows it, which the compiler
 * then reads as plain bytes. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t size;
} Text;

static inline Py_UCS4
char_at(Text t, Py_ssize_t at)
{
    return PyUnicode_READ(t.kind, t.data, at);
}

/* An ASCII character lowered; 0, which no pattern holds, for any other. */
static inline unsigned char
ascii_lower(Py_UCS4 c)
{
    return c < 128 ? lower_of[c] : 0;
}

static inline int
is_space(Py_UCS4 c)
{
    return c < 128 ? classes[c] & SPACE : Py_UNICODE_ISSPACE(c);
}

/* Whether t[at:] starts with `lowered` (lower case ASCII), any case. */
static inline int
starts_with(Text t, Py_ssize_t at, const char *lowered, Py_ssize_t size)
{
    if (t.size - at < size) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < size; k++) {
        if (ascii_lower(char_at(t, at + k)) != (unsigned char)lowered[k]) {
            return 0;
        }
    }
    return 1;
}

/* Where a link's `https?://` or `www.` starting at `at` ends, or -1. Read in the text,
 * not lowered: lowering turns no other character into one of these, nor whitespace
 * into anything else (tests/unit/test_native_heuristics.py reads every character). */
static inline Py_ssize_t
link_start_end(Text t, Py_ssize_t at)
{
    if (starts_with(t, at, "http", 4)) {
        Py_ssize_t k = at + 4;
        if (k < t.size && ascii_lower(char_at(t, k)) == 's') {
            k++;
        }
        return starts_with(t, k, "://", 3) ? k + 3 : -1;
    }
    return starts_with(t, at, "www.", 4) ? at + 4 : -1;
}

/* Where the link starting at `at` ends (it runs to the next whitespace), or -1: a match
 * of (?:https?://|www\.)\S+ in the lowered text. */
static inline Py_ssize_t
link_end(Text t, Py_ssize_t at)
{
    Py_ssize_t end = link_start_end(t, at);
    if (end < 0 || end >= t.size || is_space(char_at(t, end))) {
        return -1;
    }
    while (end < t.size && !is_space(char_at(t, end))) {
        end++;
    }
    return end;
}

/* A match of \[url[=\]]|<a\s+href (any case) at `at`, where `[` or `<` is. */
static inline int
is_markup_link(Text t, Py_ssize_t at)
{
    if (char_at(t, at) == '[') {
        if (!starts_with(t, at + 1, "url", 3) || at + 4 >= t.size) {
            return 0;
        }
        Py_UCS4 after = char_at(t, at + 4);
        return after == '=' || after == ']';
    }
    if (at + 1 >= t.size || ascii_lower(char_at(t, at + 1)) != 'a') {
        return 0;
    }
    Py_ssize_t k = at + 2;
    while (k < t.size && is_space(char_at(t, k))) {
        k++;
    }
    return k > at + 2 && starts_with(t, k, "href", 4);
}

/* A word of `size` ASCII letters at `at`: a vowel share under 0.2, or 6 consonants in a
 * row once `sch` and `ch` count as one (scoring._is_gibberish). */
static int
is_gibberish(Text t, Py_ssize_t at, Py_ssize_t size)
{
    Py_ssize_t vowels = 0;
    for (Py_ssize_t k = 0; k < size; k++) {
        vowels += (classes[char_at(t, at + k)] & VOWEL) != 0;
    }
    /* Python's int / int: both exact as doubles, one correctly rounded division. */
    if ((double)vowels / (double)size < 0.2) {
        return 1;
    }
    Py_ssize_t run = 0;
    Py_ssize_t k = 0;
    while (k < size) {
        /* re.sub("s?ch", "s", word, flags=re.IGNORECASE), left to right: one `s`. */
        if (starts_with(t, at + k, "sch", 3) && k + 3 <= size) {
            run++;
            k += 3;
        }
        else if (starts_with(t, at + k, "ch", 2) && k + 2 <= size) {
            run++;
            k += 2;
        }
        else {
            run = (classes[char_at(t, at + k)] & VOWEL) ? 0 : run + 1;
            k += 1;
        }
        if (run >= CONSONANT_RUN) {
            return 1;
        }
    }
    return 0;
}

#endif
