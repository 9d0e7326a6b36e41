/* pfio.trace._native: the tracer's hot path for local files opened "rb", in C.
 *
 * Why it exists: tracing a loop of open + read + close of small local files costs, in pure
 * Python, a Python-level `read` override, the `open` wrapper's frame and its logic, a span
 * kept at close, the histogram fold and four clock reads as Python calls: 1.11-1.20x
 * (metrics) and 1.20-1.25x (spans) of the same loop untraced. This module does the same
 * work in C:
 *
 * - `CountedReader`: an `io.BufferedReader` subtype whose `read`, `read1`, `readline`,
 *   `readinto` and `readinto1` call the base's, time them on the clock of
 *   `time.perf_counter_ns`, and count them exactly as pfio.trace.files' `CountedReader`
 *   does (`stats.raw.append(ns)`, `stats.nbytes += n`, `compact()` at `RAW_LIMIT`
 *   durations), plus the file's own totals for its span. At the spans level (`_opened`
 *   set) `close` / `__exit__` close the file, then keep its span once, as pfio.trace.files'
 *   `SpannedReader` does. One type serves both levels, built directly (no Python subclass).
 * - `ReaderOpen`: the `open` wrapper's fast path (`fs.open(path, "rb")` in a thread already
 *   traced, not nested): it times building the reader, counts the open and tells the reader
 *   where to count. Any other call goes to the Python wrapper it was given.
 * - `fold`: stats.fold's logarithm per duration.
 *
 * pfio.trace.extension picks this module where it was built, the pure-Python path
 * otherwise; both record the same counts, histograms and spans (tests/trace run on both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* ---- configuration --------------------------------------------------------------------- */

/* pfio.trace.files' namespace, set once by configure(): RAW_LIMIT, MAX_SPANS and FILE_SPAN
 * are read from it at each use, as the Python path reads its globals. */
static PyObject *settings;

static PyObject *s_raw, *s_nbytes, *s_compact, *s_readers, *s_reader_stats, *s_recorder,
    *s_tls, *s_state, *s_depth, *s_spans, *s_dropped, *s_file, *s_raw_limit, *s_max_spans,
    *s_file_span;
static PyObject *zero;
static PyObject *buffered_read;  /* io.BufferedReader.read */
static PyObject *buffered_close;  /* io.BufferedReader.close */

/* The object named `key` in pfio.trace.files (borrowed), or NULL with an error set. */
static PyObject *
setting(PyObject *key)
{
    PyObject *value = settings ? PyDict_GetItemWithError(settings, key) : NULL;
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "pfio.trace._native: no %R configured", key);
    }
    return value;
}

/* The integer named `key` in pfio.trace.files, or -1 with an error set. */
static Py_ssize_t
limit(PyObject *key)
{
    PyObject *value = setting(key);
    return value ? PyLong_AsSsize_t(value) : -1;
}

/* A __slots__ attribute of a pfio class (OpStats, ThreadState), read and written through
 * its member descriptor's PyMemberDef for objects of exactly that class (no look-up in the
 * type: the same as Python's own access, a few times faster), by name for any other. */
typedef struct {
    const char *owner;  /* the class, by its name in pfio.trace.files */
    PyObject **name;
    PyTypeObject *type;  /* NULL until configure() found the member */
    PyObject *descr;  /* the member descriptor, which holds the member */
    PyMemberDef *member;
} Slot;

static Slot slot_raw = {"OpStats", &s_raw, NULL, NULL, NULL};
static Slot slot_nbytes = {"OpStats", &s_nbytes, NULL, NULL, NULL};
static Slot slot_depth = {"ThreadState", &s_depth, NULL, NULL, NULL};
static Slot slot_readers = {"ThreadState", &s_readers, NULL, NULL, NULL};
static Slot slot_spans = {"ThreadState", &s_spans, NULL, NULL, NULL};
static Slot slot_dropped = {"ThreadState", &s_dropped, NULL, NULL, NULL};
static Slot *const all_slots[] = {&slot_raw, &slot_nbytes, &slot_depth, &slot_readers,
                                  &slot_spans, &slot_dropped};

static PyObject *
get(PyObject *obj, Slot *slot)
{
    if (Py_TYPE(obj) == slot->type) {
        return PyMember_GetOne((const char *)obj, slot->member);
    }
    return PyObject_GetAttr(obj, *slot->name);
}

