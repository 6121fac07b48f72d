/* The content heuristics of intake.domain.scoring, in C: one call over a text.
 *
 * scoring.py holds the reference, text_findings: each count here is what its patterns
 * give, read with the same semantics (Python's str and re; heuristics_text.h, and
 * heuristics_phrases.h for the phrases). An ASCII
 * text, most of them, is read as scoring's ASCII branch reads it, any other as its
 * general branch does:
 *   - links: how many matches re.findall(r"(?:https?://|www\.)\S+", text.lower()) gives;
 *   - markup: whether re.search(r"\[url[=\]]|<a\s+href", text, re.IGNORECASE) finds one;
 *   - phrases: how many distinct phrases start a word (ASCII: each sought on its own,
 *     in the lowered text; any other: re.finditer's matches of them all in the text,
 *     any case, told apart lowered);
 *   - gibberish: how many runs of 12 letters or more are gibberish, of those in ASCII;
 *   - shouting: 20 letters or more, of which more than 0.7 are capitals.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "heuristics_phrases.h"
#include "heuristics_text.h"

typedef struct {
    PyObject_HEAD
    Phrases phrases;
} Heuristics;

#define LONG_WORD 12
#define SHOUTING_LETTERS 20
#define BLOCK ((Py_ssize_t)1 << 20)

/* Tallies of one text, as the two passes count them. */
typedef struct {
    Py_ssize_t links, phrases, gibberish, letters, capitals;
    int markup;
} Tally;

static PyObject *
findings_of(const Tally *tally)
{
    int shouting = tally->letters >= SHOUTING_LETTERS &&
                   (double)tally->capitals / (double)tally->letters > 0.7;
    return Py_BuildValue("(nNnnN)", tally->links, PyBool_FromLong(tally->markup),
                         tally->phrases, tally->gibberish, PyBool_FromLong(shouting));
}

/* The long words among `size` word characters at `at`: their runs of ASCII letters. */
static Py_ssize_t
ascii_gibberish(Text t, const Py_UCS1 *s, Py_ssize_t at, Py_ssize_t size)
{
    Py_ssize_t gibberish = 0;
    Py_ssize_t run = 0;
    for (Py_ssize_t k = at; k <= at + size; k++) {
        if (k < at + size && (classes[s[k]] & LETTER)) {
            run++;
            continue;
        }
        if (run >= LONG_WORD) {
            gibberish += is_gibberish(t, k - run, run);
        }
        run = 0;
    }
    return gibberish;
}

/* An ASCII text: the phrases sought each on its own after \b (scoring's ASCII branch).
 * Read a word at a time: the phrases start words, links start inside them (h, w),
 * markup links between them ([, <), and a run of 12 letters needs a word that long. */
static PyObject *
ascii_findings(Heuristics *self, PyObject *text)
{
    const Text t = {PyUnicode_1BYTE_KIND, PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text)};
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Tally tally = {0};
    /* Letters and capitals apart, in loops the compiler makes wide (a block's counts
     * fit 32 bits). */
    for (Py_ssize_t block = 0; block < t.size; block += BLOCK) {
        Py_ssize_t stop = t.size - block < BLOCK ? t.size : block + BLOCK;
        uint32_t letters = 0, capitals = 0;
        for (Py_ssize_t at = block; at < stop; at++) {
            capitals += (uint8_t)(s[at] - 'A') < 26;
            letters += (uint8_t)((s[at] | 0x20) - 'a') < 26;
        }
        tally.letters += letters;
        tally.capitals += capitals;
    }
    Py_ssize_t links_from = 0; /* findall's matches do not overlap */
    const Py_UCS1 *at = s, *end = s + t.size;
    while (at < end) {
        if (!(classes[*at] & WORD)) {
            if ((classes[*at] & MARKUP_MARK) && !tally.markup) {
                tally.markup = is_markup_link(t, at - s);
            }
            at++;
            continue;
        }
        /* \b: a word character after none (every phrase starts with one) */
        tally.phrases += mark_phrases(&self->phrases, t, at - s);
        const Py_UCS1 *start = at;
        for (;;) {
            while (at < end && (classes[*at] & (WORD | LINK_MARK)) == WORD) {
                at++;
            }
            if (at == end || !(classes[*at] & LINK_MARK)) {
                break;
            }
            if (at - s >= links_from) {
                Py_ssize_t link = link_end(t, at - s);
                if (link >= 0) {
                    tally.links++;
                    links_from = link;
                }
            }
            at++;
        }
        if (at - start >= LONG_WORD) {
            tally.gibberish += ascii_gibberish(t, s, start - s, at - start);
        }
    }
    return findings_of(&tally);
}

/* Any other text: re's Unicode classes, and the phrases as re.finditer finds them all
 * after (?<!\w) (scoring's general branch). */
