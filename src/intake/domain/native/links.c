/* The hosts of a text's links and their tokens: tokens.py's _LINK.findall over the lowered
 * text, in one pass of C, and its _host_tokens. The pattern, (?:https?://|www\.)([^\s/?#<>"'\])]+), matches where the text
 * holds "https://", "http://" or "www." followed by at least one character outside the
 * class; it then takes all of them, and the search goes on after them. tokens.py is the
 * reference; tests/property/test_native_words.py compares the two. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_HOSTS 20

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

/* Where "http" and "www." next start in a text of one byte a character: no link starts
 * anywhere else, and a search for them (memchr, then a compare) skips the rest of the
 * text faster than a test of each place. */
typedef struct {
    const Py_UCS1 *chars;
    Py_ssize_t n, http, www; /* each found at or after the place last asked, or n */
} starts;

static Py_ssize_t
find_from(const Py_UCS1 *chars, Py_ssize_t n, Py_ssize_t i, const char *word)
{
    while (i + 4 <= n) {
        const Py_UCS1 *at = memchr(chars + i, word[0], (size_t)(n - 3 - i));
        if (at == NULL) {
            return n;
        }
        if (memcmp(at, word, 4) == 0) {
            return at - chars;
        }
        i = at - chars + 1;
    }
    return n;
}

/* The first place at or after `i` where "http" or "www." starts, or n. */
static Py_ssize_t
next_start(starts *s, Py_ssize_t i)
{
    if (s->http < i) {
        s->http = find_from(s->chars, s->n, i, "http");
    }
    if (s->www < i) {
        s->www = find_from(s->chars, s->n, i, "www.");
    }
    return s->http < s->www ? s->http : s->www;
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
    starts s = {data, n, -1, -1};
    while (found != NULL && i < n) {
        if (kind == PyUnicode_1BYTE_KIND) { /* most texts */
            i = next_start(&s, i);
            if (i >= n) {
                break;
            }
        }
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

/* out[prefix + text[start:end][:most]] = None */
static int
add_part(PyObject *out, const char *prefix, PyObject *text, Py_ssize_t start, Py_ssize_t end,
         Py_ssize_t most)
{
    PyObject *head = PyUnicode_FromString(prefix);
    PyObject *part = PyUnicode_Substring(text, start, end - start > most ? start + most : end);
    PyObject *token = head && part ? PyUnicode_Concat(head, part) : NULL;
    int failed = token == NULL || PyDict_SetItem(out, token, Py_None) < 0;
    Py_XDECREF(head);
    Py_XDECREF(part);
    Py_XDECREF(token);
    return failed ? -1 : 0;
}

/* tokens.py's _host_tokens: the host of a link as found (lowered, its trailing dots, any
 * user before an @ and any port after a colon left out), its registrable parent when it
 * has more than two labels, and its top-level label. */
static int
add_host(PyObject *found, PyObject *out)
{
    PyObject *host = PyObject_CallMethod(found, "lower", NULL);
    if (host == NULL) {
        return -1;
    }
    Py_ssize_t end = PyUnicode_GET_LENGTH(host);
    while (end > 0 && PyUnicode_READ_CHAR(host, end - 1) == '.') {
        end--;
    }
    Py_ssize_t at = end > 0 ? PyUnicode_FindChar(host, '@', 0, end, -1) : -1;
    Py_ssize_t start = at >= 0 ? at + 1 : 0;
    Py_ssize_t colon = start < end ? PyUnicode_FindChar(host, ':', start, end, 1) : -1;
    if (colon >= 0) {
        end = colon;
    }
    int failed = 0;
    if (start < end) {
        Py_ssize_t last = PyUnicode_FindChar(host, '.', start, end, -1);
        Py_ssize_t before = last > start ? PyUnicode_FindChar(host, '.', start, last, -1) : -1;
        failed = add_part(out, "host:", host, start, end, 80) < 0
                 || (before >= 0 && add_part(out, "host:", host, before + 1, end, 80) < 0)
                 || add_part(out, "tld:", host, last >= 0 ? last + 1 : start, end, 20) < 0;
    }
    Py_DECREF(host);
    return failed ? -1 : 0;
}

static PyObject *
host_tokens(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "host_tokens(hosts: list[str], out: dict)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[0]) && i < MAX_HOSTS; i++) {
        PyObject *found = PyList_GET_ITEM(args[0], i);
        if (!PyUnicode_Check(found)) {
            PyErr_SetString(PyExc_TypeError, "a host is a str");
            return NULL;
        }
        if (add_host(found, args[1]) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"links", links, METH_O, "What tokens.py's _LINK.findall finds in a text."},
    {"host_tokens", (PyCFunction)(void (*)(void))host_tokens, METH_FASTCALL,
     "Adds the tokens of the first hosts to `out`, as tokens.py's _host_tokens does."},
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