static int
set(PyObject *obj, Slot *slot, PyObject *value)
{
    if (Py_TYPE(obj) == slot->type) {
        return PyMember_SetOne((char *)obj, slot->member, value);
    }
    return PyObject_SetAttr(obj, *slot->name, value);
}

/* Find each slot's member in the classes of `namespace`. */
static int
find_slots(PyObject *namespace)
{
    for (size_t i = 0; i < sizeof(all_slots) / sizeof(all_slots[0]); i++) {
        Slot *slot = all_slots[i];
        PyObject *owner = PyDict_GetItemString(namespace, slot->owner);  /* borrowed */
        if (owner == NULL || !PyType_Check(owner)) {
            continue;  /* by name, then */
        }
        PyObject *descr = PyObject_GetAttr(owner, *slot->name);
        if (descr == NULL) {
            return -1;
        }
        if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            Py_XSETREF(slot->descr, descr);  /* (the member lives in it) */
            Py_XSETREF(slot->type, (PyTypeObject *)Py_NewRef(owner));
            slot->member = ((PyMemberDescrObject *)descr)->d_member;
        } else {
            Py_DECREF(descr);
        }
    }
    return 0;
}

/* obj.<slot> += n, for counters (ints). */
static int
add(PyObject *obj, Slot *slot, Py_ssize_t n)
{
    PyObject *value = get(obj, slot);
    if (value == NULL) {
        return -1;
    }
    PyObject *sum = NULL;
    int overflow = 1;
    long long now = PyLong_CheckExact(value) ? PyLong_AsLongLongAndOverflow(value, &overflow)
                                             : 0;
    if (!overflow && now <= LLONG_MAX - n) {
        sum = PyLong_FromLongLong(now + n);
    } else {  /* (not an int, or a big one: Python's addition) */
        PyObject *n_obj = PyLong_FromSsize_t(n);
        sum = n_obj ? PyNumber_InPlaceAdd(value, n_obj) : NULL;
        Py_XDECREF(n_obj);
    }
    Py_DECREF(value);
    if (sum == NULL) {
        return -1;
    }
    int done = set(obj, slot, sum);
    Py_DECREF(sum);
    return done;
}

static inline int64_t
now_ns(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t t;
    (void)PyTime_PerfCounterRaw(&t);
    return (int64_t)t;
#else
    return (int64_t)_PyTime_GetPerfCounter();  /* the clock of time.perf_counter_ns */
#endif
}

/* ---- Reader ---------------------------------------------------------------------------- */

/* What a Reader adds after io.BufferedReader's own fields (at reader_offset). */
typedef struct {
    PyObject *rs;  /* where reads are counted: an OpStats or a FileTotals */
    PyObject *st;  /* spans level: the ThreadState its span goes to */
    PyObject *scheme;
    PyObject *url;
    int64_t opened;  /* spans level: when it was opened; its span is kept once it is closed */
    char has_span;  /* a span is still to be kept at close */
    long long reads, read_bytes, read_ns;  /* the file's own totals, for its span */
} ReaderFields;

static PyTypeObject *reader_type;
static PyTypeObject *reader_base;  /* io.BufferedReader */
static Py_ssize_t reader_offset;

