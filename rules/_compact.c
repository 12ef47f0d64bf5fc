/* The compact view's skip runs, found and removed in one pass over the lowered text (rules/normalize.py).

   Python's `re` found them at ~120 ns per skip or space character tried (~84 in a 1 KB mixed zh/en text,
   most of them spaces between English words that can never start a run), and inside the whole scan the
   view cost a quarter of the CPU (bench/README.md). This module does the same work at a few ns per
   character. `rules.normalize._SkipRuns` stays the reference: both are checked against `_compact_re2`
   (RE2, the definition) in tests/rules/test_normalize.py, and the `re` path runs where this module was
   not built.

   The runs, each decided by the characters around it (`_skip_re`'s alternatives, tried in this order at
   every skip or space character, leftmost first, a match resumed after):
     1. a run of at most `max_skip` skip characters between two CJK ideographs: dropped;
     2. a run of at most `max_skip` non-space skip characters between two letters: dropped (when a
        neighbour is neither an ASCII letter nor, if `cjk_letters`, a unified ideograph, only if
        `is_letter` says both are RE2 letters; the run is consumed either way);
     3. a run of two or more spaces: folded to one space.
   Skip characters are never letters or ideographs (the caller checks), so a run is the maximal stretch of
   its characters after its first one. (In 2., `re` may backtrack to a shorter run that ends before a
   non-ASCII skip character, a `_MAYBE_LETTER`; RE2 then rejects that character as a letter: no edit either
   way, and the characters that match consumes could start no edit.) */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_SKIP_CHARS 64

typedef struct {
    unsigned char ascii_skip[128];    /* 1: a skip character */
    Py_UCS4 wide_skip[MAX_SKIP_CHARS]; /* non-ASCII skip characters */
    Py_ssize_t n_wide;
} SkipSet;

static int
is_skip(const SkipSet *set, Py_UCS4 c)
{
    if (c < 128) {
        return set->ascii_skip[c];
    }
    for (Py_ssize_t i = 0; i < set->n_wide; i++) {
        if (set->wide_skip[i] == c) {
            return 1;
        }
    }
    return 0;
}

static int
is_cjk(Py_UCS4 c)
{
    return (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF);
}

static int
is_ascii_letter(Py_UCS4 c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Letters no RE2 call is needed for (`_plain_letters`). */
static int
is_known_letter(Py_UCS4 c, int cjk_letters)
{
    return is_ascii_letter(c) || (cjk_letters && ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF)));
}

/* Characters that may be letters (`_MAYBE_LETTER`): RE2 decides the non-ASCII ones. */
static int
maybe_letter(Py_UCS4 c)
{
    return is_ascii_letter(c) || c >= 0x80;
}

