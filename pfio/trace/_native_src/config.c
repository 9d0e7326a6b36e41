/* pfio.trace._native's configuration: pfio.trace.files' namespace (set by configure()), the
 * settings read from it at each use, the names interned at import, and the slots of pfio's
 * classes (OpStats, ThreadState) read and counted through their members. See native.h. */
#include "native.h"

#include <limits.h>

/* pfio.trace.files' namespace, set once by configure(): RAW_LIMIT, MAX_SPANS and FILE_SPAN
 * are read from it at each use, as the Python path reads its globals. */
static PyObject *settings;

PfioTraceNames pfio_trace_names;

int
pfio_trace_intern_names(void)
{
#define INTERN(field, text) \
    if ((pfio_trace_names.field = PyUnicode_InternFromString(text)) == NULL) { \
        return -1; \
    }
    PFIO_TRACE_NAMES(INTERN)
#undef INTERN
    return 0;
}

PyObject *
pfio_trace_setting(PyObject *key)
{
    PyObject *value = settings ? PyDict_GetItemWithError(settings, key) : NULL;
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "pfio.trace._native: no %R configured", key);
    }
    return value;
}

Py_ssize_t
pfio_trace_limit(PyObject *key)
{
    PyObject *value = pfio_trace_setting(key);
    return value ? PyLong_AsSsize_t(value) : -1;
}

Slot pfio_trace_slot_raw = {"OpStats", &pfio_trace_names.raw, NULL, NULL, NULL};
Slot pfio_trace_slot_nbytes = {"OpStats", &pfio_trace_names.nbytes, NULL, NULL, NULL};
Slot pfio_trace_slot_depth = {"ThreadState", &pfio_trace_names.depth, NULL, NULL, NULL};
Slot pfio_trace_slot_readers = {"ThreadState", &pfio_trace_names.readers, NULL, NULL, NULL};
Slot pfio_trace_slot_spans = {"ThreadState", &pfio_trace_names.spans, NULL, NULL, NULL};
Slot pfio_trace_slot_dropped = {"ThreadState", &pfio_trace_names.dropped, NULL, NULL, NULL};
static Slot *const all_slots[] = {&pfio_trace_slot_raw, &pfio_trace_slot_nbytes,
                                  &pfio_trace_slot_depth, &pfio_trace_slot_readers,
                                  &pfio_trace_slot_spans, &pfio_trace_slot_dropped};

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

int
pfio_trace_add(PyObject *obj, Slot *slot, Py_ssize_t n)
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

PyObject *
pfio_trace_configure(PyObject *Py_UNUSED(module), PyObject *namespace)
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
