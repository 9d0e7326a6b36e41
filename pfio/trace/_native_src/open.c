/* pfio.trace._native's ReaderOpen: FS.open wrapped for tracing, whose fast path (a local
 * file opened "rb" in a thread already traced, not nested) builds a CountedReader, times and
 * counts the open, and tells the reader where to count; any other call goes to the Python
 * wrapper it was given. See native.h. */
#include "native.h"

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
    PyObject *rec = PyDict_GetItemWithError(w->hook, pfio_trace_names.recorder);  /* borrowed */
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
    } else if ((tls = PyObject_GetAttr(rec, pfio_trace_names.tls)) != NULL) {
        /* (set once, by __init__) */
        Py_XSETREF(w->rec, Py_NewRef(rec));
        Py_XSETREF(w->tls, Py_NewRef(tls));
    }
    PyObject *st = tls ? PyObject_GetAttr(tls, pfio_trace_names.state) : NULL;
    Py_XDECREF(tls);
    PyObject *depth = st ? get(st, &pfio_trace_slot_depth) : NULL;
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
    if (!PyObject_TypeCheck(f, pfio_trace_reader_type)) {
        PyErr_SetString(PyExc_TypeError, "the reader is not a pfio.trace._native.CountedReader");
        goto fail;
    }
    /* raw, opens, rs = st.readers[scheme] (or st.reader_stats(scheme)) */
    PyObject *readers = get(st, &pfio_trace_slot_readers);
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
        found = PyObject_CallMethodOneArg(st, pfio_trace_names.reader_stats, w->scheme);
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
    Py_ssize_t raw_limit = pfio_trace_limit(pfio_trace_names.raw_limit);
    if (raw_limit == -1 && PyErr_Occurred()) {
        Py_DECREF(found);
        goto fail;
    }
    if (PyList_GET_SIZE(raw) >= raw_limit) {
        PyObject *done = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(found, 1),
                                                   pfio_trace_names.compact);
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
    if (!PyType_IsSubtype((PyTypeObject *)cls, pfio_trace_reader_type)) {
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

int
pfio_trace_add_open_type(PyObject *module)
{
    if (PyType_Ready(&open_type) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "ReaderOpen", (PyObject *)&open_type);
}
