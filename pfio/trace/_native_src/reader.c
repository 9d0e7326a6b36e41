/* pfio.trace._native's CountedReader: an io.BufferedReader subtype whose reads are timed
 * and counted (read, read1, readline, readinto, readinto1), and which keeps its span at
 * close at the spans level; the type is made at import, after io.BufferedReader's fields.
 * See native.h. */
#include "native.h"

static PyObject *zero;
static PyObject *buffered_read;  /* io.BufferedReader.read */
static PyObject *buffered_close;  /* io.BufferedReader.close */
static PyObject *buffered_read1, *buffered_readline, *buffered_readinto, *buffered_readinto1;

PyTypeObject *pfio_trace_reader_type;
static PyTypeObject *reader_base;  /* io.BufferedReader */
Py_ssize_t pfio_trace_reader_offset;

static int
reader_traverse(PyObject *self, visitproc visit, void *arg)
{
    ReaderFields *r = FIELDS(self);
    Py_VISIT(r->rs);
    Py_VISIT(r->st);
    Py_VISIT(r->scheme);
    Py_VISIT(r->url);
    if (!(reader_base->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        Py_VISIT(Py_TYPE(self));  /* a heap type's instances visit it; a static base does not */
    }
    return reader_base->tp_traverse(self, visit, arg);
}

static int
reader_clear(PyObject *self)
{
    ReaderFields *r = FIELDS(self);
    Py_CLEAR(r->rs);
    Py_CLEAR(r->st);
    Py_CLEAR(r->scheme);
    Py_CLEAR(r->url);
    return reader_base->tp_clear(self);
}

static void
reader_dealloc(PyObject *self)
{
    /* the finalizer first (it closes the file, keeping its span, while the fields are set);
     * a no-op where a Python subclass's dealloc has run it already */
    PyTypeObject *type = Py_TYPE(self);
    if (PyObject_CallFinalizerFromDealloc(self) < 0) {
        return;  /* resurrected */
    }
    ReaderFields *r = FIELDS(self);
    Py_CLEAR(r->rs);
    Py_CLEAR(r->st);
    Py_CLEAR(r->scheme);
    Py_CLEAR(r->url);
    reader_base->tp_dealloc(self);
    if (!(reader_base->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        Py_DECREF(type);  /* a static base's dealloc does not release the heap type */
    }
}

/* stats.raw.append(ns); stats.nbytes += n; compact at raw_limit: the Python tally. */
static int
tally(PyObject *stats, int64_t ns, Py_ssize_t n)
{
    PyObject *raw = get(stats, &pfio_trace_slot_raw);
    if (raw == NULL) {
        return -1;
    }
    PyObject *ns_obj = PyLong_FromLongLong(ns);
    if (ns_obj == NULL || PyList_Append(raw, ns_obj) < 0) {
        Py_XDECREF(ns_obj);
        Py_DECREF(raw);
        return -1;
    }
    Py_DECREF(ns_obj);
    Py_ssize_t kept = PyList_GET_SIZE(raw);
    Py_DECREF(raw);
    Py_ssize_t raw_limit = pfio_trace_limit(pfio_trace_names.raw_limit);
    if ((raw_limit == -1 && PyErr_Occurred()) ||
        pfio_trace_add(stats, &pfio_trace_slot_nbytes, n) < 0) {
        return -1;
    }
    if (kept >= raw_limit) {
        PyObject *done = PyObject_CallMethodNoArgs(stats, pfio_trace_names.compact);
        if (done == NULL) {
            return -1;
        }
        Py_DECREF(done);
    }
    return 0;
}

/* Call `method` (the base's) with `self` and `args`, time it, count it; `nbytes` says how
 * many bytes its result stands for. */
static PyObject *
timed(PyObject *method, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
      Py_ssize_t (*nbytes)(PyObject *))
{
    PyObject *call[2] = {self, nargs ? args[0] : NULL};
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "expected at most 1 argument, got %zd", nargs);
        return NULL;
    }
    ReaderFields *r = FIELDS(self);
    int64_t start = now_ns();
    PyObject *result = PyObject_Vectorcall(method, call, 1 + nargs, NULL);
    if (result == NULL) {
        return NULL;
    }
    int64_t ns = now_ns() - start;
    Py_ssize_t n = nbytes(result);
    if (n < 0) {
        Py_DECREF(result);
        return NULL;
    }
    r->reads += 1;
    r->read_bytes += n;
    r->read_ns += ns;
    if (r->rs == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_rs");
        Py_DECREF(result);
        return NULL;
    }
    PyObject *stats = Py_NewRef(r->rs);  /* (compact() may run Python code) */
    int counted = tally(stats, ns, n);
    Py_DECREF(stats);
    if (counted < 0) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static Py_ssize_t
length(PyObject *data)
{
    return PyObject_Size(data);
}

/* readinto's result: bytes read, or None (0) */
static Py_ssize_t
filled(PyObject *n)
{
    return n == Py_None ? 0 : PyNumber_AsSsize_t(n, PyExc_OverflowError);
}

/* read(size=-1): the base's read, timed and counted (size may be named, as in Python). */
static PyObject *
reader_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t named = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + named > 1) {
        PyErr_Format(PyExc_TypeError, "read() takes at most 1 argument (%zd given)",
                     nargs + named);
        return NULL;
    }
    if (named && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "size") != 0) {
        PyErr_Format(PyExc_TypeError, "read() got an unexpected keyword argument '%U'",
                     PyTuple_GET_ITEM(kwnames, 0));
        return NULL;
    }
    return timed(buffered_read, self, args, nargs + named, length);
}