/* 1 or 0 from `is_letter(chr(c))`; -1 with an exception set. */
static int
call_is_letter(PyObject *is_letter, Py_UCS4 c)
{
    PyObject *ch = PyUnicode_FromOrdinal((int)c);
    if (ch == NULL) {
        return -1;
    }
    PyObject *res = PyObject_CallOneArg(is_letter, ch);
    Py_DECREF(ch);
    if (res == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(res);
    Py_DECREF(res);
    return truth;
}

typedef struct {
    Py_ssize_t *start; /* source span of each edit */
    Py_ssize_t *end;
    unsigned char *fold; /* 1: replaced by one space; 0: dropped */
    Py_ssize_t count;
    Py_ssize_t capacity;
} Edits;

static int
edits_add(Edits *edits, Py_ssize_t start, Py_ssize_t end, int fold)
{
    if (edits->count == edits->capacity) {
        Py_ssize_t cap = edits->capacity ? edits->capacity * 2 : 32;
        Py_ssize_t *s = PyMem_Realloc(edits->start, (size_t)cap * sizeof(Py_ssize_t));
        if (s == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        edits->start = s;
        Py_ssize_t *e = PyMem_Realloc(edits->end, (size_t)cap * sizeof(Py_ssize_t));
        if (e == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        edits->end = e;
        unsigned char *f = PyMem_Realloc(edits->fold, (size_t)cap);
        if (f == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        edits->fold = f;
        edits->capacity = cap;
    }
    edits->start[edits->count] = start;
    edits->end[edits->count] = end;
    edits->fold[edits->count] = (unsigned char)fold;
    edits->count++;
    return 0;
}

static void
edits_free(Edits *edits)
{
    PyMem_Free(edits->start);
    PyMem_Free(edits->end);
    PyMem_Free(edits->fold);
}

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* The edits of `text`, in order; 0 or -1 with an exception set. `maxchar` gets the largest character kept.
   Inlined once per string kind (`find_edits`), so that each character read is a plain load. */
static ALWAYS_INLINE int
find_edits_of_kind(const int kind, PyObject *text, const SkipSet *set, Py_ssize_t max_skip, int cjk_letters,
                   PyObject *is_letter, Edits *edits, Py_UCS4 *maxchar)
{
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_UCS4 top = 0;
    Py_ssize_t i = 0;
    while (i < n) {
        const Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c != ' ' && !is_skip(set, c)) {
            if (c > top) {
                top = c;
            }
            i++;
            continue;
        }
        const Py_UCS4 before = i > 0 ? PyUnicode_READ(kind, data, i - 1) : 0;
        /* 1: skip characters (spaces among them when the space is one) between two ideographs. */
        if (max_skip > 0 && i > 0 && is_cjk(before) && is_skip(set, c)) {
            Py_ssize_t j = i + 1;
            while (j < n && j - i < max_skip && is_skip(set, PyUnicode_READ(kind, data, j))) {
                j++;
            }
            if (j < n && is_cjk(PyUnicode_READ(kind, data, j))) {
                if (edits_add(edits, i, j, 0) < 0) {
                    return -1;
                }
                i = j;
                continue;
            }
        }
        /* 2: non-space skip characters between two letters. */
        if (max_skip > 0 && i > 0 && c != ' ' && maybe_letter(before)) {
            Py_ssize_t j = i + 1;
            while (j < n && j - i < max_skip) {
                const Py_UCS4 d = PyUnicode_READ(kind, data, j);
                if (d == ' ' || !is_skip(set, d)) {
                    break;
                }
                j++;
            }
            if (j < n) {
                const Py_UCS4 after = PyUnicode_READ(kind, data, j);
                if (maybe_letter(after)) {
                    int drop = 1;
                    if (!is_known_letter(before, cjk_letters) || !is_known_letter(after, cjk_letters)) {
                        /* `_SkipRuns.edits`: both neighbours must be RE2 letters, the run is consumed anyway. */
                        drop = call_is_letter(is_letter, before);
                        if (drop == 1) {
                            drop = call_is_letter(is_letter, after);
                        }
                        if (drop < 0) {
                            return -1;
                        }
                    }
                    if (drop) {
                        if (edits_add(edits, i, j, 0) < 0) {
                            return -1;
                        }
                    }
                    else {
                        for (Py_ssize_t k = i; k < j; k++) {
                            const Py_UCS4 kept = PyUnicode_READ(kind, data, k);
                            if (kept > top) {
                                top = kept;
                            }
                        }
                    }
                    i = j;
                    continue;
                }
            }
        }
        /* 3: two or more spaces. */
        if (c == ' ' && i + 1 < n && PyUnicode_READ(kind, data, i + 1) == ' ') {
            Py_ssize_t j = i + 2;
            while (j < n && PyUnicode_READ(kind, data, j) == ' ') {
                j++;
            }
            if (edits_add(edits, i, j, 1) < 0) {
                return -1;
            }
            if (top < ' ') {
                top = ' ';
            }
            i = j;
            continue;
        }
        if (c > top) {
            top = c;
        }
        i++;
    }
    *maxchar = top;
    return 0;
}

static int
find_edits(PyObject *text, const SkipSet *set, Py_ssize_t max_skip, int cjk_letters, PyObject *is_letter,
           Edits *edits, Py_UCS4 *maxchar)
{
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        return find_edits_of_kind(PyUnicode_1BYTE_KIND, text, set, max_skip, cjk_letters, is_letter, edits, maxchar);
    case PyUnicode_2BYTE_KIND:
        return find_edits_of_kind(PyUnicode_2BYTE_KIND, text, set, max_skip, cjk_letters, is_letter, edits, maxchar);
    default:
        return find_edits_of_kind(PyUnicode_4BYTE_KIND, text, set, max_skip, cjk_letters, is_letter, edits, maxchar);
    }
}

/* A new list of the n values in xs. */
static PyObject *
int_list(const Py_ssize_t *xs, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(xs[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* The derived text and its OffsetMap lists (ns, ne, rs, re): edit k replaced text[rs[k]:re[k]] by
   derived[ns[k]:ne[k]]. */
static PyObject *
apply_edits(PyObject *text, const Edits *edits, Py_UCS4 maxchar)
{
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const Py_ssize_t count = edits->count;
    Py_ssize_t *ns = PyMem_Malloc((size_t)count * 2 * sizeof(Py_ssize_t));
    if (ns == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t *ne = ns + count;
    Py_ssize_t removed = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        ns[k] = edits->start[k] - removed;
        ne[k] = ns[k] + edits->fold[k];
        removed += edits->end[k] - edits->start[k] - edits->fold[k];
    }
    PyObject *out = PyUnicode_New(n - removed, maxchar);
    PyObject *result = NULL;
    if (out == NULL) {
        goto done;
    }
    /* Copied by hand, not by PyUnicode_CopyCharacters: when the removed characters were the only wide ones,
       `out` is narrower than `text`, and CPython 3.12 refused such copies from a Latin-1 text into an ASCII
       one although the copied range was ASCII ("my·take" -> "mytake" raised SystemError; a test keeps it). */
    const int in_kind = PyUnicode_KIND(text);
    const int out_kind = PyUnicode_KIND(out);
    const void *in_data = PyUnicode_DATA(text);
    void *out_data = PyUnicode_DATA(out);
    Py_ssize_t pos = 0;
    Py_ssize_t at = 0;
    for (Py_ssize_t k = 0; k <= count; k++) {
        const Py_ssize_t stop = k < count ? edits->start[k] : n;
        if (in_kind == out_kind) {
            memcpy((char *)out_data + at * out_kind, (const char *)in_data + pos * in_kind,
                   (size_t)(stop - pos) * (size_t)in_kind);
            at += stop - pos;
        }
        else {
            for (Py_ssize_t i = pos; i < stop; i++) {
                PyUnicode_WRITE(out_kind, out_data, at, PyUnicode_READ(in_kind, in_data, i));
                at++;
            }
        }
        if (k < count) {
            if (edits->fold[k]) {
                PyUnicode_WRITE(out_kind, out_data, at, ' ');
                at++;
            }
            pos = edits->end[k];
        }
    }
    assert(at == n - removed);
    PyObject *lists[4] = {int_list(ns, count), int_list(ne, count), int_list(edits->start, count),
                          int_list(edits->end, count)};
    if (lists[0] && lists[1] && lists[2] && lists[3]) {
        result = PyTuple_Pack(5, out, lists[0], lists[1], lists[2], lists[3]);
    }
    for (int k = 0; k < 4; k++) {
        Py_XDECREF(lists[k]);
    }
done:
    Py_XDECREF(out);
    PyMem_Free(ns);
    return result;
}

PyDoc_STRVAR(compact_doc,
"compact(text, skip_chars, max_skip, cjk_letters, is_letter, /)\n--\n\n"
"The lowered `text` with its skip runs removed and space runs folded, as (derived text, ns, ne, rs, re)\n"
"for an OffsetMap; None when nothing changes. `skip_chars` must hold no letter, ideograph or control\n"
"whitespace; `cjk_letters`: RE2 calls every unified ideograph a letter; `is_letter(ch)`: RE2's \\pL for\n"
"any other non-ASCII neighbour of a run.");

static PyObject *
compact(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "compact() takes 5 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *text = args[0];
    PyObject *skip = args[1];
    if (!PyUnicode_Check(text) || !PyUnicode_Check(skip)) {
        PyErr_SetString(PyExc_TypeError, "compact(): text and skip_chars must be str");
        return NULL;
    }
    const Py_ssize_t max_skip = PyLong_AsSsize_t(args[2]);
    if (max_skip == -1 && PyErr_Occurred()) {
        return NULL;
    }
    const int cjk_letters = PyObject_IsTrue(args[3]);
    if (cjk_letters < 0) {
        return NULL;
    }
    PyObject *is_letter = args[4];
    if (!PyCallable_Check(is_letter)) {
        PyErr_SetString(PyExc_TypeError, "compact(): is_letter must be callable");
        return NULL;
    }
    SkipSet set;
    memset(&set, 0, sizeof(set));
    const int skind = PyUnicode_KIND(skip);
    const void *sdata = PyUnicode_DATA(skip);
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(skip); i++) {
        const Py_UCS4 c = PyUnicode_READ(skind, sdata, i);
        if (c < 128) {
            set.ascii_skip[c] = 1;
        }
        else if (set.n_wide < MAX_SKIP_CHARS) {
            set.wide_skip[set.n_wide++] = c;
        }
        else {
            PyErr_Format(PyExc_ValueError, "compact(): more than %d non-ASCII skip characters", MAX_SKIP_CHARS);
            return NULL;
        }
    }

    Edits edits = {NULL, NULL, NULL, 0, 0};
    Py_UCS4 maxchar = 0;
    PyObject *result = NULL;
    if (find_edits(text, &set, max_skip, cjk_letters, is_letter, &edits, &maxchar) < 0) {
        goto done;
    }
    if (edits.count == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = apply_edits(text, &edits, maxchar);
done:
    edits_free(&edits);
    return result;
}

static PyMethodDef methods[] = {
    {"compact", (PyCFunction)(void (*)(void))compact, METH_FASTCALL, compact_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "rules._compact",
    .m_doc = "The compact view's skip runs in one pass (see rules/normalize.py).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__compact(void)
{
    return PyModuleDef_Init(&module_def);
}