static PyObject *
unicode_findings(Heuristics *self, PyObject *text)
{
    const Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    PyObject *variants = PySet_New(NULL);
    if (variants == NULL) {
        return NULL;
    }
    Tally tally = {0};
    Py_ssize_t links_from = 0, phrases_from = 0; /* matches do not overlap */
    Py_ssize_t run = 0;                          /* letters in a row before `at` */
    int run_is_ascii = 1;
    int word_before = 0;
    for (Py_ssize_t at = 0; at < t.size; at++) {
        Py_UCS4 c = char_at(t, at);
        unsigned char k = c < 128 ? classes[c] : 0;
        /* str.isalnum, and re's [^\W\d_]: str.isalnum but not a decimal digit */
        int word = c < 128 ? (k & WORD) != 0 : Py_UNICODE_ISALNUM(c);
        int letter = c < 128 ? (k & LETTER) != 0 : word && !Py_UNICODE_ISDECIMAL(c);
        if (c < 128 ? (k & LETTER) : Py_UNICODE_ISALPHA(c)) {
            tally.letters++;
            tally.capitals += c < 128 ? (k & UPPER) != 0 : Py_UNICODE_ISUPPER(c) != 0;
        }
        if (letter) {
            run++;
            run_is_ascii &= c < 128;
        }
        else {
            if (run >= LONG_WORD && run_is_ascii) {
                tally.gibberish += is_gibberish(t, at - run, run);
            }
            run = 0;
            run_is_ascii = 1;
        }
        if (!word_before && at >= phrases_from) {
            Py_ssize_t size = match_phrase(&self->phrases, t, text, at, variants, &tally.phrases);
            if (size < 0) {
                Py_DECREF(variants);
                return NULL;
            }
            phrases_from = at + size;
        }
        word_before = word;
        if ((k & LINK_MARK) && at >= links_from) {
            Py_ssize_t end = link_end(t, at);
            if (end >= 0) {
                tally.links++;
                links_from = end;
            }
        }
        if ((k & MARKUP_MARK) && !tally.markup) {
            tally.markup = is_markup_link(t, at);
        }
    }
    if (run >= LONG_WORD && run_is_ascii) {
        tally.gibberish += is_gibberish(t, t.size - run, run);
    }
    tally.phrases += PySet_GET_SIZE(variants);
    Py_DECREF(variants);
    return findings_of(&tally);
}

static PyObject *
Heuristics_findings(Heuristics *self, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "findings() takes a str");
        return NULL;
    }
    memset(self->phrases.found, 0, (size_t)self->phrases.count);
    if (PyUnicode_IS_ASCII(text)) {
        return ascii_findings(self, text);
    }
    return unicode_findings(self, text);
}


static int
Heuristics_init(Heuristics *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"phrases", NULL};
    PyObject *phrases;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Heuristics", keywords, &phrases)) {
        return -1;
    }
    PyObject *seq = PySequence_Fast(phrases, "phrases must be a sequence of str");
    if (seq == NULL) {
        return -1;
    }
    phrases_free(&self->phrases);
    int result = phrases_take(&self->phrases, seq);
    Py_DECREF(seq);
    if (result < 0) {
        phrases_free(&self->phrases);
    }
    return result;
}

static void
Heuristics_dealloc(Heuristics *self)
{
    PyTypeObject *type = Py_TYPE(self);
    phrases_free(&self->phrases);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyMethodDef Heuristics_methods[] = {
    {"findings", (PyCFunction)Heuristics_findings, METH_O,
     "findings(text, /)\n--\n\n"
     "(links, markup link, distinct phrases, gibberish words, shouting) of a text."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Heuristics_slots[] = {
    {Py_tp_doc, "Heuristics(phrases)\n--\n\nThe content heuristics, seeking these phrases."},
    {Py_tp_init, Heuristics_init},
    {Py_tp_dealloc, Heuristics_dealloc},
    {Py_tp_methods, Heuristics_methods},
    {0, NULL},
};

static PyType_Spec Heuristics_spec = {
    .name = "intake.domain.native.heuristics.Heuristics",
    .basicsize = sizeof(Heuristics),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Heuristics_slots,
};

static int
heuristics_exec(PyObject *module)
{
    fill_tables();
    PyObject *type = PyType_FromModuleAndSpec(module, &Heuristics_spec, NULL);
    if (type == NULL) {
        return -1;
    }
    int result = PyModule_AddObjectRef(module, "Heuristics", type);
    Py_DECREF(type);
    return result;
}

static PyModuleDef_Slot heuristics_slots[] = {
    {Py_mod_exec, heuristics_exec},
    {0, NULL},
};

static struct PyModuleDef heuristics_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "intake.domain.native.heuristics",
    .m_doc = "The content heuristics of intake.domain.scoring.",
    .m_size = 0,
    .m_slots = heuristics_slots,
};

PyMODINIT_FUNC
PyInit_heuristics(void)
{
    return PyModuleDef_Init(&heuristics_module);
}