#define FIELDS(o) ((ReaderFields *)((char *)(o) + reader_offset))

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
    PyObject *raw = get(stats, &slot_raw);
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
    Py_ssize_t raw_limit = limit(s_raw_limit);
    if ((raw_limit == -1 && PyErr_Occurred()) || add(stats, &slot_nbytes, n) < 0) {
        return -1;
    }
    if (kept >= raw_limit) {
        PyObject *done = PyObject_CallMethodNoArgs(stats, s_compact);
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

static PyObject *buffered_read1, *buffered_readline, *buffered_readinto, *buffered_readinto1;

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
    PyObject *spans = get(r->st, &slot_spans);
    if (spans == NULL) {
        return -1;
    }
    Py_ssize_t kept = PyObject_Size(spans);
    if (kept < 0) {
        Py_DECREF(spans);
        return -1;
    }
    Py_ssize_t max_spans = limit(s_max_spans);
    PyObject *file_span = setting(s_file_span);
    if ((max_spans == -1 && PyErr_Occurred()) || file_span == NULL) {
        Py_DECREF(spans);
        return -1;
    }
    if (kept >= max_spans) {
        Py_DECREF(spans);
        return add(r->st, &slot_dropped, 1);
    }
    PyObject *span = Py_BuildValue("(OOLLOOOLLLOOO)", s_file, s_file, (long long)r->opened,
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

static int
make_reader_type(PyObject *module)
{
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
    reader_offset = (reader_base->tp_basicsize + align - 1) / align * align;
    for (PyMemberDef *m = reader_members; m->name != NULL; m++) {
        m->offset += reader_offset;
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
        .basicsize = (int)(reader_offset + sizeof(ReaderFields)),
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
        .slots = slots,
    };
    reader_type = (PyTypeObject *)PyType_FromSpecWithBases(&spec, base);
    if (reader_type == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "CountedReader", (PyObject *)reader_type);
}

/* ---- ReaderOpen ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;  /* (functools.wraps writes __name__, __wrapped__, ... here) */
    PyObject *slow;  /* the Python wrapper: every call but the fast path */
    PyObject *hook;  /* pfio.trace.hook's namespace (its _recorder) */
    PyObject *op;
    PyObject *scheme;
    PyObject *rb;  /* "rb" */
    PyObject *os_path;  /* os_path(fs, path) -> the OS path */
    PyObject *build;  /* build(os_path, cls) -> the reader */
    PyObject *cls;  /* the reader class: a Reader subclass */
    PyObject *failed;  /* failed(rec, st, fs, op, start, path): count a failed open */
    PyObject *rec, *tls;  /* the last recorder seen, and its thread-local states */
    int spans;  /* the spans level: the reader keeps its span */
} ReaderOpen;

#define OPEN_OBJECTS(X) X(dict) X(slow) X(hook) X(op) X(scheme) X(rb) X(os_path) X(build) \
    X(cls) X(failed) X(rec) X(tls)

static PyObject *
open_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    ReaderOpen *w = (ReaderOpen *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 || kwnames != NULL) {
        return PyObject_Vectorcall(w->slow, args, nargsf, kwnames);
    }
    PyObject *fs = args[0], *path = args[1];
    int other = PyObject_RichCompareBool(args[2], w->rb, Py_NE);
    if (other < 0) {
        return NULL;
    }
    PyObject *rec = PyDict_GetItemWithError(w->hook, s_recorder);  /* borrowed */
    if (other || rec == NULL || rec == Py_None) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return PyObject_Vectorcall(w->slow, args, nargsf, kwnames);
    }
    Py_INCREF(rec);
    PyObject *tls;
    if (rec == w->rec) {
        tls = Py_NewRef(w->tls);
    } else if ((tls = PyObject_GetAttr(rec, s_tls)) != NULL) {  /* (set once, by __init__) */
        Py_XSETREF(w->rec, Py_NewRef(rec));
        Py_XSETREF(w->tls, Py_NewRef(tls));
    }
    PyObject *st = tls ? PyObject_GetAttr(tls, s_state) : NULL;
    Py_XDECREF(tls);
    PyObject *depth = st ? get(st, &slot_depth) : NULL;
    int nested = depth ? PyObject_IsTrue(depth) : -1;
    Py_XDECREF(depth);
    if (nested != 0) {  /* nested, or the thread's first call (no state yet): the long way */
        Py_DECREF(rec);
        Py_XDECREF(st);
        if (nested < 0) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                return NULL;
            }
            PyErr_Clear();
        }
        return PyObject_Vectorcall(w->slow, args, nargsf, kwnames);
    }
    int64_t start = now_ns();
    PyObject *f = NULL, *name = NULL;
    PyObject *call[2] = {fs, path};
    name = PyObject_Vectorcall(w->os_path, call, 2, NULL);
    if (name != NULL) {
        call[0] = name;
        call[1] = w->cls;
        f = PyObject_Vectorcall(w->build, call, 2, NULL);
    }
    if (f == NULL) {  /* count the failed open, then raise its error */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *start_obj = PyLong_FromLongLong(start);
        PyObject *done = start_obj ? PyObject_CallFunctionObjArgs(
            w->failed, rec, st, fs, w->op, start_obj, path, NULL) : NULL;
        Py_XDECREF(start_obj);
        if (done != NULL) {
            Py_DECREF(done);
            PyErr_Restore(type, value, tb);
        } else {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
        goto fail;
    }
    int64_t ns = now_ns() - start;
    if (!PyObject_TypeCheck(f, reader_type)) {
        PyErr_SetString(PyExc_TypeError, "the reader is not a pfio.trace._native.CountedReader");
        goto fail;
    }
    /* raw, opens, rs = st.readers[scheme] (or st.reader_stats(scheme)) */
    PyObject *readers = get(st, &slot_readers);
    if (readers == NULL) {
        goto fail;
    }
    PyObject *found = PyDict_GetItemWithError(readers, w->scheme);
    Py_XINCREF(found);
    Py_DECREF(readers);
    if (found == NULL) {
        if (PyErr_Occurred()) {
            goto fail;
        }
        found = PyObject_CallMethodOneArg(st, s_reader_stats, w->scheme);
        if (found == NULL) {
            goto fail;
        }
    }
    if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != 3) {
        PyErr_SetString(PyExc_TypeError, "ThreadState.readers holds (raw, opens, reads)");
        Py_DECREF(found);
        goto fail;
    }
    ReaderFields *r = FIELDS(f);
    Py_XSETREF(r->rs, Py_NewRef(PyTuple_GET_ITEM(found, 2)));
    PyObject *raw = PyTuple_GET_ITEM(found, 0);
    PyObject *ns_obj = PyLong_FromLongLong(ns);
    if (ns_obj == NULL || PyList_Append(raw, ns_obj) < 0) {
        Py_XDECREF(ns_obj);
        Py_DECREF(found);
        goto fail;
    }
    Py_DECREF(ns_obj);
    Py_ssize_t raw_limit = limit(s_raw_limit);
    if (raw_limit == -1 && PyErr_Occurred()) {
        Py_DECREF(found);
        goto fail;
    }
    if (PyList_GET_SIZE(raw) >= raw_limit) {
        PyObject *done = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(found, 1), s_compact);
        if (done == NULL) {
            Py_DECREF(found);
            goto fail;
        }
        Py_DECREF(done);
    }
    Py_DECREF(found);
    if (w->spans) {
        Py_XSETREF(r->st, Py_NewRef(st));
        Py_XSETREF(r->scheme, Py_NewRef(w->scheme));
        Py_XSETREF(r->url, Py_NewRef(name));  /* local files: the OS path is the URL */
        r->opened = start;
        r->has_span = 1;
        r->reads = r->read_bytes = r->read_ns = 0;
    }
    Py_DECREF(name);
    Py_DECREF(st);
    Py_DECREF(rec);
    return f;
