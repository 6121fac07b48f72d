/* The words of a text as the learning filter reads them, each as the str tokens.py makes:
 * word_spans.h finds them. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "word_spans.h"

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

typedef struct {
    PyObject *prefix, *sink; /* the sink: a dict, the words as keys, or a list */
} str_sink;

static int
append_word(void *context, PyObject *text, const item *it)
{
    str_sink *to = context;
    PyObject *token = make_token(to->prefix, text, it);
    int failed = token == NULL || (PyList_Check(to->sink) ? PyList_Append(to->sink, token)
                                                          : PyDict_SetItem(to->sink, token, Py_None)) < 0;
    Py_XDECREF(token);
    return failed ? -1 : 0;
}

/* Appends the text's words, up to `room` of them, to `sink` (a dict, as keys, or a list):
 * how many, or -1 on an error. */
static Py_ssize_t
add_words(PyObject *text, PyObject *prefix, Py_ssize_t room, PyObject *sink)
{
    str_sink to = {prefix, sink};
    return each_word(text, room, append_word, &to);
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
