/* The hosts of a text's links: tokens.py's _LINK.findall over the lowered text, in one
 * pass of C. The pattern, (?:https?://|www\.)([^\s/?#<>"'\])]+), matches where the text
 * holds "https://", "http://" or "www." followed by at least one character outside the
 * class; it then takes all of them, and the search goes on after them. tokens.py is the
 * reference; tests/property/test_native_words.py compares the two. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* What ends a host: \s (Python's str.isspace, as re reads it for a str) and the class's
 * characters. */
static int
ends_host(Py_UCS4 c)
{
    switch (c) {
    case '/': case '?': case '#': case '<': case '>': case '"': case '\'': case ']': case ')':
        return 1;
    default:
        return Py_UNICODE_ISSPACE(c);
    }
}

/* The length of the scheme or "www." that starts at i, or 0. */
static Py_ssize_t
link_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    static const char *const starts[] = {"https://", "http://", "www."};
    for (int k = 0; k < 3; k++) {
        Py_ssize_t j = 0;
        while (starts[k][j] && i + j < n
               && PyUnicode_READ(kind, data, i + j) == (Py_UCS4)(unsigned char)starts[k][j]) {
            j++;
        }
        if (!starts[k][j]) {
            return j;
        }
    }
    return 0;
}

static PyObject *
links(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "links(text: str)");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0;
    PyObject *found = PyList_New(0);
    while (found != NULL && i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        Py_ssize_t skip = c == 'h' || c == 'w' ? link_start(kind, data, n, i) : 0;
        Py_ssize_t end = i + skip;
        while (skip && end < n && !ends_host(PyUnicode_READ(kind, data, end))) {
            end++;
        }
        if (!skip || end == i + skip) {
            i++;
            continue;
        }
        PyObject *host = PyUnicode_Substring(text, i + skip, end);
        if (host == NULL || PyList_Append(found, host) < 0) {
            Py_CLEAR(found);
        }
        Py_XDECREF(host);
        i = end;
    }
    return found;
}

static PyMethodDef methods[] = {
    {"links", links, METH_O, "What tokens.py's _LINK.findall finds in a text."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot module_slots[] = {
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "intake.domain.native.links",
    "The hosts of a text's links (domain/spam/tokens.py is the reference).", 0, methods,
    module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_links(void)
{
    return PyModuleDef_Init(&module);
}