fail:
    Py_XDECREF(f);
    Py_XDECREF(name);
    Py_DECREF(st);
    Py_DECREF(rec);
    return NULL;
}

static PyObject *
open_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"slow", "hook", "op", "scheme", "os_path", "build", "cls", "failed",
                            "spans", NULL};
    PyObject *slow, *hook, *op, *scheme, *os_path, *build, *cls, *failed;
    int spans;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!UUOOO!Op:ReaderOpen", names, &slow,
                                     &PyDict_Type, &hook, &op, &scheme, &os_path, &build,
                                     &PyType_Type, &cls, &failed, &spans)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)cls, reader_type)) {
        PyErr_SetString(PyExc_TypeError,
                        "cls must be a subclass of pfio.trace._native.CountedReader");
        return NULL;
    }
    ReaderOpen *w = (ReaderOpen *)type->tp_alloc(type, 0);
    if (w == NULL) {
        return NULL;
    }
    w->vectorcall = open_vectorcall;
    w->dict = PyDict_New();
    if (w->dict == NULL) {
        Py_DECREF(w);
        return NULL;
    }
    w->slow = Py_NewRef(slow);
    w->hook = Py_NewRef(hook);
    w->op = Py_NewRef(op);
    w->scheme = Py_NewRef(scheme);
    w->rb = PyUnicode_InternFromString("rb");
    w->os_path = Py_NewRef(os_path);
    w->build = Py_NewRef(build);
    w->cls = Py_NewRef(cls);
    w->failed = Py_NewRef(failed);
    w->spans = spans;
    if (w->rb == NULL) {
        Py_DECREF(w);
        return NULL;
    }
    return (PyObject *)w;
}

static int
open_traverse(ReaderOpen *w, visitproc visit, void *arg)
{
#define VISIT(name) Py_VISIT(w->name);
    OPEN_OBJECTS(VISIT)
#undef VISIT
    return 0;
}

static int
open_clear(ReaderOpen *w)
{
#define CLEAR(name) Py_CLEAR(w->name);
    OPEN_OBJECTS(CLEAR)
#undef CLEAR
    return 0;
}

static void
open_dealloc(ReaderOpen *w)
{
    PyObject_GC_UnTrack(w);
    open_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* fs.open: bound to fs like a function (LOAD_METHOD skips this: METHOD_DESCRIPTOR). */
static PyObject *
open_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static PyObject *
open_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call(self, args, kwargs);
}