static PyObject *
reader_read1(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return timed(buffered_read1, self, args, nargs, length);
}

static PyObject *
reader_readline(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return timed(buffered_readline, self, args, nargs, length);
}

static PyObject *
reader_readinto(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return timed(buffered_readinto, self, args, nargs, filled);
}

static PyObject *
reader_readinto1(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return timed(buffered_readinto1, self, args, nargs, filled);
}

/* Keep the file's span in its thread's spans (or count it as dropped). */
static int
keep_span(ReaderFields *r, int64_t end)
{
    PyObject *spans = get(r->st, &pfio_trace_slot_spans);
    if (spans == NULL) {
        return -1;
    }
    Py_ssize_t kept = PyObject_Size(spans);
    if (kept < 0) {
        Py_DECREF(spans);
        return -1;
    }
    Py_ssize_t max_spans = pfio_trace_limit(pfio_trace_names.max_spans);
    PyObject *file_span = pfio_trace_setting(pfio_trace_names.file_span);
    if ((max_spans == -1 && PyErr_Occurred()) || file_span == NULL) {
        Py_DECREF(spans);
        return -1;
    }
    if (kept >= max_spans) {
        Py_DECREF(spans);
        return pfio_trace_add(r->st, &pfio_trace_slot_dropped, 1);
    }
    PyObject *file = pfio_trace_names.file;
    PyObject *span = Py_BuildValue("(OOLLOOOLLLOOO)", file, file, (long long)r->opened,
                                   (long long)(end - r->opened), file_span, r->scheme, r->url,
                                   r->reads, r->read_bytes, r->read_ns, Py_None, zero, zero);
    if (span != NULL) {
        /* strings, ints and None: no cycle to find, as the collector would learn at its
         * first pass over it (recorder.py keeps spans such tuples for this reason) */
        PyObject_GC_UnTrack(span);
    }
    int appended = span ? PyList_Append(spans, span) : -1;
    Py_XDECREF(span);
    Py_DECREF(spans);
    return appended;
}

/* close: close the file, then keep its span (at the spans level, once). */
static PyObject *
reader_close(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    ReaderFields *r = FIELDS(self);
    if (!r->has_span) {
        return PyObject_CallOneArg(buffered_close, self);
    }
    r->has_span = 0;
    PyObject *closed = PyObject_CallOneArg(buffered_close, self);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);  /* an error closing: kept, raised after the span */
    int64_t end = now_ns();
    if (r->st == NULL || r->scheme == NULL || r->url == NULL || keep_span(r, end) < 0) {
        /* as the Python close: a TypeError or AttributeError (interpreter shutdown, modules
         * torn down) costs the span, anything else is raised */
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
        } else {
            Py_XDECREF(closed);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return NULL;
        }
    }
    if (type != NULL) {
        PyErr_Restore(type, value, tb);
        Py_XDECREF(closed);
        return NULL;
    }
    if (closed == NULL) {
        return NULL;
    }
    Py_DECREF(closed);
    Py_RETURN_NONE;
}

/* __exit__(*args): close() (never swallows the error), as io.IOBase's. */
static PyObject *
reader_exit(PyObject *self, PyObject *const *Py_UNUSED(args), Py_ssize_t Py_UNUSED(nargs))
{
    return reader_close(self, NULL);
}

static PyObject *
reader_get_opened(PyObject *self, void *Py_UNUSED(closure))
{
    ReaderFields *r = FIELDS(self);
    if (!r->has_span) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLongLong(r->opened);
}

