/* pfio.trace._native, the module: `fold` (stats.fold's logarithm per duration) and the
 * module's init, which interns the names and adds the types CountedReader (reader.c) and
 * ReaderOpen (open.c). See native.h. */
#include "native.h"

#include <math.h>

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

static PyMethodDef module_methods[] = {
    {"fold", (PyCFunction)(void (*)(void))fold, METH_FASTCALL,
     "fold(hist, raw) -> bool: stats.fold of durations that are all ints from 0 to 2**62 "
     "(False, hist untouched, for any other list: the Python path folds it)."},
    {"configure", pfio_trace_configure, METH_O,
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
    if (pfio_trace_intern_names() < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (pfio_trace_add_reader_type(module) < 0 || pfio_trace_add_open_type(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
