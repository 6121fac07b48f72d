/* The words of a text as the learning filter reads them, each as the str tokens.py makes:
 * word_spans.h finds them and writes them (append_word). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "word_spans.h"

typedef struct {
    PyObject *prefix, *sink; /* the sink: a dict, the words as keys, or a list */
    byte_buffer word;        /* the token's UTF-8, before it becomes a str */
} str_sink;

static int
append_token(void *context, PyObject *text, const item *it)
{
    str_sink *to = context;
    to->word.used = 0;
    if (append_str(&to->word, to->prefix) < 0 || append_word(&to->word, text, it) < 0) {
        return -1;
    }
    /* As the Python's str: decoding the UTF-8 gives each character back, surrogates too. */
    PyObject *token = PyUnicode_DecodeUTF8((const char *)to->word.bytes,
                                           (Py_ssize_t)to->word.used, "surrogatepass");
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
    str_sink to = {prefix, sink, {NULL, 0, 0}};
    Py_ssize_t kept = each_word(text, room, append_token, &to);
    PyMem_Free(to.word.bytes);
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
