/* A growing buffer of UTF-8, written as str.encode("utf-8", "surrogatepass") writes a
 * str: the word memo's words (word_memo.h), a message's tokens (message_judge.h), and a
 * word before it becomes a str (words.c). */

#ifndef INTAKE_UTF8_BUFFER_H
#define INTAKE_UTF8_BUFFER_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Bytes laid end to end: the memo's words, or one message's tokens. */
typedef struct {
    uint8_t *bytes;
    size_t used, size;
} byte_buffer;

static int
reserve(byte_buffer *b, size_t more)
{
    if (b->used + more <= b->size) {
        return 0;
    }
    size_t size = b->size ? b->size : 256;
    while (size < b->used + more) {
        size *= 2;
    }
    uint8_t *bytes = PyMem_Realloc(b->bytes, size);
    if (bytes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->bytes = bytes;
    b->size = size;
    return 0;
}

/* Appends characters [start, start + n) of a str's data as UTF-8, surrogates passed
 * through as the "surrogatepass" error handler writes them. */
static int
append_utf8(byte_buffer *b, int kind, const void *data, Py_ssize_t start, Py_ssize_t n)
{
    if (reserve(b, (size_t)n * 4) < 0) {
        return -1;
    }
    uint8_t *out = b->bytes + b->used;
    for (Py_ssize_t i = start; i < start + n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            *out++ = (uint8_t)c;
        }
        else if (c < 0x800) {
            *out++ = (uint8_t)(0xc0 | (c >> 6));
            *out++ = (uint8_t)(0x80 | (c & 0x3f));
        }
        else if (c < 0x10000) {
            *out++ = (uint8_t)(0xe0 | (c >> 12));
            *out++ = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            *out++ = (uint8_t)(0x80 | (c & 0x3f));
        }
        else {
            *out++ = (uint8_t)(0xf0 | (c >> 18));
            *out++ = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
            *out++ = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            *out++ = (uint8_t)(0x80 | (c & 0x3f));
        }
    }
    b->used = (size_t)(out - b->bytes);
    return 0;
}

static int
append_str(byte_buffer *b, PyObject *text)
{
    if (PyUnicode_IS_ASCII(text)) {
        size_t n = (size_t)PyUnicode_GET_LENGTH(text);
        if (reserve(b, n) < 0) {
            return -1;
        }
        memcpy(b->bytes + b->used, PyUnicode_DATA(text), n);
        b->used += n;
        return 0;
    }
    return append_utf8(b, PyUnicode_KIND(text), PyUnicode_DATA(text), 0,
                       PyUnicode_GET_LENGTH(text));
}

static int
append_ascii(byte_buffer *b, const char *text, size_t n)
{
    if (reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->bytes + b->used, text, n);
    b->used += n;
    return 0;
}

#endif