static PyGetSetDef open_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject open_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pfio.trace._native.CountedReaderOpen",
    .tp_doc = "FS.open while tracing: the fast path of a local file opened \"rb\" "
              "(see the module).",
    .tp_basicsize = sizeof(ReaderOpen),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = open_new,
    .tp_dealloc = (destructor)open_dealloc,
    .tp_traverse = (traverseproc)open_traverse,
    .tp_clear = (inquiry)open_clear,
    .tp_call = open_call,
    .tp_vectorcall_offset = offsetof(ReaderOpen, vectorcall),
    .tp_descr_get = open_get,
    .tp_dictoffset = offsetof(ReaderOpen, dict),
    .tp_getset = open_getset,
};

/* ---- fold ------------------------------------------------------------------------------ */

#define SUB 16  /* stats._SUB: buckets per power of two */
#define BUCKETS (SUB * 64)

/* fold(hist, raw) -> bool: stats.fold's logarithm per duration, in C. */
static PyObject *
fold(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyDict_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fold(hist: dict, raw: list)");
        return NULL;
    }
    PyObject *hist = args[0], *raw = args[1];
    Py_ssize_t counts[BUCKETS] = {0};
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(raw); i++) {
        PyObject *item = PyList_GET_ITEM(raw, i);
        if (!PyLong_CheckExact(item)) {
            Py_RETURN_FALSE;  /* left to the Python path, hist untouched */
        }
        int overflow;
        long long d = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (overflow || d < 0 || d >= (1LL << 62)) {
            Py_RETURN_FALSE;
        }
        /* int(log2(d + 1) * 16), as stats.fold computes it (d + 1 as the nearest double,
         * as math.log2 converts an int) */
        counts[(Py_ssize_t)(log2((double)(d + 1)) * SUB)] += 1;
    }
    for (Py_ssize_t index = 0; index < BUCKETS; index++) {  /* new buckets in order, as Python */
        if (!counts[index]) {
            continue;
        }
        PyObject *key = PyLong_FromSsize_t(index);
        PyObject *had = key ? PyDict_GetItemWithError(hist, key) : NULL;  /* borrowed */
        PyObject *add = PyLong_FromSsize_t(counts[index]);
        PyObject *sum = NULL;
        if (add != NULL && !PyErr_Occurred()) {
            sum = had ? PyNumber_Add(had, add) : Py_NewRef(add);
        }
        int set = sum ? PyDict_SetItem(hist, key, sum) : -1;
        Py_XDECREF(key);
        Py_XDECREF(add);
        Py_XDECREF(sum);
        if (set < 0) {
            return NULL;
        }
    }
    Py_RETURN_TRUE;
}

/* ---- module ---------------------------------------------------------------------------- */

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *namespace)
{
    if (!PyDict_Check(namespace)) {
        PyErr_SetString(PyExc_TypeError, "configure() takes pfio.trace.files' namespace");
        return NULL;
    }
    if (find_slots(namespace) < 0) {
        return NULL;
    }
    Py_XSETREF(settings, Py_NewRef(namespace));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"fold", (PyCFunction)(void (*)(void))fold, METH_FASTCALL,
     "fold(hist, raw) -> bool: stats.fold of durations that are all ints from 0 to 2**62 "
     "(False, hist untouched, for any other list: the Python path folds it)."},
    {"configure", configure, METH_O,
     "configure(namespace): where RAW_LIMIT, MAX_SPANS and FILE_SPAN are read at each use "
     "(pfio.trace.files' globals, as the Python path reads them)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pfio.trace._native",
    "The tracer's hot path for local files opened \"rb\", in C.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    static const char *const words[] = {"raw", "nbytes", "compact", "readers", "reader_stats",
                                        "_recorder", "tls", "state", "depth", "spans",
                                        "dropped", "file", "RAW_LIMIT", "MAX_SPANS",
                                        "FILE_SPAN"};
    PyObject **interned[] = {&s_raw, &s_nbytes, &s_compact, &s_readers, &s_reader_stats,
                             &s_recorder, &s_tls, &s_state, &s_depth, &s_spans, &s_dropped,
                             &s_file, &s_raw_limit, &s_max_spans, &s_file_span};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if ((*interned[i] = PyUnicode_InternFromString(words[i])) == NULL) {
            return NULL;
        }
    }
    zero = PyLong_FromLong(0);
    if (zero == NULL || PyType_Ready(&open_type) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (make_reader_type(module) < 0 ||
        PyModule_AddObjectRef(module, "ReaderOpen", (PyObject *)&open_type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
