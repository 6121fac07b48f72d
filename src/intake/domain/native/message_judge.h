/* One message's tokens judged as classifier.py's judge_words judges them: each token's f
 * read from the word memo (word_memo.h) by its UTF-8's fingerprint, or worked out from
 * its keyed hash's counts and remembered. A token is read either from a str or straight
 * from the text it was found in (word_spans.h's sink), so that a word needs no str made
 * for it. Included by clues.c, after its hashing and its choice of clues. */

#ifndef INTAKE_MESSAGE_JUDGE_H
#define INTAKE_MESSAGE_JUDGE_H

typedef struct {
    PyObject *tokens; /* hash to packed counts: TokenCounts, a dict, or any with .get */
    const uint8_t *key;
    size_t key_length;
    double spam_messages, ham_messages;
} counts;

/* The f of a token's packed counts, or 0.0 when it is no clue: _probability and _clue. */
static int
f_of(const counts *c, unsigned long long both, double *f)
{
    *f = 0.0;
    if (both == 0) {
        return 0;
    }
    unsigned long long spam = both >> 32, ham = both & 0xFFFFFFFFULL;
    double spam_ratio = (double)spam / c->spam_messages;
    double n = (double)(spam + ham);
    double p = spam_ratio / (spam_ratio + (double)ham / c->ham_messages);
    double value = (STRENGTH * UNKNOWN + n * p) / (STRENGTH + n);
    *f = hammy < value && value < spammy ? 0.0 : value;
    return 0;
}

/* A token's f from its hash's counts, or 0.0 when it is no clue: read in C from packed
 * counts (token_counts.h), with no int made for the hash. */
static int
probability_of(const counts *c, int64_t token, double *f)
{
    if (PyObject_TypeCheck(c->tokens, &TokenCounts_type)) {
        uint64_t both;
        *f = 0.0;
        return counts_find((TokenCounts *)c->tokens, token, &both) ? f_of(c, both, f) : 0;
    }
    PyObject *hash = PyLong_FromLongLong(token);
    if (hash == NULL) {
        return -1;
    }
    PyObject *packed;
    if (PyDict_Check(c->tokens)) {
        packed = Py_XNewRef(PyDict_GetItemWithError(c->tokens, hash));
    }
    else {
        packed = PyObject_CallMethod(c->tokens, "get", "O", hash);
    }
    Py_DECREF(hash);
    if (packed == NULL && PyErr_Occurred()) {
        return -1;
    }
    *f = 0.0;
    if (packed == NULL || packed == Py_None) {
        Py_XDECREF(packed);
        return 0;
    }
    unsigned long long both = PyLong_AsUnsignedLongLong(packed);
    Py_DECREF(packed);
    if (both == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    return f_of(c, both, f);
}

/* One message's tokens, their UTF-8 end to end, and each one's f once judged. */
typedef struct {
    const counts *c;
    WordMemo *memo;
    byte_buffer bytes;
    Py_ssize_t *ends; /* token i is bytes[ends[i - 1] or 0 : ends[i]] */
    uint64_t *hashes; /* token i's fingerprint in the memo (word_memo.h) */
    double *found;
    Py_ssize_t n, room;
    const char *prefix; /* of the words being read: "subject:" or "" */
} message;

/* Takes the token just appended to the message's bytes, from `start`, and asks the
 * cache for its memo slot: the tokens are judged once all are read (judge_all), so that
 * the memo's hundred or so reads, each a cache miss in a large table, overlap instead of
 * waiting one after the other. */
static int
take_last(message *m, size_t start)
{
    if (m->n >= m->room) {
        PyErr_SetString(PyExc_RuntimeError, "more tokens than room was made for");
        return -1;
    }
    uint64_t hash = slot_hash(m->bytes.bytes + start, m->bytes.used - start);
    memo_prefetch(m->memo, hash);
    m->hashes[m->n] = hash;
    m->ends[m->n++] = (Py_ssize_t)m->bytes.used;
    return 0;
}

/* Each token's f, in order: from the memo, or worked out from its counts and remembered
 * while the memo has room. Reading a token changes nothing in the memo, and this judges
 * them in their order: what judging each as it is read would give, repeats included. */
static int
judge_all(message *m)
{
    for (Py_ssize_t i = 0; i < m->n; i++) {
        const memo_slot *known = memo_find(m->memo, m->hashes[i]);
        if (known != NULL) {
            m->found[i] = known->f;
            continue;
        }
        size_t start = i ? (size_t)m->ends[i - 1] : 0, n = (size_t)m->ends[i] - start;
        const uint8_t *bytes = m->bytes.bytes + start;
        int64_t token = hash_bytes(bytes, n, m->c->key, m->c->key_length);
        if (probability_of(m->c, token, &m->found[i]) < 0) {
            return -1;
        }
        if (m->memo->count < WORD_MEMO
            && memo_add(m->memo, bytes, n, m->hashes[i], m->found[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
judge_str(message *m, PyObject *token)
{
    if (!PyUnicode_Check(token)) {
        PyErr_SetString(PyExc_TypeError, "a token is a str");
        return -1;
    }
    size_t start = m->bytes.used;
    return append_str(&m->bytes, token) < 0 ? -1 : take_last(m, start);
}

/* word_spans.h's sink: the word as tokens.py makes it (append_word), taken. */
static int
judge_word(void *context, PyObject *text, const item *it)
{
    message *m = context;
    size_t start = m->bytes.used;
    if (append_ascii(&m->bytes, m->prefix, strlen(m->prefix)) < 0
        || append_word(&m->bytes, text, it) < 0) {
        return -1;
    }
    return take_last(m, start);
}

static int
message_open(message *m, const counts *c, WordMemo *memo, Py_ssize_t room)
{
    *m = (message){c, memo, {NULL, 0, 0}, NULL, NULL, NULL, 0, room, ""};
    m->ends = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(room ? room : 1));
    m->hashes = PyMem_Malloc(sizeof(uint64_t) * (size_t)(room ? room : 1));
    m->found = PyMem_Malloc(sizeof(double) * (size_t)(room ? room : 1));
    if (m->ends == NULL || m->hashes == NULL || m->found == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
message_close(message *m)
{
    PyMem_Free(m->bytes.bytes);
    PyMem_Free(m->ends);
    PyMem_Free(m->hashes);
    PyMem_Free(m->found);
}

/* (evidence, ((token, f), ...)) of the message, the tokens as str, or None. */
static PyObject *
judged_by_word(const message *m)
{
    double evidence;
    clue shown[SHOWN_CLUES];
    int n_shown;
    int chosen = choose_clues(m->found, m->n, &evidence, shown, &n_shown);
    if (chosen <= 0) {
        return chosen < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *told = PyTuple_New(n_shown);
    for (int k = 0; told != NULL && k < n_shown; k++) {
        Py_ssize_t i = shown[k].where, start = i ? m->ends[i - 1] : 0;
        PyObject *pair = Py_BuildValue(
            "(Nd)",
            PyUnicode_DecodeUTF8((const char *)m->bytes.bytes + start, m->ends[i] - start,
                                 "surrogatepass"),
            shown[k].f);
        if (pair == NULL) {
            Py_CLEAR(told);
            break;
        }
        PyTuple_SET_ITEM(told, k, pair);
    }
    return told == NULL ? NULL : Py_BuildValue("(dN)", evidence, told);
}

static int
read_counts(counts *c, PyObject *tokens, PyObject *key, long long spam, long long ham)
{
    *c = (counts){tokens, NULL, 0, (double)spam, (double)ham};
    return read_key(key, &c->key, &c->key_length);
}

#endif