static int
reader_set_opened(PyObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    ReaderFields *r = FIELDS(self);
    if (value == NULL || value == Py_None) {
        r->has_span = 0;
        return 0;
    }
    long long opened = PyLong_AsLongLong(value);
    if (opened == -1 && PyErr_Occurred()) {
        return -1;
    }
    r->opened = opened;
    r->has_span = 1;
    return 0;
}

#define FAST(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
static PyMethodDef reader_methods[] = {
    {"read", FAST(reader_read) | METH_KEYWORDS, "read(size=-1): timed and counted."},
    {"read1", FAST(reader_read1), "read1(size=-1): timed and counted."},
    {"readline", FAST(reader_readline), "readline(size=-1): timed and counted."},
    {"readinto", FAST(reader_readinto), "readinto(buffer): timed and counted."},
    {"readinto1", FAST(reader_readinto1), "readinto1(buffer): timed and counted."},
    {"close", reader_close, METH_NOARGS, "close(); at the spans level, keep the span (once)."},
    {"__exit__", FAST(reader_exit), "__exit__(*args): close()."},
    {NULL, NULL, 0, NULL},
};
#undef FAST

static PyGetSetDef reader_getset[] = {
    {"_opened", reader_get_opened, reader_set_opened,
     "when the file was opened (perf_counter ns); None once its span is kept", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* The members' offsets are only known at import (after io.BufferedReader's fields). */
static PyMemberDef reader_members[] = {
    {"_rs", T_OBJECT_EX, offsetof(ReaderFields, rs), 0, "where reads are counted"},
    {"_st", T_OBJECT_EX, offsetof(ReaderFields, st), 0, "the ThreadState of its span"},
    {"_scheme", T_OBJECT_EX, offsetof(ReaderFields, scheme), 0, "its scheme"},
    {"_url", T_OBJECT_EX, offsetof(ReaderFields, url), 0, "the URL of its span"},
    {"_reads", T_LONGLONG, offsetof(ReaderFields, reads), 0, "reads made"},
    {"_read_bytes", T_LONGLONG, offsetof(ReaderFields, read_bytes), 0, "bytes read"},
    {"_read_ns", T_LONGLONG, offsetof(ReaderFields, read_ns), 0, "time spent reading"},
    {NULL, 0, 0, 0, NULL},
};

int
pfio_trace_add_reader_type(PyObject *module)
{
    zero = PyLong_FromLong(0);
    if (zero == NULL) {
        return -1;
    }
    PyObject *io = PyImport_ImportModule("io");
    if (io == NULL) {
        return -1;
    }
    PyObject *base = PyObject_GetAttrString(io, "BufferedReader");
    Py_DECREF(io);
    if (base == NULL) {
        return -1;
    }
    reader_base = (PyTypeObject *)base;  /* (kept: the type holds it too) */
    buffered_read = PyObject_GetAttrString(base, "read");
    buffered_read1 = PyObject_GetAttrString(base, "read1");
    buffered_readline = PyObject_GetAttrString(base, "readline");
    buffered_readinto = PyObject_GetAttrString(base, "readinto");
    buffered_readinto1 = PyObject_GetAttrString(base, "readinto1");
    buffered_close = PyObject_GetAttrString(base, "close");
    if (buffered_read == NULL || buffered_read1 == NULL || buffered_readline == NULL ||
        buffered_readinto == NULL || buffered_readinto1 == NULL || buffered_close == NULL) {
        return -1;
    }
    Py_ssize_t align = _Alignof(ReaderFields);
    pfio_trace_reader_offset = (reader_base->tp_basicsize + align - 1) / align * align;
    for (PyMemberDef *m = reader_members; m->name != NULL; m++) {
        m->offset += pfio_trace_reader_offset;
    }
    PyType_Slot slots[] = {
        {Py_tp_doc, "A local file opened \"rb\" while tracing: an io.BufferedReader whose "
                    "reads count (see the module)."},
        {Py_tp_traverse, reader_traverse},
        {Py_tp_clear, reader_clear},
        {Py_tp_dealloc, reader_dealloc},
        {Py_tp_methods, reader_methods},
        {Py_tp_members, reader_members},
        {Py_tp_getset, reader_getset},
        {0, NULL},
    };
    PyType_Spec spec = {
        .name = "pfio.trace._native.CountedReader",
        .basicsize = (int)(pfio_trace_reader_offset + sizeof(ReaderFields)),
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
        .slots = slots,
    };
    pfio_trace_reader_type = (PyTypeObject *)PyType_FromSpecWithBases(&spec, base);
    if (pfio_trace_reader_type == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "CountedReader",
                                 (PyObject *)pfio_trace_reader_type);
}
